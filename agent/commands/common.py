"""What the ``evloop`` commands share: index folder, group lists, subparsers, progress and output lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

from evidence_loop.agent import settings
from evidence_loop.policies.config import Policy
from evidence_loop.tools import windows
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.models.embedder import build_embedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.printable import printable
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import IngestReport, Store
from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.tools.store.pg import is_url, redact
from evidence_loop.tools.types import Hit

INDEX_ENV = "EVLOOP_INDEX"
STORE_ENV = "EVLOOP_STORE_URL"
DEFAULT_INDEX = Path(".evloop")
# A bar for a handful of documents is noise; a big batch on a pipe still deserves one.
PROGRESS_MIN_DOCUMENTS = 200

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


@contextmanager
def progress_bar(total: int, *, enabled: bool) -> Iterator[Callable[[int], None] | None]:
    """A tqdm bar on stderr for ``total`` documents, or None when disabled.

    Yields the callback ``Store.ingest`` calls with the number of documents written so far.
    """
    if not enabled:
        yield None
        return
    from tqdm import tqdm  # only the ingest path pays for importing it

    with tqdm(total=total, unit="doc", file=sys.stderr, leave=False, dynamic_ncols=True) as bar:

        def advance(done: int) -> None:
            bar.update(done - bar.n)

        yield advance


@contextmanager
def embedding_bar(
    *, enabled: bool, desc: str = "embedding", unit: str = "unit"
) -> Iterator[Callable[[int, int], None] | None]:
    """A tqdm bar on stderr for the units being embedded (its total known at the first call), or for
    other long work counted the same way (``desc``, ``unit``)."""
    if not enabled:
        yield None
        return
    from tqdm import tqdm

    bars: list[tqdm] = []

    def advance(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, leave=False))
        bars[0].update(done - bars[0].n)

    try:
        yield advance
    finally:
        for bar in bars:
            bar.close()


def configured_embedder() -> Embedder | None:
    """The embedder the settings configure (``EVLOOP_EMBEDDER``, ``EVLOOP_EMBED_CONFIG``...)."""
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
    config = EmbedConfig.from_env(settings.current().environ())
    if config.backend == "none":
        return None
    path = cache or (Path(config.cache) if config.cache else DEFAULT_CACHE.expanduser())
    return build_embedder(replace(config, cache=str(path)))


def want_progress(total: int, no_progress: bool) -> bool:
    """Show a bar when stderr is a terminal, or for a batch large enough to be worth watching."""
    return not no_progress and (sys.stderr.isatty() or total > PROGRESS_MIN_DOCUMENTS)


def shown(location: Location) -> str:
    """A store's location for people: the folder, or the URL without its password."""
    return redact(location) if isinstance(location, str) else str(location)


def summary_line(report: IngestReport, index: Location, *, source_skipped: int = 0) -> str:
    """The one line an ingest ends with; ``source_skipped`` adds documents dropped while reading files."""
    skipped = len(report.skipped) + source_skipped
    return (
        f"ingested {report.documents} documents ({report.versions_added} new versions, "
        f"{report.unchanged} unchanged, {skipped} skipped), {report.units} units "
        f"in {report.seconds:.2f}s -> {shown(index)}"
    )


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
    unit = hit.unit
    return windows.section_path(snapshot.parsed(unit.doc_id, unit.version), unit.section_id)


def recall(
    snapshot: Snapshot,
    embedder: Embedder | None,
    query: str,
    k: int,
    groups: Sequence[str] = (),
    policy: Policy | None = None,
) -> list[Hit]:
    """The raw recall step as the loop runs it under ``policy`` (default: the shipped one): hybrid
    when the index has vectors and the embedder is the one that made them, lexical otherwise."""
    policy = policy or Policy()
    made_by = snapshot.embedder
    similarities = None
    if embedder is not None and made_by is not None and embedder.identity.key == made_by.key:
        similarities = snapshot.similarities(embedder.queries([query])[0], groups)
    return snapshot.search(
        query,
        k,
        groups=groups,
        similarities=similarities,
        **policy.recall_options(),
    )


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
    "Store",
    "Subparsers",
    "add_command",
    "add_embed_cache_option",
    "add_index_option",
    "configured_embedder",
    "embedding_bar",
    "error_line",
    "evaluation_embedder",
    "hit_line",
    "hit_record",
    "open_location",
    "open_store",
    "parse_groups",
    "progress_bar",
    "recall",
    "resolve_index",
    "resolve_location",
    "shown",
    "summary_line",
    "want_progress",
    "warn",
]
