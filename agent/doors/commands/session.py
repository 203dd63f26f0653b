"""Building the Service a command runs on: index folder, trace folder, tracing switch, LLM configuration;
and the after-write step every command that writes a store passes it (the corpus's scale)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evidence_loop.agent import settings
from evidence_loop.agent.doors.cli.common import resolve_location, shown, warn
from evidence_loop.agent.doors.commands.progress import Count
from evidence_loop.agent.loop.calibrate import ScaleKeeper
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import POLICY_ENV, Policy, load_policy_file
from evidence_loop.tools.errors import InputError, PolicyError
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.store.generation import location_flag
from evidence_loop.tools.store.location import Location


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
        help="override a policy threshold, e.g. --policy window_budget=600 (an unknown name is refused "
        "with the list of names; docs/configuration.md says what each does)",
    )
    parser.add_argument(
        "--policy-file",
        type=Path,
        metavar="FILE",
        default=None,
        help=f"a policy file from `evloop calibrate --out` (default: ${POLICY_ENV}, else the shipped one)",
    )


def policy_from_args(args: argparse.Namespace, base: Policy | None = None) -> Policy:
    """The policy in force: the policy file (``--policy-file``, else ``EVLOOP_POLICY`` or the
    configuration file's ``policy_file``: ``agent.settings``) over ``base`` (default: the shipped
    policy), then the command's ``--policy KEY=VALUE`` overrides. A bad file or value is a
    ``PolicyError`` naming the file and the field."""
    pairs: dict[str, str] = {}
    for item in getattr(args, "policy", []) or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--policy {item!r}: expected KEY=VALUE")
        pairs[key.strip()] = value.strip()
    given = getattr(args, "policy_file", None)
    named = str(given) if given is not None else settings.current().get("policy_file")
    start = load_policy_file(Path(named), base) if named else (base or Policy())
    try:
        return start.with_overrides(pairs)
    except PolicyError as exc:
        raise PolicyError(f"--policy: {exc}", field=exc.field) from None


def policy_line(policy: Policy) -> str:
    """The policy in force, for an operator: its hash as a trace header pins it, and where it came from."""
    source = settings.current()
    named = source.get("policy_file")
    where = f"{named}, from the {source.source('policy_file')}" if named else "shipped"
    base = Policy(mode=policy.mode)
    if policy != (load_policy_file(Path(named), base) if named else base):
        where += ", changed by --policy"
    return f"policy {policy.digest()} ({where})"


def open_service(args: argparse.Namespace, *, create: bool = False) -> Service:
    """The service for a command's ``--index``/``--traces``/``--no-trace``/``--policy`` options."""
    index = resolve_location(args)
    traces = getattr(args, "traces", None)
    tracing_on = not getattr(args, "no_trace", False)
    policy = policy_from_args(args)
    service = Service.open(index, create=create, traces=traces, tracing_on=tracing_on, policy=policy)
    try:
        warn_judge_gap(service, index)
    except BaseException:
        service.close()
        raise
    return service


def warn_judge_gap(service: Service, index: Location) -> None:
    """Say on stderr, with the command that repairs it, when the lexical rule decides answer-or-refuse
    on this corpus instead of the calibrated judge: never a silent fall back."""
    gap = service.judge_gap()
    if gap is None:
        return
    flag = location_flag(index if isinstance(index, str) else Path(index))
    repair = {
        "embedder": "configure an embedder (unset EVLOOP_EMBEDDER for the built-in one)",
        "reindex": f"embed it with `evloop reindex --embeddings {flag}`",
        "calibrate": f"measure it with `evloop calibrate --self {flag}`",
        "grow": "the judge starts deciding at the ingest that brings it past that",
    }[gap.repair]
    warn(
        f"{gap.reason}: the lexical rule decides answer-or-refuse on {shown(index)}, not the "
        f"calibrated judge; {repair}"
    )


def scale_keeper(
    args: argparse.Namespace, embedder: Embedder | None, *, progress: Count | None = None
) -> ScaleKeeper | None:
    """The after-write step a command that writes a store hands it: the corpus's scale measured when
    the write makes it due, under the policy the command's questions will run with, each
    pseudo-question told to ``progress``. None without an embedder: there is then no scale to measure."""
    if embedder is None:
        return None
    controller = Controller(policy_from_args(args), embedder=embedder)
    return ScaleKeeper(controller, progress)


def measured_line(keeper: ScaleKeeper | None) -> str | None:
    """The line a write command adds when it measured the corpus's scale."""
    if keeper is None or keeper.measured is None:
        return None
    scale = keeper.measured
    return (
        f"measured the corpus's scale from {scale.samples} pseudo-questions (generation "
        f"{scale.generation}): the calibrated judge decides answer-or-refuse"
    )
