"""What reading a question with its conversation costs: the loop with a three-turn history against the
same question alone, and reading earlier runs back by run_id.

    .venv/bin/python benchmarks/bench_followups.py [SET_DIR ...] [--rounds 2] [--warmup 20]
        [--max-questions N] [--read-back N]

For each set (default: the conversation set in tests/data/conversations and tara_zh in ../shared/eval
beside the clone, or in EVLOOP_EVAL_DIR; absent sets are skipped) the corpus is ingested once into a
temporary store (lexical recall). Each question gets a three-turn history: its own ``history`` field,
topped up (oldest side) with the questions before it in the file. Timed, interleaved per question with
the order rotating (``benchmarks/common.time_interleaved``):

a. alone: ``Controller.ask(snapshot, question, groups)``;
b. with history: the same with ``history=`` the three turns as plain questions (resolved by rule,
   the follow-up run as the question they complete);
c. the resolved question alone: ``Controller.ask`` on the question b ran (for a follow-up, the question
   its turns complete): b/c is what the history itself costs, b/a also what answering the completed
   question costs ("它是哪一年推出的" alone finds little to read; "X300路由器是哪一年推出的" reads more);
d. the resolution alone: ``policies.question.followup.resolve`` over the same turns.

Then, on a traced ``Service`` over the same store, reading runs back: each history turn is asked once
(traced), and timed are ``Service.turn(run_id)`` (one trace read from the store, its documents checked)
and ``Service.ask`` with the three turns given as run ids against the same turns given as questions.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from common import EVAL_DIR, Question, ratio, summaries, time_interleaved, usable_sets

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.runtime import freeze_heap
from evidence_loop.agent.service import Service
from evidence_loop.policies.question.followup import Turn, resolve
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.store.folder import Store

CONVERSATIONS = Path(__file__).resolve().parent.parent / "tests" / "data" / "conversations"
DEFAULT_SETS = (CONVERSATIONS, EVAL_DIR / "tara_zh")
TURNS = 3


def conversations(set_dir: Path, limit: int | None) -> list[tuple[Question, list[str]]]:
    """Each question with three earlier turns: its own history, topped up with the questions before it."""
    records = [
        json.loads(line) for line in (set_dir / "questions.jsonl").read_text("utf-8").splitlines() if line
    ]
    records = records[:limit] if limit else records
    out = []
    for n, record in enumerate(records):
        own = [str(t) for t in record.get("history") or []][-TURNS:]
        before = [str(r["question"]) for r in records[max(n - TURNS, 0) : n]]
        history = (before + own)[-TURNS:] if len(own) < TURNS else own
        groups = [str(g) for g in record.get("groups") or []]
        out.append((Question(str(record["question"]), groups), history))
    return out


def time_loop(
    store: Store, asked: list[tuple[Question, list[str]]], rounds: int, warmup: int
) -> dict[str, float]:
    controller = Controller()
    snapshot = store.snapshot()
    histories = {q.text: [Turn(t) for t in h] for q, h in asked}
    resolved = {text: resolve(text, turns).text for text, turns in histories.items()}

    def alone(text: str, groups: list[str]) -> None:
        controller.ask(snapshot, text, groups)

    def followed(text: str, groups: list[str]) -> None:
        controller.ask(snapshot, text, groups, history=histories[text])

    def completed(text: str, groups: list[str]) -> None:
        controller.ask(snapshot, resolved[text], groups)

    def rules(text: str, groups: list[str]) -> None:
        resolve(text, histories[text])

    variants = {"alone": alone, "history": followed, "resolved": completed, "resolve": rules}
    questions = [q for q, _ in asked]
    time_interleaved(variants, questions[:warmup], 1)
    return summaries(time_interleaved(variants, questions, rounds))


def time_read_back(store: Store, folder: Path, asked: list[tuple[Question, list[str]]]) -> dict[str, float]:
    """Reading runs back by id: one turn, and an ask with three run ids against three questions."""
    service = Service(store, traces=_traces(folder))
    reads: list[float] = []
    by_id: list[float] = []
    by_text: list[float] = []
    for n, (question, history) in enumerate(asked):
        runs = [service.ask(t, question.groups).run_id for t in history]
        started = time.perf_counter()
        for run_id in runs:
            service.turn(run_id, question.groups)
        reads.append((time.perf_counter() - started) * 1000 / max(len(runs), 1))
        items: list[object] = [{"question": t, "run_id": r} for t, r in zip(history, runs, strict=True)]
        pair = [("id", items), ("text", list(history))]
        for name, turns in pair if n % 2 else reversed(pair):
            started = time.perf_counter()
            service.ask(question.text, question.groups, history=turns)  # type: ignore[arg-type]
            (by_id if name == "id" else by_text).append((time.perf_counter() - started) * 1000)
    return summaries({"read": reads, "ask_ids": by_id, "ask_texts": by_text})


def _traces(folder: Path):  # type: ignore[no-untyped-def]
    from evidence_loop.traces import TraceStore

    return TraceStore(folder / "traces")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", type=Path, nargs="*", default=list(DEFAULT_SETS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--max-questions", type=int, default=300)
    parser.add_argument("--read-back", type=int, default=60, help="questions whose runs are read back")
    args = parser.parse_args(argv)
    rows: list[tuple[str, dict[str, float], dict[str, float]]] = []
    for set_dir in usable_sets(args.sets):
        asked = conversations(set_dir, args.max_questions)
        with tempfile.TemporaryDirectory(prefix="bench-followups-") as tmp:
            store = Store.open(Path(tmp) / "index", create=True)
            store.ingest(collect([set_dir / "corpus.jsonl"]).documents)
            freeze_heap()
            loop = time_loop(store, asked, args.rounds, args.warmup)
            back = time_read_back(store, Path(tmp), asked[: args.read_back])
            store.close()
        rows.append((f"{set_dir.name} ({len(asked)} q)", loop, back))
    print("| set | alone p50 ms | 3-turn history p50 ms | ratio (target <= 1.2x) | resolved question alone"
          " p50 ms | history / resolved alone | resolve p50 ms | read a run p50 ms | ask, 3 run ids p50 ms |"
          " ask, 3 questions p50 ms |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, loop, back in rows:
        print(
            f"| {name} | {loop['alone_p50']:.2f} | {loop['history_p50']:.2f} | "
            f"{ratio(loop['history_p50'], loop['alone_p50'])} | {loop['resolved_p50']:.2f} | "
            f"{ratio(loop['history_p50'], loop['resolved_p50'])} | {loop['resolve_p50']:.3f} | "
            f"{back['read_p50']:.2f} | {back['ask_ids_p50']:.2f} | {back['ask_texts_p50']:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
