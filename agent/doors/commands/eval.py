"""``evloop eval SET_DIR``: ingest an evaluation set into a temporary index, run it, print its scores."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_embed_cache_option,
    add_embed_workers_option,
    evaluation_embedder,
)
from evidence_loop.agent.doors.commands.progress import Progress, add_progress_option
from evidence_loop.agent.doors.commands.session import add_policy_option, policy_from_args, policy_line
from evidence_loop.agent.loop.calibrate import ScaleKeeper
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.runtime import freeze_heap
from evidence_loop.agent.tuning.attribution import attribute, table
from evidence_loop.agent.tuning.eval_kinds import KindRow, by_kind, kind_lines
from evidence_loop.agent.tuning.evaluate import (
    Asker,
    answer_all,
    ingest_set,
    read_questions,
    score,
    scorer_beside,
    scoring_set,
    temp_index,
    write_jsonl,
)
from evidence_loop.agent.tuning.expansion import BINS, Bin, profile
from evidence_loop.policies.config import Policy
from evidence_loop.policies.presets import MODES
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.store.location import Location
from evidence_loop.tools.store.pg import is_url

DESCRIPTION = """\
Evaluate on a set folder holding a corpus.jsonl (one document a line, as `evloop ingest` reads it)
and a questions.jsonl (one {"id": ..., "question": ...} a line), or a folder whose corpus is a kb/
folder of article files (read as `evloop ingest SET_DIR/kb` reads it: doc_id = the path under kb/
without its extension) beside its questions.jsonl: ingest the corpus into a temporary
index, answer every question, write the results, and print the scores computed by the `score.py`
that sits beside the set folders, or the one --scorer names (answer/refusal/conflict rates,
evidence hit rate, token recall, mean context characters, offset honesty, latency).

Offsets are into the stored text, which for an HTML page is its clean text, not its source: for a
kb/ set, or a corpus with HTML records, the results are scored against OUT_DIR/<set>-scoring,
which holds the stored texts (doc_id, version, text as stored) and the questions. When questions
carry metadata.kind, a table by kind follows (count, correct outcome, answer hit, conflict recall,
false conflicts); the loop never reads a question's metadata.

Modes (the ablation): seed = the seed units only; window = a fixed ±2-unit neighbourhood;
parent = the whole parent section; adaptive = the full loop (completeness check, directional
sliding, wider retrieval). Several modes are run on the same index and printed side by side."""

EPILOG = """\
examples:
  evloop eval evals/my-help-centre
  evloop eval evals/my-help-centre --mode seed --mode window --mode parent --mode adaptive
  evloop eval evals/reviewed --out-dir /tmp/results      # a set from `evloop feedback export --as-eval`
  evloop eval benchmarks/helpcentre --scorer evals/score.py      # the sample set of a checkout"""

ROWS = (
    ("correct outcome", "correct_outcome"),
    ("answer rate", "answer_rate"),
    ("refusal rate", "refusal_rate"),
    ("conflict rate", "conflict_rate"),
    ("evidence hit rate", "evidence_hit_rate"),
    ("token recall", "token_recall"),
    ("mean context chars", "mean_context_chars"),
    ("offset honesty", "offset_honesty"),
    ("latency p50 ms", "latency_p50_ms"),
    ("latency p95 ms", "latency_p95_ms"),
)


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "eval",
        summary="score the loop on an evaluation set",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    where = "folder with questions.jsonl and corpus.jsonl or a kb/ folder of articles"
    parser.add_argument("set_dir", type=Path, metavar="SET_DIR", help=where)
    scorer = "the score.py to score with (default: the one beside the set folder)"
    parser.add_argument("--scorer", type=Path, metavar="SCORE_PY", default=None, help=scorer)
    parser.add_argument(
        "--mode",
        action="append",
        choices=MODES,
        dest="modes",
        help="mode to run (repeatable; default adaptive)",
    )
    parser.add_argument("--out-dir", type=Path, default=Path("out/eval"), help="where results files go")
    parser.add_argument(
        "--lexical",
        action="store_true",
        help="also run the full loop with lexical recall only (no vectors), printed as 'lexical'",
    )
    add_embed_cache_option(parser)
    add_progress_option(parser)
    add_embed_workers_option(parser)
    parser.add_argument(
        "--no-history", action="store_true", help="ask each question alone, ignoring its `history` field"
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help="ingest the set into this empty, migrated PostgreSQL store instead of a temporary folder",
    )
    add_policy_option(parser)
    parser.set_defaults(run=run)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value <= 1.0 else f"{value:.1f}"
    return "-" if value is None else str(value)


def _variants(args: argparse.Namespace) -> list[tuple[str, Policy]]:
    variants = [(mode, policy_from_args(args, Policy(mode=mode))) for mode in args.modes or ["adaptive"]]
    if args.lexical:
        variants.append(("lexical", replace(policy_from_args(args, Policy()), dense_recall=False)))
    return variants


