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

import structlog

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
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
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
    )
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
