"""What the commands that listen (``evloop serve``, ``evloop mcp --http``) share: the address, the port,
and which Host and Origin headers they answer (``agent.doors.api.hosts``), decided here once for both."""

from __future__ import annotations

import argparse
import ipaddress

from evidence_loop.agent import settings
from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.doors.api.hosts import HostRules
from evidence_loop.agent.doors.cli.common import warn
from evidence_loop.tools.errors import InputError

LOOPBACK = "127.0.0.1"
ALLOW_HOSTS_ENV, ALLOW_ORIGINS_ENV = "EVLOOP_ALLOW_HOSTS", "EVLOOP_ALLOW_ORIGINS"
MAX_PORT = 65535


def add_listen_options(parser: argparse.ArgumentParser, *, port: int, what: str = "") -> None:
    """``--host``, ``--port``, ``--allow-host NAME`` and ``--allow-origin URL`` (both repeatable)."""
    parser.add_argument("--host", default=LOOPBACK, help=f"address to listen on{what} (default: {LOOPBACK})")
    parser.add_argument("--port", type=int, default=port, help=f"port to listen on{what} (default: {port})")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=None,
        metavar="NAME",
        help="also answer requests whose Host is NAME (any port) or NAME:PORT; repeatable "
        f"(default: ${ALLOW_HOSTS_ENV}, comma-separated)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=None,
        metavar="URL",
        help="also accept browser requests from this origin (https://NAME[:PORT]); repeatable "
        f"(default: ${ALLOW_ORIGINS_ENV}, comma-separated)",
    )


def listening(args: argparse.Namespace, keys: Keyring | None) -> tuple[str, HostRules]:
    """The address to bind (loopback without keys) and the Host and Origin rules it answers with:
    ``--allow-host``/``--allow-origin`` if given, else their environment variables."""
    if not 0 <= args.port <= MAX_PORT:
        raise InputError(f"--port must be from 0 to {MAX_PORT}, not {args.port}")
    host = _bound(args.host, keys)
    configured = settings.current()
    hosts = args.allow_host if args.allow_host is not None else _listed(configured.get("allow_hosts"))
    origins = args.allow_origin
    if origins is None:
        origins = _listed(configured.get("allow_origins"))
    try:
        return host, HostRules.of(host, tuple(hosts), tuple(origins))
    except ValueError as exc:
        raise InputError(f"--allow-host/--allow-origin: {exc}") from None


def _listed(value: str) -> list[str]:
    return [part for part in value.replace(",", " ").split() if part]


def _bound(host: str, keys: Keyring | None) -> str:
    """Without keys, only loopback: an unauthenticated server must not be reachable from elsewhere."""
    if keys is not None or _is_loopback(host):
        return host
    warn(f"no --keys: authentication is off, so listening on {LOOPBACK} (loopback) only, not {host}")
    return LOOPBACK


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