def run(args: argparse.Namespace) -> int:
    variants = _variants(args)
    modes = [name for name, _ in variants]
    questions = read_questions(args.set_dir / "questions.jsonl")
    scorer = _scorer(args)
    scores: dict[str, dict[str, object] | None] = {}
    causes: dict[str, list[tuple[str, int, float]]] = {}
    profiles: dict[str, tuple[int, dict[str, Bin]]] = {}
    kinds: dict[str, list[KindRow]] = {}
    embedder = evaluation_embedder(args.embed_cache)
    with temp_index() as tmp, Progress("eval", show=not args.no_progress) as progress:
        bar = progress.stage("embedding", "unit")
        measuring = progress.stage("measuring the scale", "question")
        keeper = ScaleKeeper(Controller(variants[0][1], embedder=embedder), measuring) if embedder else None
        store = ingest_set(args.set_dir, _location(args, Path(tmp)), embedder, bar, meter=keeper)
        snapshot = store.snapshot()
        scale = store.scale() if embedder else None
        scored_on = scoring_set(args.set_dir, snapshot, args.out_dir)
        freeze_heap()  # the loaded set stays put: the collector need not walk it again
        for mode, policy in variants:
            ask = Asker(Controller(policy, deps=None, embedder=embedder), snapshot, scale)
            out = args.out_dir / f"{args.set_dir.name}-{mode}.jsonl"
            answering = progress.counter(f"answering ({mode})", "question", len(questions))
            results = _answer(args, questions, ask, out, answering)
            causes[mode] = _attribution(questions, results, out)
            profiles[mode] = profile(results, policy)
            kinds[mode] = by_kind(questions, results)
            scores[mode] = score(scored_on, out, scorer) if scorer else None
            print(f"{mode}: {len(questions)} questions -> {out} ({policy_line(policy)})")
        store.close()
    if scored_on != args.set_dir:
        print(f"offsets point into the stored texts: {scored_on / 'corpus.jsonl'}")
    if any(s is None for s in scores.values()):
        print("score.py not found beside the set folder (--scorer names one); results written, not scored")
        _print_kinds(kinds, modes)
        return 0
    _print_scores(args.set_dir.name, scores, modes)
    _print_kinds(kinds, modes)
    _print_attribution(causes, modes)
    _print_profile(profiles, modes)
    return 0


def _answer(
    args: argparse.Namespace,
    questions: list[dict[str, object]],
    ask: Asker,
    out: Path,
    advance: Callable[[int], None] | None,
) -> list[dict[str, object]]:
    """Every question asked (``advance`` told each one done), its result lines written to ``out`` and
    read back."""
    answers = answer_all(ask, questions, advance, ask.extra, with_history=not args.no_history)
    write_jsonl(out, answers)
    return _results(out)


def _scorer(args: argparse.Namespace) -> Path | None:
    """``--scorer`` (which must exist), else the ``score.py`` beside the set folder, else None."""
    if args.scorer is None:
        return scorer_beside(args.set_dir)
    if not args.scorer.is_file():
        raise InputError(f"--scorer {args.scorer}: no such file")
    return Path(args.scorer)


def _print_scores(name: str, scores: dict[str, dict[str, object] | None], modes: list[str]) -> None:
    print(f"\nset {name}")
    print("".ljust(22) + "".join(m.rjust(11) for m in modes))
    for label, key in ROWS:
        print(label.ljust(22) + "".join(_fmt((scores[m] or {}).get(key)).rjust(11) for m in modes))


def _print_kinds(kinds: dict[str, list[KindRow]], modes: list[str]) -> None:
    for mode in modes:
        if kinds[mode]:
            print(f"\nby kind ({mode}; metadata.kind, read after the run)")
            print("\n".join(kind_lines(kinds[mode])))


def _location(args: argparse.Namespace, tmp: Path) -> Location:
    """``--store`` (an empty, migrated database) or a temporary index folder."""
    if args.store is None:
        return tmp / "index"
    if not is_url(args.store):
        raise InputError(f"--store takes a postgresql:// URL, not {args.store!r}")
    return str(args.store)


def _results(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _attribution(
    questions: list[dict[str, object]], results: list[dict[str, object]], path: Path
) -> list[tuple[str, int, float]]:
    """Classify every wrong or ungrounded outcome; per-item rows go beside the results file."""
    rows = attribute(questions, results)
    write_jsonl(path.with_suffix(".attribution.jsonl"), rows)
    return table(rows, len(questions))


def _print_profile(profiles: dict[str, tuple[int, dict[str, Bin]]], modes: list[str]) -> None:
    print("\nexpansion (share of answered questions, mean evidence chars; agent/tuning/expansion.py)")
    print("answered".ljust(22) + "".join(str(profiles[m][0]).rjust(11) for m in modes))
    for name in BINS:
        cells = [f"{profiles[m][1][name].share:.2f} {profiles[m][1][name].mean_chars:>5.0f}" for m in modes]
        print(name.ljust(22) + "".join(c.rjust(11) for c in cells))


def _print_attribution(causes: dict[str, list[tuple[str, int, float]]], modes: list[str]) -> None:
    print("\nbad cases (share of all questions; per item in *.attribution.jsonl)")
    for cause_name, *_ in causes[modes[0]]:
        cells = []
        for m in modes:
            count, share = next((c, sh) for name, c, sh in causes[m] if name == cause_name)
            cells.append(f"{count:>4} {share:.3f}")
        print(cause_name.ljust(22) + "".join(c.rjust(11) for c in cells))
