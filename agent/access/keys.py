"""Who is calling: API keys from KEYS.json, their scopes, and the groups a request may read with.

KEYS.json holds only the sha256 of each key, never the key itself::

    {"keys": [{"name": "chatbot", "sha256": "<64 hex>", "groups": ["staff"], "scopes": ["ask"]}]}

A key's groups bound what its requests can read: a request may name fewer groups, never others.
Without a keys file the server runs unauthenticated on loopback only (see ``agent.doors.commands.serve``);
every request is then the ``local`` caller, trusted with every scope and the groups it names,
as the command line is.

A keyring loaded from a file follows it: at most every ``RELOAD_EVERY_S`` seconds a request looks at
the file (one ``stat``) and, when it changed, reads it again, so that ``evloop keys add|remove``
takes effect on every running ``serve`` worker and ``mcp --http`` process within a second or two,
without a restart or a signal. A file that cannot be read or is not a valid keys file changes
nothing: the keys loaded last stay in force and the reason is logged (once per change of the file).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.inputs import JsonInputError, parse_json

log = logging.getLogger(__name__)
RELOAD_EVERY_S = 1.0
"""How often a keyring loaded from a file looks at the file again (on a request)."""
_SETTLE_S = 2.0  # a file changed this recently may still be being written: look again next time

Scope = Literal["ask", "ingest", "audit", "publish", "review"]
SCOPES: tuple[Scope, ...] = ("ask", "ingest", "audit", "publish", "review")
LOCAL_CALLER = "local"
_HEX64 = r"^[0-9a-f]{64}$"


class _KeyRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    sha256: str = Field(pattern=_HEX64, description="hex sha256 of the key; the key itself is never stored")
    groups: list[str] = []
    scopes: list[Scope] = Field(min_length=1)

    @model_validator(mode="after")
    def _publish_adds_to_ingest(self) -> _KeyRecord:
        if "publish" in self.scopes and "ingest" not in self.scopes:
            raise ValueError("the scope publish (write public documents) needs the scope ingest")
        return self


class _KeysFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    keys: list[_KeyRecord]

    @model_validator(mode="after")
    def _unique(self) -> _KeysFile:
        names = [k.name for k in self.keys]
        hashes = [k.sha256 for k in self.keys]
        if len(set(names)) != len(names) or len(set(hashes)) != len(hashes):
            raise ValueError("key names and key hashes must be unique")
        return self


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One key as loaded: its name, the sha256 of its secret, the groups it reads with, its scopes."""

    name: str
    sha256: str
    groups: frozenset[str]
    scopes: frozenset[Scope]


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated caller of one request. ``groups`` None: unbounded (the local caller)."""

    name: str
    groups: frozenset[str] | None
    scopes: frozenset[Scope]

    def has(self, scope: Scope) -> bool:
        return scope in self.scopes

    def may_read(self, acl: Collection[str]) -> bool:
        """Whether a document with this ACL is within the caller's groups (empty ACL: public)."""
        return self.groups is None or not acl or any(g in self.groups for g in acl)

    def covers(self, groups: Collection[str]) -> bool:
        """Whether every one of ``groups`` is among the caller's own."""
        return self.groups is None or set(groups) <= self.groups


LOCAL = Caller(LOCAL_CALLER, None, frozenset(SCOPES))


class GroupsNotGranted(Exception):
    """A request named groups its key does not hold; ``extra`` lists them."""

    def __init__(self, extra: tuple[str, ...]) -> None:
        super().__init__(", ".join(extra))
        self.extra = extra


def narrow(caller: Caller, requested: Iterable[str] | None) -> tuple[str, ...]:
    """The groups a request reads with: the key's own unless it names a subset of them.

    Raises ``GroupsNotGranted`` for a group the key does not hold: widening is refused, not ignored.
    """
    if requested is None:
        return tuple(sorted(caller.groups or ()))
    wanted = tuple(sorted(set(requested)))
    extra = tuple(g for g in wanted if not caller.covers([g]))
    if extra:
        raise GroupsNotGranted(extra)
    return wanted


