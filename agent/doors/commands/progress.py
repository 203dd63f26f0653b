"""Progress of long work on stderr: moving bars in a terminal, a log line every few seconds elsewhere.

    with Progress("ingest", show=True) as progress:
        count = progress.stage("embedding", "unit")     # a callback: count(done, total)

In a terminal each stage is a tqdm bar that moves as its callback is told. Without one (CI, docker
logs, systemd) a line goes to stderr every ``EVERY_S`` seconds while work goes on, whether or not a
callback came (a stage that takes minutes per step still says it is alive)::

    evloop: ingest: embedding 1200/5000 units (24%), 48.3 units/s, ETA 1m19s

After the last stage is done the line says what the work is still at (``finishing``). Nothing is
shown with ``--no-progress``, and nothing in a pipe for work shorter than ``EVERY_S``.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

EVERY_S = 5.0
"""Seconds between two progress lines when stderr is not a terminal."""

Count = Callable[[int, int], None]
"""A stage's callback: (done, total)."""


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``."""
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help=f"no progress on stderr (default: bars in a terminal, else a line every {EVERY_S:g} s)",
    )


@dataclass(slots=True)
class _Stage:
    desc: str
    unit: str
    started: float
    done: int = 0
    total: int = 0
    bar: Any = None  # a tqdm bar in a terminal


class Progress:
    """The stages of one piece of work (``task``), shown on ``stream`` (stderr) while it runs."""

    def __init__(
        self, task: str, *, show: bool = True, stream: IO[str] | None = None, every_s: float = EVERY_S
    ) -> None:
        self._task = task
        self._stream = stream or sys.stderr
        self._show = show
        self._tty = show and self._stream.isatty()
        self._every_s = every_s
        self._stages: list[_Stage] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._last_line = time.monotonic()
        self.finishing = "finishing"

    def __enter__(self) -> Progress:
        if self._show and not self._tty:
            self._ticker = threading.Thread(target=self._tick, name="evloop-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(5)
        for stage in self._stages:
            if stage.bar is not None:
                stage.bar.close()

    def stage(self, desc: str, unit: str) -> Count | None:
        """The callback of a stage named ``desc`` counting ``unit``s (None when nothing is shown)."""
        if not self._show:
            return None
        stage: _Stage | None = None

        def count(done: int, total: int) -> None:
            nonlocal stage
            with self._lock:
                if stage is None:
                    stage = _Stage(desc, unit, time.monotonic())
                    self._stages.append(stage)
                    self._open(stage, total)
                stage.done, stage.total = done, max(total, done)
                if stage.bar is not None:
                    stage.bar.total = stage.total
                    stage.bar.update(done - stage.bar.n)

        return count

    def counter(self, desc: str, unit: str, total: int) -> Callable[[int], None] | None:
        """A stage whose total is known now, told only how many are done."""
        count = self.stage(desc, unit)
        if count is None:
            return None
        bound = count
        return lambda done: bound(done, total)

    def _open(self, stage: _Stage, total: int) -> None:
        """A new stage's bar, in a terminal (elsewhere the ticker shows it when its time comes)."""
        if self._tty:
            from tqdm import tqdm  # only work that shows a bar pays for importing it

            stage.bar = tqdm(
                total=total,
                unit=stage.unit,
                desc=stage.desc,
                file=self._stream,
                leave=False,
                dynamic_ncols=True,
                # Redrawn at most every 0.2 s, on any update: tqdm's adaptive skipping, tuned on the
                # fast first updates, left a bar standing still through slower later ones.
                mininterval=0.2,
                miniters=1,
            )

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            with self._lock:
                if time.monotonic() - self._last_line < self._every_s:
                    continue
                line = self._status()
                if line is not None:
                    self._print(line)

    def _status(self) -> str | None:
        """The line for now: the stage under way, or what follows the last one."""
        if not self._stages:
            return None
        stage = self._stages[-1]
        if stage.total and stage.done >= stage.total:
            took = _duration(time.monotonic() - stage.started)
            return f"{self.finishing} ({stage.desc}: {stage.total} {stage.unit}s in {took})"
        return status_line(stage.desc, stage.unit, stage.done, stage.total, time.monotonic() - stage.started)

    def _print(self, line: str) -> None:
        self._last_line = time.monotonic()
        print(f"evloop: {self._task}: {line}", file=self._stream, flush=True)


def status_line(desc: str, unit: str, done: int, total: int, elapsed: float) -> str:
    """``embedding 1200/5000 units (24%), 48.3 units/s, ETA 1m19s`` (rate and ETA once known)."""
    share = f" ({100 * done // total}%)" if total else ""
    line = f"{desc} {done}/{total} {unit}s{share}"
    if done and elapsed > 0:
        rate = done / elapsed
        line += f", {rate:.1f} {unit}s/s"
        if total > done:
            line += f", ETA {_duration((total - done) / rate)}"
    return line


def _duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """The callbacks of an ingest: documents written, units embedded, the scale's pseudo-questions."""

    documents: Callable[[int], None] | None
    embedding: Count | None
    scale: Count | None


@contextmanager
def ingest_progress(documents: int, no_progress: bool, task: str = "ingest") -> Iterator[IngestProgress]:
    """The stages of a write that ingests ``documents`` documents."""
    with Progress(task, show=not no_progress) as progress:
        progress.finishing = "indexing and committing"
        yield IngestProgress(
            progress.counter("writing", "document", documents),
            progress.stage("embedding", "unit"),
            progress.stage("measuring the scale", "question"),
        )
