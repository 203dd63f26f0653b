"""`evloop trace show` and `trace export` verify first, on both backends: a tampered trace is shown
only under a warning and exits 1, and is exported only with --force, marked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.traces import TraceStore
from evidence_loop.traces.records.schema import CorpusInfo, TraceHeader
from evidence_loop.traces.stores.pg_store import PgTraceStore
from tests.trace_support import edit_run
from tests.traces.conftest import SAMPLE_STEPS

Capture = pytest.CaptureFixture[str]


class Backend:
    def __init__(self, store: TraceStore, where: list[str]) -> None:
        self.store, self.where = store, where

    def write(self, run_id: str) -> None:
        corpus = CorpusInfo(generation=1, fingerprint="c0ffee" * 4, versions_read={})
        header = TraceHeader(
            run_id=run_id, created_at="2026-03-01T08:00:00Z", code_version="0", corpus=corpus, question="q?"
        )
        with self.store.begin(header) as writer:
            for step in SAMPLE_STEPS:
                writer.append(step)
            writer.finish("answered")

    def tamper(self, run_id: str) -> None:
        """The third event's score re-encoded, the line still valid JSON: only the chain can tell."""
        edit_run(self.store, run_id, lambda ls: [*ls[:3], ls[3].replace(b"0.61", b"0.99"), *ls[4:]])


@pytest.fixture(params=["folder", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "folder":
        store: TraceStore = TraceStore(tmp_path / "traces")
        where = ["--traces", str(tmp_path / "traces")]
    else:
        url: str = request.getfixturevalue("pg_url")
        store, where = PgTraceStore(url), ["--store", url]
    backend = Backend(store, where)
    backend.write("r-1")
    yield backend
    store.close()


def test_show_prints_the_verdict_above_a_trace_that_verifies(backend: Backend, capsys: Capture) -> None:
    assert main(["trace", "show", "r-1", *backend.where]) == 0

    out = capsys.readouterr().out
    assert out.startswith("verify: ok - hash chain verifies over 8 events; complete")


def test_show_of_a_tampered_trace_warns_above_it_and_exits_1(backend: Backend, capsys: Capture) -> None:
    backend.tamper("r-1")

    assert main(["trace", "show", "r-1", *backend.where]) == 1

    out, err = capsys.readouterr()
    assert out.startswith("WARNING: this trace FAILS verification - the events changed")
    assert "r-1: fails verification: the events changed" in err


def test_export_refuses_a_tampered_trace_without_force(backend: Backend, capsys: Capture) -> None:
    backend.tamper("r-1")

    for as_written in ([], ["--as-written"]):
        assert main(["trace", "export", "r-1", *as_written, *backend.where]) == 1
        out, err = capsys.readouterr()
        assert out == "" and "not exported (--force exports it" in err


def test_a_forced_export_is_marked_and_still_fails_where_it_is_read(
    backend: Backend, capsys: Capture, tmp_path: Path
) -> None:
    backend.tamper("r-1")

    assert main(["trace", "export", "r-1", "--as-written", "--force", *backend.where]) == 0

    records = json.loads(capsys.readouterr().out)
    assert records[0]["failed_verification"].startswith("the events changed")
    export = tmp_path / "r-1.json"
    export.write_text(json.dumps(records), encoding="utf-8")
    assert main(["trace", "verify", str(export), "--traces", str(tmp_path / "elsewhere")]) == 1
    assert "FAILED - the events changed" in capsys.readouterr().out
    assert main(["trace", "import", str(export), "--traces", str(tmp_path / "elsewhere")]) == 1
