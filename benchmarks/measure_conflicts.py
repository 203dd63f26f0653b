"""Measure the offline conflict check on the RGB fact sets, without the loop.

For each set, every question gets the top-k whole documents by BM25 as its evidence windows, and
the rate of questions with at least one ``conflict`` verdict from the rule-based adjudicator is
printed. On the falsified sets (true and falsified passages side by side) that rate should be
high; on the clean control sets it counts false conflicts and should be near zero. The rate is
capped by retrieval: a question whose top k misses one side cannot show a conflict.

    .venv/bin/python benchmarks/measure_conflicts.py [--eval-dir DIR] [-k 5] [--show N]

A tuning aid: the real figures come from ``evloop eval`` on the full loop.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import bm25s

from evidence_loop.agent.tuning.evaluate import read_questions
from evidence_loop.policies.conflicts.adjudication import adjudicate_by_rules, conflict_outcome
from evidence_loop.policies.conflicts.candidates import find_candidates
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.types import EvidenceView
from evidence_loop.tools.parse.sources import read_corpus_jsonl
from evidence_loop.tools.tokenize import index_tokens
from evidence_loop.tools.types import DocumentInput

SETS = ("rgb_fact_zh", "rgb_fact_en", "rgb_fact_zh_clean", "rgb_fact_en_clean")


def views_for(docs: Sequence[DocumentInput], indices: Sequence[int]) -> list[EvidenceView]:
    """Whole documents as evidence windows, ids in rank order."""
    out = []
    for rank, index in enumerate(indices):
        doc = docs[index]
        out.append(
            EvidenceView(
                evidence_id=f"e{rank + 1}",
                doc_id=doc.doc_id,
                version=doc.version,
                is_current=True,
                section=(),
                start=0,
                end=len(doc.text),
                text=doc.text,
            )
        )
    return out


def measure(set_dir: Path, k: int, show: int) -> tuple[int, int]:
    """(questions with a conflict verdict, questions) for one set."""
    docs = read_corpus_jsonl(set_dir / "corpus.jsonl")
    questions = read_questions(set_dir / "questions.jsonl")
    retriever = bm25s.BM25()
    retriever.index([index_tokens(doc.text) for doc in docs], show_progress=False)
    hits = 0
    for question in questions:
        text = str(question["question"])
        indices, _ = retriever.retrieve([index_tokens(text)], k=k, show_progress=False)
        views = views_for(docs, [int(i) for i in indices[0]])
        scan = find_candidates(analyse(text), views)
        verdicts = [adjudicate_by_rules(candidate, views) for candidate in scan.candidates]
        if conflict_outcome(verdicts):
            hits += 1
            if show:
                show -= 1
                first = next(v for v in verdicts if v.verdict == "conflict").candidate
                print(
                    f"  {question['id']} {text} | {first.kind} {first.slot!r}: "
                    f"{first.left.value!r} vs {first.right.value!r}"
                )
    return hits, len(questions)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--eval-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval"
    )
    parser.add_argument("-k", type=int, default=5, help="documents per question (default 5)")
    parser.add_argument("--show", type=int, default=0, help="print the first N conflicts of each set")
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    args = parser.parse_args(argv)
    for name in args.sets:
        set_dir = args.eval_dir / name
        if not set_dir.is_dir():
            print(f"{name}: missing ({set_dir})", file=sys.stderr)
            continue
        hits, total = measure(set_dir, args.k, args.show)
        print(f"{name}: conflict rate {hits / total:.2f} ({hits}/{total}), k={args.k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
