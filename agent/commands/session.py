"""Building the Service a command runs on: index folder, trace folder, tracing switch, LLM configuration."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from evidence_loop.agent.commands.common import resolve_location
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import POLICY_ENV, Policy, load_policy_file
from evidence_loop.tools.errors import InputError


def add_trace_options(parser: argparse.ArgumentParser) -> None:
    """``--traces DIR`` and ``--no-trace``."""
    parser.add_argument(
        "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default: INDEX/traces)"
    )
    parser.add_argument("--no-trace", action="store_true", help="do not write a trace for this run")


def add_policy_option(parser: argparse.ArgumentParser) -> None:
    """``--policy KEY=VALUE`` (repeatable): override one threshold of the shipped policy."""
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a policy threshold, e.g. --policy window_budget=600 (see policies/config.py)",
    )
    parser.add_argument(
        "--policy-file",
        type=Path,
        metavar="FILE",
        default=None,
        help=f"a policy file from `evloop calibrate --out` (default: ${POLICY_ENV}, else the shipped one)",
    )


def policy_from_args(args: argparse.Namespace, base: Policy | None = None) -> Policy:
    """The shipped policy with the command's ``--policy`` overrides applied."""
    pairs: dict[str, str] = {}
    for item in getattr(args, "policy", []) or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--policy {item!r}: expected KEY=VALUE")
        pairs[key.strip()] = value.strip()
    path = getattr(args, "policy_file", None) or (
        Path(os.environ[POLICY_ENV]) if os.environ.get(POLICY_ENV) else None
    )
    try:
        start = load_policy_file(path, base) if path is not None else (base or Policy())
    except ValueError as exc:
        raise InputError(str(exc)) from None
    try:
        return start.with_overrides(pairs)
    except ValueError as exc:
        raise InputError(f"--policy: {exc}") from None


def open_service(args: argparse.Namespace, *, create: bool = False) -> Service:
    """The service for a command's ``--index``/``--traces``/``--no-trace``/``--policy`` options."""
    index = resolve_location(args)
    traces = getattr(args, "traces", None)
    tracing_on = not getattr(args, "no_trace", False)
    policy = policy_from_args(args)
    return Service.open(index, create=create, traces=traces, tracing_on=tracing_on, policy=policy)
