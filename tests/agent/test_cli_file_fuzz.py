"""Fuzzing what the `evloop` commands read from files and from the store: hostile content, not argv.

Each example writes a generated file (JSON records holding lone surrogates, control and bidi
characters, oversize text, too many history turns; JSON nested past the limit; bytes that are not
UTF-8; truncations and plain garbage) where one command reads it, runs the command in-process
through ``agent.doors.cli.app.main`` with stdout as a strict UTF-8 terminal, and holds it to the issue's
rule: no traceback and no exception escaping, exit 0 or exit 2 with one ``evloop: error:`` line
(``trace verify`` may say a file FAILED, exit 1), no partial output file left, and nothing on stdout
a terminal would obey (a control or bidi character of stored text is printed as its escape). The
commands that print stored text (``docs``, ``trace list``, ``trace show``, ``feedback list``) run
after every example, over whatever the examples stored.

The suite runs a bounded, derandomized pass (a quarter of it in the quick loop, tests/fuzz_budget.py);
``EVLOOP_FILE_FUZZ_EXAMPLES=2000`` runs a larger one (``EVLOOP_FILE_FUZZ_SEED`` picks another sequence).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from evidence_loop.agent import settings as evloop_settings
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.tools.inputs import MAX_JSON_DEPTH
from evidence_loop.tools.printable import CONTROL_AND_BIDI
from evidence_loop.tools.store.folder import Store
from tests.fuzz_budget import examples

EXAMPLES = int(os.environ.get("EVLOOP_FILE_FUZZ_EXAMPLES") or examples(80))
SEED = int(os.environ.get("EVLOOP_FILE_FUZZ_SEED", "32"))
# what a terminal would obey on stdout: every character printable escapes, save newline and tab
OBEYED = re.compile(f"[{CONTROL_AND_BIDI}]".replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))

HOSTILE_TEXT = (
    "\ud800",
    "\udcff",
    "a\udc80b",
    "\x1b]0;PWNED\x07",
    "\x1b[2J\x1b[31m",
    "\rFAKE: all runs verified",
    "\nFAKE: 0 verdicts",
    "\u202eevil",
    "\u2066iso\u2069",
    "\x00",
    "\x85\u2028",
    "LM-S10 整机保修多久？",
    "warranty?",
    "",
    " ",
    "x" * 2500,
)
KEYS = ("question", "id", "history", "groups", "doc_id", "text", "title", "version", "acl", "metadata",
        "judge", "policy", "report", "keys", "name", "sha256", "scopes", "type", "run_id")  # fmt: skip


@dataclass(frozen=True)
class Command:
    """One command that reads a file: where the file goes and the argv that reads it."""

    name: str
    suffix: str
    argv: Callable[[Path, Path], list[str]]  # (the file, the workspace) -> argv
    may_fail_verification: bool = False


def _index(workspace: Path, name: str = "index") -> list[str]:
    return ["--index", str(workspace / name)]


COMMANDS = (
    Command("ingest jsonl", ".jsonl", lambda f, w: ["ingest", str(f), *_index(w)]),
    Command("ingest md", ".md", lambda f, w: ["ingest", str(f), *_index(w)]),
    Command(
        "batch", ".jsonl", lambda f, w: ["batch", str(f), "--out", str(w / "out" / "r.jsonl"), *_index(w)]
    ),
    Command(
        "history file",
        ".json",
        lambda f, w: ["ask", "它的保修期是多久？", "--history-file", str(f), *_index(w)],
    ),
    Command("trace verify export", ".json", lambda f, w: ["trace", "verify", str(f), *_index(w)], True),
    Command("trace verify file", ".jsonl", lambda f, w: ["trace", "verify", str(f), *_index(w)], True),
    Command("trace show file", ".json", lambda f, w: ["trace", "show", str(f), *_index(w)]),
    Command("trace import", ".json", lambda f, w: ["trace", "import", str(f), *_index(w, "imported")]),
    Command("policy file", ".json", lambda f, w: ["config", "show", "--policy-file", str(f), *_index(w)]),
    Command("keys file", ".json", lambda f, w: ["keys", "list", "--file", str(f)]),
)
STORED_TEXT = (["docs"], ["trace", "list"], ["feedback", "list"])


@pytest.fixture(autouse=True)
def _flags_forgotten() -> Iterator[None]:
    """``main`` installs its flags for the whole process (a --policy-file among them): a later test's
    ``Service.open`` must not read the bad file given here."""
    yield
    evloop_settings.install({})


def hostile_text() -> st.SearchStrategy[str]:
    return st.sampled_from(HOSTILE_TEXT) | st.text(max_size=20)


def values() -> st.SearchStrategy[object]:
    leaves = st.none() | st.booleans() | st.integers(-5, 5) | hostile_text()
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from(KEYS) | hostile_text(), inner, max_size=4)
        ),
        max_leaves=12,
    )


def records() -> st.SearchStrategy[object]:
    """Records shaped like what the commands read, with hostile values in their fields."""
    turns = st.lists(hostile_text(), max_size=3) | st.just(["LM-S10 有哪些功能？"] * 40)
    question = st.fixed_dictionaries(
        {"question": hostile_text()}, optional={"history": turns, "id": hostile_text()}
    )
    fields = {"doc_id": hostile_text(), "text": hostile_text()}
    document = st.fixed_dictionaries(fields, optional={"title": hostile_text(), "metadata": values()})
    policy = st.fixed_dictionaries(
        {}, optional={"policy": values(), "window_budget": values(), "judge": values()}
    )
    return (
        question | document | policy | st.dictionaries(st.sampled_from(KEYS), values(), max_size=5) | values()
    )


def nested(body: str, levels: int) -> str:
    return "[" * levels + body + "]" * levels


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    """A file's bytes: JSON lines or a JSON document of records, then maybe nested, broken or garbled."""
    items = draw(st.lists(records(), min_size=1, max_size=3))
    ascii_only = draw(st.booleans())  # json's \\ud800 escape, or the character itself (not UTF-8 then)
    lines = [json.dumps(item, ensure_ascii=ascii_only) for item in items]
    text = draw(st.sampled_from(["\n".join(lines) + "\n", json.dumps(items, ensure_ascii=ascii_only)]))
    depth = draw(st.sampled_from([0, 0, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH + 1, 5000]))
    if depth:
        text = nested(text.strip(), depth)
    data = text.encode("utf-8", "surrogatepass")
    mangle = draw(st.sampled_from(["none", "none", "truncate", "bad byte", "garbage", "bom"]))
    if mangle == "truncate" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif mangle == "bad byte":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"])) + data[at:]
    elif mangle == "garbage":
        data = draw(st.binary(max_size=64))
    elif mangle == "bom":
        data = b"\xef\xbb\xbf" + data
    return data


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one run, stdout encoded strictly as a UTF-8 terminal's is."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
        out.flush()
        err.flush()
    return code, out.buffer.getvalue().decode("utf-8"), err.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def problem(command: Command, argv: list[str], workspace: Path) -> str | None:
    """What is wrong with running ``argv``: an escaped exception, a code, a traceback, a partial file."""
    try:
        code, out, err = run_in_process(argv)
    except BaseException as exc:  # what the fuzz is looking for: anything main lets escape
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}: {exc}"
    allowed = (0, 1, 2) if command.may_fail_verification else (0, 2)
    errors = [line for line in err.splitlines() if line.startswith("evloop: error:")]
    if code not in allowed:
        return f"exit code {code}: {err[-300:]!r}"
    if "Traceback" in err:
        return f"traceback on stderr: {err[-300:]!r}"
    if code != 0 and len(errors) != 1:
        return f"{len(errors)} error lines: {err[-300:]!r}"
    if OBEYED.search(out):
        return f"a control or bidi character on stdout: {out[:200]!r}"
    if list(workspace.rglob("*.part")):
        return f"a partial file left: {list(workspace.rglob('*.part'))}"
    if code != 0 and (workspace / "out" / "r.jsonl").exists():
        return "a results file written by a failed batch"
    return None


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("file-fuzz")
    with Store.open(root / "index", create=True) as store:
        store.ingest(load_sample_kb())
    (root / "out").mkdir()
    return root


def test_no_file_makes_a_command_print_a_traceback_or_leave_a_partial_file(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    found: dict[str, tuple[str, list[str]]] = {}
    tried = 0

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.sampled_from(COMMANDS), contents())
    def one(command: Command, data: bytes) -> None:
        nonlocal tried
        tried += 1
        path = workspace / f"input{command.suffix}"
        path.write_bytes(data)
        (workspace / "out" / "r.jsonl").unlink(missing_ok=True)
        for argv in (
            command.argv(path, workspace),
            *([*a, "--index", str(workspace / "index")] for a in STORED_TEXT),
        ):
            what = problem(command, argv, workspace)
            if what is not None:
                found.setdefault(f"{' '.join(argv[:2])}: {what[:80]}", (what, argv))

    one()

    print(f"file fuzz: {tried} files tried, {len(found)} problems", file=sys.__stderr__)
    for kind, (what, argv) in found.items():
        print(f"  {kind}\n    {what}\n    argv: {argv!r}", file=sys.__stderr__)
    assert found == {}
