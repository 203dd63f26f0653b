"""What the benchmark scripts share: where the evaluation sets are, questions, interleaved timing,
percentiles, ratios, the table."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evidence_loop.agent.tuning.evaluate import read_questions

# ../shared/eval beside the clone; EVLOOP_EVAL_DIR overrides
EVAL_DIR = Path(os.environ.get("EVLOOP_EVAL_DIR") or Path(__file__).resolve().parents[2] / "shared" / "eval")

Cell = Callable[[dict[str, float]], str]
Row = tuple[str, Cell, str]


@dataclass(frozen=True, slots=True)
class Question:
    """One question of a set and the groups it is asked with."""

    text: str
    groups: list[str]


# One way of asking; a number returned is the call's own milliseconds (timed in another process).
Ask = Callable[[str, list[str]], float | None]


def set_questions(set_dir: Path, limit: int | None = None) -> list[Question]:
    """The questions of ``set_dir/questions.jsonl`` in file order, the first ``limit`` if given."""
    records = read_questions(set_dir / "questions.jsonl")
    return [question_of(record) for record in (records[:limit] if limit else records)]


def question_of(record: Mapping[str, object]) -> Question:
    """One record of a ``questions.jsonl`` as asked: its question and its groups."""
    groups = record.get("groups")
    return Question(str(record["question"]), [str(g) for g in groups] if isinstance(groups, list) else [])


def time_interleaved(
    asks: Mapping[str, Ask], questions: Sequence[Question], rounds: int
) -> dict[str, list[float]]:
    """Milliseconds per call and variant; the variant order rotates with each question, so machine
    noise and cache warmth hit every variant alike."""
    names = list(asks)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        for n, question in enumerate(questions):
            shift = n % len(names)
            for name in names[shift:] + names[:shift]:
                started = time.perf_counter()
                own = asks[name](question.text, question.groups)
                samples[name].append(own if own is not None else (time.perf_counter() - started) * 1000)
    return samples


def summaries(samples: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """``NAME_p50``, ``NAME_p95``, ``NAME_p99`` and ``NAME_mean`` of each variant's milliseconds."""
    out: dict[str, float] = {}
    for name, ms in samples.items():
        out[f"{name}_p50"] = statistics.median(ms)
        out[f"{name}_p95"] = percentile(ms, 0.95)
        out[f"{name}_p99"] = percentile(ms, 0.99)
        out[f"{name}_mean"] = statistics.fmean(ms)
    return out


def usable_sets(sets: Sequence[Path]) -> list[Path]:
    """The set folders holding corpus.jsonl and questions.jsonl; says which it skips and why."""
    found = []
    for set_dir in sets:
        if (set_dir / "corpus.jsonl").is_file() and (set_dir / "questions.jsonl").is_file():
            found.append(set_dir)
        else:
            print(f"skipped {set_dir}: no corpus.jsonl/questions.jsonl there")
    return found


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1); NaN for no samples."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ratio(a: float, b: float) -> str:
    """``a / b`` as ``1.23x``; ``-`` when b is not positive."""
    return f"{a / b:.2f}x" if b > 0 else "-"


def print_table(rows: Sequence[Row], results: Mapping[str, dict[str, float]]) -> None:
    """One column per set, one row per metric, the target last."""
    header = ["metric", *results, "target"]
    table = [header] + [[label, *(cell(m) for m in results.values()), target] for label, cell, target in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for n, row in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
