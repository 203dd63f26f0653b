"""Fuzzing the `evloop` argument parsing: whatever a shell can pass, no traceback escapes.

Every command and action is found by walking the parser itself; each example is an argv of that
command's options, the paths of a small workspace (an index, corpus and question files, a symlink
loop, a file whose name is not UTF-8) and hostile text (bytes that are not UTF-8, as Python decodes
them from argv, controls, huge and odd numbers). Each runs in-process through ``agent.doors.cli.app.main``
with stdout as strict UTF-8 (as under a UTF-8 locale) and must exit 0, 1 or 2 with no traceback.
``serve`` and ``mcp`` are parsed only: running them would listen until interrupted.

The suite runs a bounded, derandomized pass (a quarter of it in the quick loop, tests/fuzz_budget.py);
``EVLOOP_CLI_FUZZ_EXAMPLES=5000`` runs a larger one (``EVLOOP_CLI_FUZZ_SEED`` picks another sequence).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from evidence_loop.agent.doors.cli.app import build_parser, main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.tools.store.folder import Store
from tests.fuzz_budget import examples

EXAMPLES = int(os.environ.get("EVLOOP_CLI_FUZZ_EXAMPLES") or examples(120))
SEED = int(os.environ.get("EVLOOP_CLI_FUZZ_SEED", "11"))
PARSE_ONLY = frozenset({("serve",), ("mcp",)})
# Asks eight questions over a fresh sample index: run with --help added, so its argv is still parsed.
SLOW = frozenset({("demo",)})

HOSTILE = (
    "\udcff warranty",  # the byte 0xff in argv, as Python decodes it (surrogateescape)
    "\udcc3\udca9",
    "a\nb",
    "line\rfeed",
    "tab\there",
    "\x1b[31mred",
    "\u202eevil",
    "",
    " ",
    "-",
    "--",
    "-1",
    "0",
    "3",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999",
    "0x10",
    "2026-01-01",
    "2026-13-45",
    "staff",
    "staff,sales",
    ",,",
    "warranty",
    "LM-S10 的整机保修期是多久？",
    "😀",
    "x" * 3000,
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the sample help centre with one traced run, and files of every kind beside it."""
    root = tmp_path_factory.mktemp("cli-fuzz")
    with Store.open(root / "index", create=True) as store:
        store.ingest(load_sample_kb())
    (root / "kb").mkdir()
    (root / "kb" / "page.md").write_text("# Page\n\nThe warranty is one year.\n", encoding="utf-8")
    (root / "loop").mkdir()
    (root / "loop" / "a.md").symlink_to("b.md")
    (root / "loop" / "b.md").symlink_to("a.md")
    (root / "badname").mkdir()
    (root / "badname" / os.fsdecode(b"\xff.md")).write_text("# Bad name\n\nText.\n", encoding="utf-8")
    (root / "corpus.jsonl").write_text(json.dumps({"doc_id": "c1", "text": "One line."}) + "\n")
    (root / "questions.jsonl").write_text(json.dumps({"id": "q1", "question": "warranty?"}) + "\n")
    (root / "evalset").mkdir()
    (root / "evalset" / "corpus.jsonl").write_text((root / "corpus.jsonl").read_text())
    (root / "evalset" / "questions.jsonl").write_text((root / "questions.jsonl").read_text())
    (root / "broken.jsonl").write_text("{not json\n")
    (root / "keys.json").write_text("[]")
    assert main(["ask", "How long is the LM-S10 warranty?", "--index", str(root / "index")]) == 0
    return root


def leaves(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every runnable (command, action) path of the parser with its own parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from leaves(sub, (*prefix, name))
            return
    yield prefix, parser


def options(parser: argparse.ArgumentParser) -> list[tuple[str, bool]]:
    """Each option string of the parser and whether it takes a value."""
    return [(flag, action.nargs != 0) for action in parser._actions for flag in action.option_strings]


def positionals(parser: argparse.ArgumentParser) -> int:
    """How many positional values the parser wants at least."""
    return sum(1 for a in parser._actions if not a.option_strings and a.nargs in (None, "+"))


def values(root: Path) -> st.SearchStrategy[str]:
    """Workspace paths, hostile text and random text that a shell could pass (no NUL, no leading /)."""
    paths = [
        str(root / name)
        for name in ("index", "kb", "loop", "badname", "corpus.jsonl", "questions.jsonl", "broken.jsonl",
                     "keys.json", "evalset", "missing", "kb/page.md", "loop/a.md", "index/traces")
    ]  # fmt: skip
    paths.append(str(next((root / "badname").iterdir())))
    paths.extend(str(p) for p in sorted((root / "index" / "traces").rglob("*.jsonl"))[:1])
    shell_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00") | st.characters(
        min_codepoint=0xDC80, max_codepoint=0xDCFF
    )
    text = st.text(shell_chars, max_size=12).filter(lambda s: not s.startswith("/") and ".." not in s)
    return st.sampled_from(paths) | st.sampled_from(HOSTILE) | text


