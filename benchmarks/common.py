"""What the benchmark scripts share: where the evaluation sets are, percentiles, ratios, the table."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

# ../shared/eval beside the clone; EVLOOP_EVAL_DIR overrides
EVAL_DIR = Path(os.environ.get("EVLOOP_EVAL_DIR") or Path(__file__).resolve().parents[2] / "shared" / "eval")

Cell = Callable[[dict[str, float]], str]
Row = tuple[str, Cell, str]


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
