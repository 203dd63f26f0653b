"""Building the Service a command runs on: index folder, trace folder, tracing switch, LLM configuration."""

from __future__ import annotations

import argparse
from pathlib import Path

from agent.commands.common import resolve_index
from agent.service import Service


def add_trace_options(parser: argparse.ArgumentParser) -> None:
    """``--traces DIR`` and ``--no-trace``."""
    parser.add_argument(
        "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default: INDEX/traces)"
    )
    parser.add_argument("--no-trace", action="store_true", help="do not write a trace for this run")


def open_service(args: argparse.Namespace, *, create: bool = False) -> Service:
    """The service for a command's ``--index``/``--traces``/``--no-trace`` options."""
    index = resolve_index(args.index)
    traces = getattr(args, "traces", None)
    tracing_on = not getattr(args, "no_trace", False)
    return Service.open(index, create=create, traces=traces, tracing_on=tracing_on)