def argvs(root: Path) -> st.SearchStrategy[list[str]]:
    """An argv for one command: its path, then options (with and without values) and bare values."""
    commands = list(leaves(build_parser()))
    value = values(root)

    def for_command(chosen: tuple[tuple[str, ...], argparse.ArgumentParser]) -> st.SearchStrategy[list[str]]:
        path, parser = chosen
        flag = st.sampled_from(options(parser))
        part = st.one_of(
            st.tuples(flag, value).map(lambda fv: [fv[0][0], fv[1]] if fv[0][1] else [fv[0][0]]),
            st.tuples(flag, value).map(lambda fv: [f"{fv[0][0]}={fv[1]}"]),
            value.map(lambda v: [v]),
        )
        # Positionals and required options always given: otherwise most argvs stop at the usage error.
        needed = positionals(parser)
        wanted = st.lists(value, min_size=needed, max_size=needed)
        required = [a.option_strings[0] for a in parser._actions if a.required and a.option_strings]
        musts = st.lists(value, min_size=len(required), max_size=len(required)).map(
            lambda vs: [t for flag_value in zip(required, vs, strict=True) for t in flag_value]
        )
        parts = st.lists(part, max_size=4)
        return st.tuples(wanted, musts, parts).map(
            lambda wmp: [*path, *wmp[0], *wmp[1], *(t for p in wmp[2] for t in p)]
        )

    return st.sampled_from(commands).flatmap(for_command)


def run_in_process(argv: list[str]) -> tuple[int, str]:
    """The exit code and stderr of one run, stdout encoded strictly as a UTF-8 terminal's would be."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv) if tuple(argv[:1]) not in PARSE_ONLY else _parse_only(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out.flush()
        err.flush()
    return code, err.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def _parse_only(argv: list[str]) -> int:
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def problem(argv: list[str]) -> tuple[str | None, int]:
    """What is wrong with running ``argv`` (an exception, a bad exit code, a traceback) and its exit code."""
    if tuple(argv[:1]) in SLOW and "--help" not in argv and "-h" not in argv:
        argv = [*argv, "--help"]  # still parses and converts everything before it
    try:
        code, err = run_in_process(argv)
    except Exception as exc:  # what the fuzz is looking for: anything main lets escape
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}: {exc}", -1
    if code not in (0, 1, 2):
        return f"exit code {code}: {err!r}", code
    if "Traceback" in err:
        return f"traceback on stderr: {err[-300:]!r}", code
    if len([line for line in err.splitlines() if line.startswith("evloop: error")]) > 1:
        return f"several error lines: {err!r}", code
    return None, code


def fuzz(root: Path, examples: int, found: dict[str, list[str]]) -> int:
    """Run ``examples`` generated argvs, return how many ran; ``found`` keeps one argv per kind of problem."""
    tried = 0
    codes: Counter[int] = Counter()

    @seed(SEED)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(argvs(root))
    def one(argv: list[str]) -> None:
        nonlocal tried
        tried += 1
        what, code = problem(argv)
        codes[code] += 1
        if what is not None:
            key = re.sub(r": .*", "", what, count=1) if " at " in what else what
            found.setdefault(f"{argv[0]}: {key}", [what, *argv])

    one()
    print(f"cli fuzz: exit codes {dict(sorted(codes.items()))}", file=sys.__stderr__)
    return tried


def test_no_argv_makes_the_cli_print_a_traceback(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVLOOP_INDEX", str(workspace / "index"))
    found: dict[str, list[str]] = {}

    tried = fuzz(workspace, EXAMPLES, found)

    print(f"cli fuzz: {tried} argv tried, {len(found)} problems", file=sys.__stderr__)
    for kind, (what, *argv) in found.items():
        print(f"  {kind}\n    {what}\n    argv: {argv!r}", file=sys.__stderr__)
    assert found == {}
