"""Shared by the HTTP API tests: test keys, the sample help centre in a temp index, clients."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fastapi.testclient import TestClient

from evidence_loop.agent.access.keys import ApiKey, Scope, hash_key
from evidence_loop.agent.doors.api import Keyring, Limits, create_app
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.types import DocumentInput


class Reply(Protocol):
    """What the tests read of a response (the test client's and httpx's alike)."""

    @property
    def status_code(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def text(self) -> str: ...
    def json(self, **kwargs: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Key:
    """A test key: its name, its plain secret, its groups and scopes."""

    name: str
    secret: str
    groups: tuple[str, ...]
    scopes: tuple[Scope, ...]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secret}"}


PUBLIC = Key("public-bot", "pk-public", (), ("ask",))
STAFF = Key("staff-bot", "pk-staff", ("staff",), ("ask",))
INGEST_PUBLIC = Key("public-importer", "pk-import", (), ("ingest",))
INGEST_STAFF = Key("staff-importer", "pk-import-staff", ("staff",), ("ingest",))
AUDIT_PUBLIC = Key("public-auditor", "pk-audit", (), ("audit",))
AUDIT_STAFF = Key("staff-auditor", "pk-audit-staff", ("staff",), ("audit",))
ADMIN = Key("admin", "pk-admin", ("staff", "sales"), ("ask", "ingest", "audit", "publish"))
ALL_KEYS = (PUBLIC, STAFF, INGEST_PUBLIC, INGEST_STAFF, AUDIT_PUBLIC, AUDIT_STAFF, ADMIN)


def keyring(keys: tuple[Key, ...] = ALL_KEYS) -> Keyring:
    """The keyring a server holding ``keys`` would load (only hashes)."""
    return Keyring(ApiKey(k.name, hash_key(k.secret), frozenset(k.groups), frozenset(k.scopes)) for k in keys)


def open_sample(folder: Path, extra: tuple[DocumentInput, ...] = ()) -> Service:
    """A traced service over the sample help centre (with its staff-only document) and ``extra``."""
    service = Service.open(folder / "index", create=True)
    service.ingest([*load_sample_kb(), *extra])
    return service


def api_client(
    service: Service,
    limits: Limits | None = None,
    *,
    local: bool = False,
    keys_for: tuple[Key, ...] = ALL_KEYS,
) -> TestClient:
    """An in-process client for ``keys_for`` (``local``: no keys at all).

    A server error is the 500 response a real client gets (the app answers it and does not re-raise);
    the test's captured log has its traceback.
    """
    keys = None if local else keyring(keys_for)
    return TestClient(create_app(service, keys, limits or Limits()))
