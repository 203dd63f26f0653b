"""Where a command finds the knowledge base: --index DIR, --store URL, or the environment."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.common import DEFAULT_INDEX, resolve_location
from evidence_loop.tools.errors import InputError

URL = "postgresql://evloop@db.internal/kb"


def args(index: str | None = None, store: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(index=Path(index) if index else None, store=store)


@pytest.mark.parametrize(
    ("given", "environ", "expected"),
    [
        (args(), {}, DEFAULT_INDEX),
        (args(store=URL), {}, URL),
        (args(index="kb"), {"EVLOOP_STORE_URL": URL}, Path("kb")),  # a flag beats the environment
        (args(), {"EVLOOP_STORE_URL": URL, "EVLOOP_INDEX": "kb"}, URL),
        (args(), {"EVLOOP_INDEX": "kb"}, Path("kb")),
    ],
)
def test_the_store_is_the_flag_given_else_the_environment_else_the_default_folder(
    given: argparse.Namespace, environ: dict[str, str], expected: object
) -> None:
    assert resolve_location(given, environ) == expected


def test_both_flags_at_once_are_refused() -> None:
    with pytest.raises(InputError, match="not both"):
        resolve_location(args(index="kb", store=URL), {})


def test_a_store_that_is_not_a_postgresql_url_is_refused() -> None:
    with pytest.raises(InputError, match="postgresql://"):
        resolve_location(args(store="kb/"), {})
