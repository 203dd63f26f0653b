"""Who may see a run: one rule for every door (the HTTP trace and history routes, the MCP tools, the
audit console, and the earlier turns a question reads back through the library).

A caller sees its own runs, or any run when it holds the ``audit`` scope; never a run that read
with groups the caller does not hold. A run absent, never written (``UnwrittenTraceError``) or
hidden is the same ``NotFoundError``: a caller cannot tell them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from evidence_loop.agent.access.keys import SCOPES, Caller
from evidence_loop.tools.errors import NotFoundError, UnwrittenTraceError
from evidence_loop.traces import Trace


def may_see(caller: Caller, owner: str | None, groups: Collection[str]) -> bool:
    """Own runs, or any run with scope audit; never a run that read with groups the caller lacks."""
    return (caller.has("audit") or owner == caller.name) and caller.covers(groups)


def reading_with(groups: Collection[str], name: str = "") -> Caller:
    """The caller a library door runs as (``Service.ask``'s history): trusted as an operator, so it
    sees any run, but only those read with groups among ``groups``."""
    return Caller(name, frozenset(groups), frozenset(SCOPES))


def visible_trace(read: Callable[[str], Trace], caller: Caller, run_id: str) -> Trace:
    """The trace of ``run_id`` (``read`` is the service's ``trace``) if this caller may see it;
    ``NotFoundError``, the same one, when it is absent, unwritten or hidden."""
    try:
        trace = read(run_id)
    except (NotFoundError, UnwrittenTraceError):  # a run never recorded has no trace to show
        trace = None
    if trace is None or not may_see(caller, trace.header.caller, trace.header.groups):
        raise NotFoundError(f"no trace for run {run_id!r}")
    return trace
