"""Long work shows progress on stderr: a line every few seconds without a terminal, bars in one."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.doors.commands.progress import Progress, status_line
from tests.damage_support import ROOT
from tests.fake_embedding_server import FakeEmbeddingServer

LINE = re.compile(r"^evloop: ingest: (writing|embedding|measuring the scale|indexing and committing)\b")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("done", "total", "elapsed", "expected"),
    [
        (0, 5000, 0.0, "embedding 0/5000 units (0%)"),
        (1200, 5000, 24.0, "embedding 1200/5000 units (24%), 50.0 units/s, ETA 1m16s"),
        (5000, 5000, 100.0, "embedding 5000/5000 units (100%), 50.0 units/s"),
        (10, 100_000, 1.0, "embedding 10/100000 units (0%), 10.0 units/s, ETA 2h46m"),
    ],
)
def test_a_status_line_says_done_of_total_the_rate_and_the_time_left(
    done: int, total: int, elapsed: float, expected: str
) -> None:
    assert status_line("embedding", "unit", done, total, elapsed) == expected


def test_without_a_terminal_a_line_comes_every_few_seconds_while_work_goes_on() -> None:
    out = io.StringIO()
    with Progress("ingest", stream=out, every_s=0.2) as progress:
        count = progress.stage("embedding", "unit")
        assert count is not None
        for done in range(0, 10):
            count(done, 10)
            time.sleep(0.1)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(line.startswith("evloop: ingest: embedding ") for line in lines)


def test_without_a_terminal_short_work_prints_nothing() -> None:
    out = io.StringIO()
    with Progress("ingest", stream=out) as progress:
        count = progress.stage("embedding", "unit")
        assert count is not None
        count(10, 10)
    assert out.getvalue() == ""


def test_in_a_terminal_a_stage_is_a_bar_that_moves() -> None:
    out = Terminal()
    with Progress("ingest", stream=out) as progress:
        count = progress.stage("embedding", "unit")
        assert count is not None
        count(1, 4)
        time.sleep(0.3)
        count(3, 4)
    assert "embedding" in out.getvalue() and "3/4" in out.getvalue()


def test_no_progress_shows_nothing() -> None:
    out = Terminal()
    with Progress("ingest", show=False, stream=out) as progress:
        assert progress.stage("embedding", "unit") is None
    assert out.getvalue() == ""


# --- a real ingest without a terminal ---------------------------------------------------------------


@pytest.fixture
def slow_endpoint() -> Iterator[FakeEmbeddingServer]:
    server = FakeEmbeddingServer(delay_s=0.04).start()
    yield server
    server.stop()


@pytest.mark.slow
def test_an_ingest_of_5000_units_without_a_terminal_prints_progress_at_least_every_10_seconds(
    tmp_path: Path, slow_endpoint: FakeEmbeddingServer
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as out:
        for d in range(500):
            text = "\n".join(
                f"Item {d}-{s}: the LM-{d:03d} part {s} ships in {s + 1} days." for s in range(10)
            )
            out.write(json.dumps({"doc_id": f"doc-{d:03d}", "text": text}) + "\n")
    command = [
        sys.executable,
        "-m",
        "evidence_loop.agent.doors.cli.app",
        "ingest",
        str(corpus),
        "--index",
        str(tmp_path / "ix"),
    ]
    # one batch in flight, so that the embedding lasts long enough to report on (eight at once,
    # the default, embed these 5,000 units before the first progress line is due)
    env = {**os.environ, **slow_endpoint.environ, "EVLOOP_EMBED_IN_FLIGHT": "1"}
    seen: list[tuple[float, str]] = []
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    ) as process:
        assert process.stderr is not None
        for line in process.stderr:  # read as it comes: each line timed when it arrives
            seen.append((time.monotonic(), line.rstrip("\n")))
        process.wait(timeout=900)
        ended = time.monotonic()

    assert process.returncode == 0, seen
    progress = [(at, line) for at, line in seen if LINE.match(line)]
    times = [at for at, _ in progress] + [ended]
    assert len(progress) >= 3, seen
    assert max(b - a for a, b in itertools.pairwise(times)) <= 10.0, seen
    assert any(
        re.search(r"embedding \d+/5000 units \(\d+%\), [\d.]+ units/s, ETA ", line) for _, line in progress
    )
