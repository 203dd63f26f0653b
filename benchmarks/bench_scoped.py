"""What statistics over what the caller may read cost: seed recall and the loop, scoped or not.

    .venv/bin/python benchmarks/bench_scoped.py [SET_DIR ...] [--k 12] [--every 3] [--max-questions N]

For each evaluation set (default: rgb_fact_en_clean and tara_zh in ../shared/eval beside the clone,
or in EVLOOP_EVAL_DIR; absent sets are skipped) the script ingests ``corpus.jsonl`` with every
``--every``-th document restricted to the group ``staff``, then times every question four ways, after
one untimed pass over them all, interleaved per question in a rotating order:

a. direct: ``snapshot.search(q, k, groups=["staff"])``: the caller reads everything, so the
   snapshot takes the direct path (bm25s's own scores), as for a corpus without restrictions;
b. scoped: ``snapshot.search(q, k)`` for a public caller: unit and passage scores recomputed over
   the readable rows (``RecallIndex.scores(tokens, rows)``), spelling over the readable vocabulary;
c. masked: ``snapshot.search(q, k, scoped=False)``: whole-corpus scores times the ACL mask, what a
   public caller got before (kept for replaying runs recorded then);
d. the loop for the public caller, scoped (``Controller().ask``) and masked (``Policy(caller_statistics=
   False)``): the same question and caller, so the difference is what scoping costs in a whole run.

It also times the first scoped call of a group set (building its readable rows, cached after).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from common import EVAL_DIR, Row, percentile, print_table, ratio, usable_sets

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.tuning.evaluate import read_questions
from evidence_loop.policies.config import Policy
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput

DEFAULT_SETS = (EVAL_DIR / "rgb_fact_en_clean", EVAL_DIR / "tara_zh")
STAFF = ("staff",)


def restricted(docs: Sequence[DocumentInput], every: int) -> list[DocumentInput]:
    """The documents with every ``every``-th one readable by ``staff`` only."""
    return [replace(doc, acl=STAFF) if i % every == 0 else doc for i, doc in enumerate(docs)]


def measure(set_dir: Path, k: int, every: int, limit: int | None) -> dict[str, float]:
    """One set's column."""
    docs = restricted(collect([set_dir / "corpus.jsonl"]).documents, every)
    questions = [str(r["question"]) for r in read_questions(set_dir / "questions.jsonl")][:limit]
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "index", create=True) as store:
        store.ingest(docs, max_bytes=1 << 30)
        snapshot = store.snapshot()
        started = time.perf_counter()
        snapshot.search(questions[0], k)
        first_ms = (time.perf_counter() - started) * 1000
        numbers = _timed(snapshot, questions, k)
    numbers.update(first_ms=first_ms, docs=len(docs), questions=len(questions))
    return numbers


def _timed(snapshot: Snapshot, questions: Sequence[str], k: int) -> dict[str, float]:
    scoped, masked = Controller(), Controller(Policy(caller_statistics=False))
    calls: dict[str, Callable[[str], object]] = {
        "direct": lambda q: snapshot.search(q, k, groups=STAFF),
        "scoped": lambda q: snapshot.search(q, k),
        "masked": lambda q: snapshot.search(q, k, scoped=False),
        "loop_scoped": lambda q: scoped.ask(snapshot, q),
        "loop_masked": lambda q: masked.ask(snapshot, q),
    }
    for question in questions:  # warm-up: parsed documents are cached by whichever call reads them first
        for call in calls.values():
            call(question)
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for n, question in enumerate(questions):
        names = list(calls)
        for name in names[n % len(names) :] + names[: n % len(names)]:  # rotate the order
            started = time.perf_counter()
            calls[name](question)
            samples[name].append((time.perf_counter() - started) * 1000)
    out: dict[str, float] = {}
    for name, ms in samples.items():
        out[f"{name}_p50"], out[f"{name}_p95"] = statistics.median(ms), percentile(ms, 0.95)
    return out


def _pair(name: str) -> Callable[[dict[str, float]], str]:
    return lambda m: f"{m[name + '_p50']:.2f} / {m[name + '_p95']:.2f}"


ROWS: tuple[Row, ...] = (
    ("documents (1 in N staff) / questions", lambda m: f"{m['docs']:.0f} / {m['questions']:.0f}", ""),
    ("search direct p50 / p95 ms", _pair("direct"), ""),
    ("search scoped p50 / p95 ms", _pair("scoped"), ""),
    ("search masked p50 / p95 ms", _pair("masked"), ""),
    ("scoped / direct p50", lambda m: ratio(m["scoped_p50"], m["direct_p50"]), ""),
    ("first scoped search ms", lambda m: f"{m['first_ms']:.1f}", ""),
    ("loop scoped p50 / p95 ms", _pair("loop_scoped"), ""),
    ("loop masked p50 / p95 ms", _pair("loop_masked"), ""),
    ("loop scoped / masked p50", lambda m: ratio(m["loop_scoped_p50"], m["loop_masked_p50"]), ""),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("sets", nargs="*", type=Path, default=list(DEFAULT_SETS))
    parser.add_argument("--k", type=int, default=12)
    parser.add_argument("--every", type=int, default=3)
    parser.add_argument("--max-questions", type=int, default=None)
    args = parser.parse_args(argv)
    results = {d.name: measure(d, args.k, args.every, args.max_questions) for d in usable_sets(args.sets)}
    print_table(ROWS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
