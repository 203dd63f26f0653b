"""``evloop``: the command-line front door. This module only assembles the commands.

Each command lives in its own module under ``agent.doors.commands`` and exposes ``register(subparsers)``
and ``run(args) -> int``; adding a command is one line in ``COMMANDS``. Errors from the project's
error tree become one line on stderr (``evloop: error: ...`` with a hint) and exit code 2 for bad
input, 1 for anything else, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TextIO, cast

from evidence_loop.tools.errors import (
    DecodeError,
    DocumentTooLargeError,
    EmbedderError,
    EvidenceLoopError,
    IndexStateError,
    InputError,
    MalformedRecordError,
    NotFoundError,
    StoreStateError,
    StoreUnavailableError,
    TraceStoreUnavailableError,
    UnsupportedFormatError,
    VersionClashError,
)
from evidence_loop.tools.printable import printable


@dataclass(frozen=True)
class Command:
    """One ``evloop`` command: its name, the line ``evloop --help`` shows (the summary its module
    registers; a test holds them equal), and the module under ``agent.doors.commands`` that runs it."""

    name: str
    summary: str

    @property
    def module_name(self) -> str:
        return f"evidence_loop.agent.doors.commands.{self.name.replace('-', '_')}"

    def load(self) -> ModuleType:
        return importlib.import_module(self.module_name)


# In the order `evloop --help` lists them. A command's module (and what it imports: the web app for
# serve, the store and its indexes for docs) is imported only when that command runs.
COMMANDS: tuple[Command, ...] = (
    Command("ingest", "add documents to the index, or sync it with changed files"),
    Command("search", "show the units recall finds for a query"),
    Command("ask", "answer one question"),
    Command("chat", "ask questions in a conversation"),
    Command("batch", "answer a questions.jsonl file"),
    Command("eval", "score the loop on an evaluation set"),
    Command("calibrate", "fit the answer-or-refuse judge, or measure an index's scale"),
    Command("docs", "list the documents in the index"),
    Command("delete", "remove a document from search"),
    Command("reindex", "rebuild the index files"),
    Command("check", "say what is damaged in the index"),
    Command("trace", "list, show, verify, export traces"),
    Command("feedback", "list and export reviewers' verdicts"),
    Command("replay", "replay traced runs"),
    Command("demo", "ingest the sample help centre and ask it questions"),
    Command("serve", "serve the HTTP API"),
    Command("mcp", "serve the tools to MCP clients"),
    Command("tool-schema", "print the function-calling schema of the ask tool"),
    Command("keys", "manage the HTTP API's keys"),
    Command("migrate", "create or upgrade a PostgreSQL store"),
    Command("config", "show the settings in force"),
)

EXIT_OK, EXIT_ERROR, EXIT_INPUT = 0, 1, 2
_SURROGATE = re.compile("[\ud800-\udfff]")

# Most specific first: the first class the error is an instance of gives the hint.
HINTS: tuple[tuple[type[EvidenceLoopError], str], ...] = (
    (MalformedRecordError, "fix or remove that line; nothing was written"),
    (UnsupportedFormatError, "convert the file to .md, .txt, .html or .jsonl; nothing was written"),
    (DecodeError, "save the file as UTF-8; nothing was written"),
    (DocumentTooLargeError, "split the document or raise --max-mb; nothing was written"),
    (VersionClashError, "give the new text a new --version, or pass --replace; nothing was written"),
    (InputError, "nothing was written"),
    (NotFoundError, "`evloop docs` lists the documents in the index"),
    (
        TraceStoreUnavailableError,
        "free space where the traces are kept, or give another folder with --traces; "
        "--no-trace answers without a trace",
    ),
    (StoreUnavailableError, "is the server up? --store or $EVLOOP_STORE_URL chooses the database"),
    (
        StoreStateError,
        "`evloop migrate --store URL` brings the database's schema up to date; its server log says "
        "why a statement failed",
    ),
    (IndexStateError, "`evloop ingest PATH` or `evloop demo` creates an index; --index chooses the folder"),
    (
        EmbedderError,
        "EVLOOP_EMBEDDER, EVLOOP_EMBED_BASE_URL/_MODEL or EVLOOP_EMBED_CONFIG choose the embedder",
    ),
)

REPAIR_MARK = "`evloop "  # how a message names its own repair: the command, backquoted
OS_HINT = "check the path, its permissions and the free space"

DESCRIPTION = """\
evidence-loop: grounded answers for support chatbots. Ingest a knowledge base, then search it;
every hit points at exact character offsets in one document version."""

EPILOG = """\
examples:
  evloop demo                       ingest the bundled sample help centre and search it
  evloop ingest docs/ --acl staff   add a folder of .md/.txt/.html files, readable by staff only
  evloop search "LM-S10 保修" -k 5   show the best hit units

