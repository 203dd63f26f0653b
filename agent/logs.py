"""Operator logs: structlog configured once, JSON lines on stderr, one summary line per run.

The CLI logs warnings only unless ``EVLOOP_LOG_LEVEL`` says otherwise; the server logs info, so a
support team sees one line per question (run id, status, seconds, recalls, slides, LLM calls).
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

from evidence_loop.agent.outcome import Outcome

_configured = False


def configure(default_level: str = "warning") -> None:
    """Set up structlog for JSON lines on stderr; idempotent. ``EVLOOP_LOG_LEVEL`` overrides the level."""
    global _configured
    if _configured:
        return
    name = os.environ.get("EVLOOP_LOG_LEVEL", default_level).upper()
    level = logging.getLevelNamesMapping().get(name, logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    _configured = True


def log_run(outcome: Outcome, *, caller: str | None = None) -> None:
    """The one summary line of a run (structlog is configured on first use if nobody did)."""
    configure()
    signals = outcome.signals
    structlog.get_logger("evloop").info(
        "run",
        run_id=outcome.run_id,
        status=outcome.status,
        seconds=round(outcome.latency_ms / 1000, 4),
        recalls=signals.recalls,
        slides=signals.slides,
        llm_calls=signals.llm_calls,
        caller=caller,
    )