def hash_key(key: str) -> str:
    """The hex sha256 that KEYS.json stores for ``key``."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random key (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


class Keyring:
    """The keys of one KEYS.json file; looks a presented key up by its hash in constant time.

    Loaded with :meth:`load`, it follows the file (the module docstring); made from keys, it holds them.
    """

    def __init__(self, keys: Iterable[ApiKey], *, path: Path | None = None) -> None:
        self._keys = tuple(keys)
        self._path = path
        self._seen: tuple[int, int, int] | None = None  # the file's (inode, size, mtime) last read
        self._looked = time.monotonic()
        self._reported: tuple[tuple[int, int, int] | None, str] | None = None  # the last failure logged
        self._lock = threading.Lock()

    @property
    def keys(self) -> tuple[ApiKey, ...]:
        self._follow()
        return self._keys

    @classmethod
    def load(cls, path: Path) -> Keyring:
        """Read and validate KEYS.json; InputError names the file and what is wrong. The keyring
        follows the file from then on."""
        signature = _signature(path)
        keyring = cls(read_keys(path), path=path)
        keyring._seen = signature if _settled(path) else None
        return keyring

    def authenticate(self, presented: str) -> Caller | None:
        """The caller a presented key belongs to, or None. Every stored hash is compared, match or not."""
        digest = hash_key(presented)
        found: ApiKey | None = None
        for key in self.keys:
            if hmac.compare_digest(digest, key.sha256):
                found = key
        if found is None:
            return None
        return Caller(found.name, found.groups, found.scopes)

    def _follow(self) -> None:
        """Read the file again when it changed since it was read (looked at every RELOAD_EVERY_S)."""
        path = self._path
        if path is None or time.monotonic() - self._looked < RELOAD_EVERY_S:
            return
        with self._lock:
            if time.monotonic() - self._looked < RELOAD_EVERY_S:
                return
            self._looked = time.monotonic()
            signature = _signature(path)
            if signature is not None and signature == self._seen:
                return
            settled = signature is not None and _settled(path)
            self._seen = signature if settled else None  # a file still being written is read again
            try:
                keys = read_keys(path)
            except InputError as exc:
                if (settled or signature is None) and self._reported != (signature, str(exc)):
                    self._reported = (signature, str(exc))
                    log.warning("%s; keeping the %d keys loaded before", exc, len(self._keys))
                return
            self._reported = None
            if keys != self._keys:
                log.info("keys reloaded from %s: %d keys", path, len(keys))
            self._keys = keys


def read_keys(path: Path) -> tuple[ApiKey, ...]:
    """The keys of a KEYS.json file, validated; InputError names the file and what is wrong."""
    try:
        raw = parse_json(path.read_bytes())
        parsed = _KeysFile.model_validate(raw)
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such keys file; create one with `evloop keys add`") from exc
    except OSError as exc:
        raise InputError(f"{path}: the keys file cannot be read ({exc.strerror or exc})") from exc
    except JsonInputError as exc:  # not JSON or UTF-8, nested too deeply, a lone surrogate
        raise InputError(f"{path}: not a JSON keys file ({exc})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InputError(f"{path}: {where}: {first['msg']}") from exc
    return tuple(ApiKey(k.name, k.sha256, frozenset(k.groups), frozenset(k.scopes)) for k in parsed.keys)


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What tells a changed file: its inode (a rename over it), size and modification time."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _settled(path: Path) -> bool:
    """Whether the file was last modified long enough ago that a write to it is surely over."""
    try:
        return time.time() - os.stat(path).st_mtime > _SETTLE_S
    except OSError:
        return False


def keys_file_json(keys: Iterable[ApiKey]) -> str:
    """KEYS.json text for ``keys`` (sorted lists, so that rewriting a file is a stable diff)."""
    records = [
        {"name": k.name, "sha256": k.sha256, "groups": sorted(k.groups), "scopes": sorted(k.scopes)}
        for k in keys
    ]
    return json.dumps({"keys": records}, ensure_ascii=False, indent=2) + "\n"
