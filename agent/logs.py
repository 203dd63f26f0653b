"""Operator logs: one summary line per run, through the standard ``logging`` module.

The library only logs, through its named logger (``evidence_loop``, the run lines on
``evidence_loop.run``); it never configures logging, so a host application's own configuration
stands. The CLI and the server call ``configure``: JSON lines on stderr (structlog renders them),
warnings only for the CLI unless ``EVLOOP_LOG_LEVEL`` says otherwise, info for the server, so a
support team sees one line per question (run id, status, seconds, recalls, slides, LLM calls).
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidence_loop.agent.outcome import Outcome

LOGGER = "evidence_loop"
log = logging.getLogger(LOGGER)
run_log = logging.getLogger(f"{LOGGER}.run")
_MARK = "_evloop_handler"  # set on the handler ``configure`` installs, so it is installed once


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record is emitted (as logging's last resort does),
    not the stream that was current at configuration: a process that swaps stderr keeps its logs."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


class _JsonLines(logging.Formatter):
    """structlog's JSON lines, structlog imported when the first record is formatted: a command that
    logs nothing (most do: the CLI logs warnings only) never pays for importing it."""

    def __init__(self) -> None:
        super().__init__()
        self._formatter: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._formatter is None:
            self._formatter = _structlog_formatter()
        return self._formatter.format(record)


def _structlog_formatter() -> logging.Formatter:
    import structlog

    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.stdlib.ExtraAdder(),
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
    )


def configure(default_level: str = "warning") -> None:
    """JSON lines on stderr for the ``evidence_loop`` loggers; idempotent. For the CLI and the server
    only (processes that own their logging). ``EVLOOP_LOG_LEVEL`` overrides the level."""
    from evidence_loop.agent import settings  # the settings log through this module's logger

    name = (settings.current().get("log_level") or default_level).upper()
    level = logging.getLevelNamesMapping().get(name, logging.WARNING)
    log.setLevel(level)
    if any(getattr(handler, _MARK, False) for handler in log.handlers):
        return
    handler = _CurrentStderr()
    handler.setFormatter(_JsonLines())
    setattr(handler, _MARK, True)
    log.addHandler(handler)
    log.propagate = False
    settings.report(settings.current())


def log_run(outcome: Outcome, *, caller: str | None = None) -> None:
    """The one summary line of a run (silent unless the host or ``configure`` enables info)."""
    if not run_log.isEnabledFor(logging.INFO):
        return
    signals = outcome.signals
    run_log.info(
        "run",
        extra={
            "run_id": outcome.run_id,
            "status": outcome.status,
            "seconds": round(outcome.latency_ms / 1000, 4),
            "recalls": signals.recalls,
            "slides": signals.slides,
            "llm_calls": signals.llm_calls,
            "caller": caller,
        },
    )
