"""Which Host and Origin headers a server answers: the guard against pages in a user's browser, the
same for ``evloop serve`` (the API and the console) and ``evloop mcp --http``.

A page on any site can make the user's browser POST a form to ``http://127.0.0.1:PORT`` (a form
needs no CORS preflight), and a site whose DNS name is rebound to 127.0.0.1 can read the replies as
its own. Without ``--keys`` either would act as the local caller. So every request is checked
before anything else reads it:

- ``Host`` must name this server: ``127.0.0.1``, ``localhost`` or ``[::1]`` with its port, the
  address given with ``--host`` (unless a wildcard) or the one the connection arrived on, or a
  name given with ``--allow-host`` (``NAME`` matches any port, ``NAME:PORT`` that port only).
  A rebound name is none of these: 421 ``host-not-allowed``.
- ``Origin``, when a browser sends one, must be the server's own (``http://`` or ``https://``
  and the Host) or one given with ``--allow-origin``: else 403 ``origin-not-allowed``.

Clients that are not browsers (curl, the chatbot's backend) send no Origin and the Host they dialled.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from evidence_loop.agent.doors.api.problems import PROBLEM_JSON

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})
HTTP_DEFAULT_PORT = 80
# A name (or a bracketed IPv6 address), then an optional port: what a Host header holds.
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[^\s/\\@?#:\[\],;\"'<>]+)(:[0-9]{1,5})?")


@dataclass(frozen=True, slots=True)
class HostRules:
    """The server's address and the extra names and origins an operator allows (lower-cased)."""

    bound: str = "127.0.0.1"
    hosts: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()

    @classmethod
    def of(cls, bound: str, hosts: tuple[str, ...] = (), origins: tuple[str, ...] = ()) -> HostRules:
        """Checked and normalised; ``ValueError`` names the value that is not a host or an origin."""
        return cls(_bracketed(bound.lower()), tuple(map(host_name, hosts)), tuple(map(origin, origins)))

    def to_json(self) -> str:
        """For the environment of worker processes (``from_json`` reads it back)."""
        return json.dumps({"bound": self.bound, "hosts": self.hosts, "origins": self.origins})

    @classmethod
    def from_json(cls, text: str) -> HostRules:
        """What ``to_json`` wrote; ``{}`` is the default (loopback only)."""
        given = json.loads(text)
        return cls.of(
            given.get("bound", "127.0.0.1"), tuple(given.get("hosts", ())), tuple(given.get("origins", ()))
        )


def host_name(given: str) -> str:
    """``NAME`` or ``NAME:PORT`` as a Host header spells it, lower-cased."""
    name = given.strip().lower()
    if not _HOST.fullmatch(name):
        raise ValueError(f"{given!r} is not a host name (NAME or NAME:PORT, without a scheme or a path)")
    return name


def origin(given: str) -> str:
    """``scheme://host[:port]`` as a browser sends it in Origin, lower-cased, without a trailing /."""
    value = given.strip().lower().rstrip("/")
    scheme, sep, rest = value.partition("://")
    if not sep or scheme not in ("http", "https") or not rest:
        raise ValueError(f"{given!r} is not an origin (http://NAME[:PORT] or https://NAME[:PORT])")
    host_name(rest)
    return value


def _bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


class HostOriginMiddleware:
    """Refuse, before anything reads it, a request whose Host or Origin is not this server's."""

    def __init__(self, app: ASGIApp, rules: HostRules) -> None:
        self.app = app
        self._names = frozenset(h.encode() for h in rules.hosts if not _has_port(h))
        self._exact = frozenset(h.encode() for h in rules.hosts if _has_port(h))
        self._origins = frozenset(o.encode() for o in rules.origins)
        fixed = [*LOOPBACK_NAMES, *([rules.bound] if rules.bound not in WILDCARDS else [])]
        self._fixed = tuple(dict.fromkeys(fixed))
        self._by_address: dict[object, frozenset[bytes]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = sent_origin = None
        for name, value in scope["headers"]:
            if name == b"host":
                host = value.lower()
            elif name == b"origin":
                sent_origin = value.lower()
        if host is not None and not self._host_allowed(host, scope.get("server")):
            shown = host.decode("latin-1")
            detail = f"this server does not answer for the host {shown!r}; " + _ALLOW_HOST
            await _refuse(scope, send, 421, "host-not-allowed", "Host not allowed", detail)
        elif sent_origin is not None and not self._origin_allowed(sent_origin, host):
            shown = sent_origin.decode("latin-1")
            detail = f"requests from the origin {shown!r} are not accepted; " + _ALLOW_ORIGIN
            await _refuse(scope, send, 403, "origin-not-allowed", "Origin not allowed", detail)
        else:
            await self.app(scope, receive, send)

    def _host_allowed(self, host: bytes, server: object) -> bool:
        if isinstance(server, list):  # uvicorn's is a tuple, the test client's a list
            server = tuple(server)
        accepted = self._by_address.get(server)
        if accepted is None:
            accepted = self._by_address[server] = self._accepted_at(server)
        if host in accepted or host in self._exact:
            return True
        colon = host.rfind(b":")
        if colon > host.rfind(b"]") and host[colon + 1 :].isdigit():
            return host[:colon] in self._names
        return host in self._names

    def _accepted_at(self, server: object) -> frozenset[bytes]:
        """The Host values that name this server at the (address, port) a connection arrived on."""
        if not (isinstance(server, tuple | list) and len(server) == 2):  # (address, port)
            return frozenset()
        address, port = server
        names = [*self._fixed, _bracketed(str(address).lower())]
        spelled = [f"{name}:{port}" for name in names]
        if port == HTTP_DEFAULT_PORT:  # a browser leaves the default port out of Host
            spelled += names
        return frozenset(s.encode() for s in spelled)

    def _origin_allowed(self, sent: bytes, host: bytes | None) -> bool:
        if sent in self._origins:
            return True
        if host is None:
            return False
        return sent.endswith(host) and sent[: len(sent) - len(host)] in (b"http://", b"https://")


_ALLOW_HOST = "an operator can allow a name with `--allow-host NAME` ($EVLOOP_ALLOW_HOSTS)"
_ALLOW_ORIGIN = "an operator can allow one with `--allow-origin URL` ($EVLOOP_ALLOW_ORIGINS)"


def _has_port(name: str) -> bool:
    colon = name.rfind(":")
    return colon > name.rfind("]") and name[colon + 1 :].isdigit()


async def _refuse(scope: Scope, send: Send, status: int, slug: str, title: str, detail: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": title})  # policy violation
        return
    body = json.dumps(
        {"type": f"urn:evloop:problem:{slug}", "title": title, "status": status, "detail": detail}
    ).encode()
    headers = [(b"content-type", PROBLEM_JSON.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
