"""Who may see a run is one rule (agent.access.run_access), and every door keeps it: the HTTP trace routes,
the MCP tools, the audit console's list and the earlier turns a question reads back."""

from __future__ import annotations

import pytest

from evidence_loop.agent.access.keys import Caller
from evidence_loop.agent.access.run_access import may_see, visible_trace
from evidence_loop.agent.doors.api import toolkit
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import NotFoundError

ASKER = Caller("bot", frozenset({"staff"}), frozenset({"ask"}))
OTHER = Caller("other-bot", frozenset({"staff"}), frozenset({"ask"}))
AUDITOR = Caller("auditor", frozenset({"staff"}), frozenset({"audit"}))
PUBLIC_AUDITOR = Caller("auditor", frozenset(), frozenset({"audit"}))
WARRANTY = "LM-S10 的整机保修期是多久？"


def test_a_caller_sees_its_own_runs_and_not_anothers() -> None:
    assert may_see(ASKER, "bot", ["staff"]) and not may_see(OTHER, "bot", ["staff"])


def test_an_auditor_sees_any_run_read_with_groups_it_holds_and_no_other() -> None:
    assert may_see(AUDITOR, "bot", ["staff"]) and not may_see(PUBLIC_AUDITOR, "bot", ["staff"])


def test_no_caller_sees_its_own_run_read_with_groups_it_no_longer_holds() -> None:
    assert not may_see(Caller("bot", frozenset(), frozenset({"ask"})), "bot", ["staff"])


def _unwritten(service: Service) -> str:
    """A run whose trace file is empty (what an older version left on a full disk)."""
    run_id = service.ask(WARRANTY).run_id
    assert service.traces is not None
    (service.traces.path(run_id).parent / "unwritten-run.jsonl").write_bytes(b"")
    return "unwritten-run"


def test_an_unwritten_run_is_not_found_like_an_unknown_one(service: Service) -> None:
    unwritten = _unwritten(service)
    with pytest.raises(NotFoundError) as first:
        visible_trace(service.trace, AUDITOR, unwritten)
    with pytest.raises(NotFoundError) as second:
        visible_trace(service.trace, AUDITOR, "no-such-run")
    assert str(first.value).replace(unwritten, "X") == str(second.value).replace("no-such-run", "X")


def test_the_mcp_replay_of_an_unwritten_run_is_not_found(service: Service) -> None:
    with pytest.raises(NotFoundError):
        toolkit.replay(service, AUDITOR, _unwritten(service))


def test_a_question_following_an_unwritten_run_is_not_found(service: Service) -> None:
    unwritten = _unwritten(service)
    with pytest.raises(NotFoundError, match="no trace"):
        service.ask("那质保呢？", history=[{"question": WARRANTY, "run_id": unwritten}])


def test_the_mcp_replay_hides_another_callers_run(service: Service) -> None:
    run_id = toolkit.ask(service, ASKER, WARRANTY).run_id
    with pytest.raises(NotFoundError):
        toolkit.replay(service, OTHER, run_id)
    assert toolkit.replay(service, ASKER, run_id).identical