run `evloop COMMAND --help` for a command's options."""


# The settings (agent.settings) a command's flags set, by the attribute argparse gives them.
FLAGS = {
    "index": "index",
    "store_url": "store",
    "policy_file": "policy_file",
    "embed_workers": "embed_workers",
    "otel": "otel",
    "otel_endpoint": "otel_endpoint",
}


class _Parser(argparse.ArgumentParser):
    """argparse as the commands expect it; every subcommand's parser is one of these too."""

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # Python 3.11 drops a "--" given as an option's own value (`--index=--`, `-k--`) and hands the
        # command an empty list, past the option's type; later Pythons read it as the value "--".
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            return self._get_value(action, "--")
        return super()._get_values(action, arg_strings)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``evloop`` parser. Every command is registered by its module; with ``only``, that command
    alone, and the others by name and summary (what ``evloop --help`` shows), their modules not
    imported."""
    parser = _Parser(
        prog="evloop",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for command in COMMANDS:
        if only is None or command.name == only:
            command.load().register(subparsers)
        else:
            subparsers.add_parser(command.name, help=command.summary, add_help=False)
    return parser


def chosen_command(argv: Sequence[str]) -> str:
    """The command an argv names: its first word that is not an option ("" when there is none;
    argparse says what is wrong with a word that names no command)."""
    return next((word for word in argv if not word.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (argparse's own usage errors and --help included)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=chosen_command(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    from evidence_loop.agent import logs, settings  # after parsing: `evloop --help` needs neither

    run: Callable[[argparse.Namespace], int] = args.run
    settings.install({name: getattr(args, attr, None) for name, attr in FLAGS.items()})
    logs.configure()
    _tolerate_unencodable_output()
    try:
        _refuse_undecodable(args)
        with _printable_stdout():
            return run(args)
    except EvidenceLoopError as exc:
        return _report(exc)
    except BrokenPipeError:
        # `evloop search ... | head`: the reader left; stop quietly, as other Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except OSError as exc:
        # Permissions, a full disk, a path that is a file where a folder is needed: the user can act on it.
        _error_line(str(exc), OS_HINT)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("evloop: interrupted", file=sys.stderr)
        return 130


def _refuse_undecodable(args: argparse.Namespace) -> None:
    """Text arguments must be UTF-8: Python hands argv bytes that are not as lone surrogates, which no
    trace, index or JSON line can hold. Paths are exempt: a file name may be any bytes."""
    for name, value in vars(args).items():
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, str) and _SURROGATE.search(item):
                raise InputError(
                    f"{name.replace('_', '-')} '{_as_bytes(item)}' is not valid UTF-8; "
                    "type it in a UTF-8 terminal (a UTF-8 locale such as LANG=C.UTF-8)"
                )


def _as_bytes(text: str) -> str:
    """``"\\udcff warranty"`` as the user typed it: ``\\xff warranty``."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no byte decodes to: show its code point
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


class _PrintableStream:
    """``sys.stdout`` while a command runs: every line it prints shows stored text's control and bidi
    characters as escapes (``tools.printable``), newlines and tabs kept. A question an end user wrote
    cannot clear the operator's screen, retitle the window or reverse a line; a JSON line stays JSON."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(printable(text, keep="\n\t"))

    def __getattr__(self, name: str) -> Any:  # flush, fileno, buffer, isatty, encoding ...
        return getattr(self._stream, name)


@contextmanager
def _printable_stdout() -> Iterator[None]:
    given = sys.stdout
    sys.stdout = cast(TextIO, _PrintableStream(given))
    try:
        yield
    finally:
        sys.stdout = given


def _tolerate_unencodable_output() -> None:
    """A file name that is not UTF-8 is printed as escapes (``\\udcff``) rather than failing the command."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def _hint(exc: EvidenceLoopError, message: str) -> str:
    """The hint of the error's class; none for a damaged or missing store whose message names its own
    repair (two repairs side by side, one of them generic, leave the reader to choose)."""
    if isinstance(exc, IndexStateError) and REPAIR_MARK in message:
        return ""
    return next((text for cls, text in HINTS if isinstance(exc, cls)), "")


def _error_line(message: str, hint: str) -> None:
    from evidence_loop.agent.doors.cli.common import error_line  # imported by every command already

    error_line(message, hint)


def _report(exc: EvidenceLoopError) -> int:
    """Print the error as one line with its hint; the exit code says whether the input was at fault."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    _error_line(message, _hint(exc, message))
    return EXIT_INPUT if isinstance(exc, InputError) else EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
