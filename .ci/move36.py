"""Move agent/ and traces/ into sub-packages by concept (issue 36), with no content change.

Run from the repository's root, on a clean tree, with the project's venv (it calls ruff):

    python .ci/move36.py            # move, rewrite, format; then review `git diff --stat` and commit
    python .ci/move36.py --plan     # print the moves as JSON (old path -> new path), change nothing

What it does, in order, and nothing else:

1. Refuses to run on a tree with uncommitted changes, on a tree already moved (any new package
   folder exists), or when a module of agent/ or traces/ is placed by no rule below: it names every
   such file and stops, so that a module added since the plan is placed on purpose (add it to MOVES
   or KEEP and run again). The one rule that places files it does not name: a file inside a folder
   that moves whole (agent/api/, agent/commands/) moves with its folder.
2. `git mv`es every file (a folder that moves whole, file by file) and writes the new packages'
   ``__init__.py`` (a docstring only).
3. Rewrites every reference to a moved module in the repository's text files: dotted names, with or
   without the ``evidence_loop.`` prefix (imports, ``import ... as``, monkeypatch targets and logger
   names in strings, pyproject's entry point and package data, ``python -m ...`` in docs and
   scripts), paths (``agent/controller.py``, ``agent/api/static``), and ``from PACKAGE import
   module`` lists, which are split by the module's new package. Recorded traces (tests/agent/golden,
   tests/agent/written), data files, the CHANGELOG (history) and docs/wings.json (issue 26's plan)
   are left as they are.
4. Rewrites the one reference made relative to a module's own place (``FIXUPS``: the command
   line finds its commands by ``__package__``), breaks the docstring, comment and ``# fmt: skip``
   lines a longer name made too long, and formats the Python files it changed (``ruff check
   --select I --fix``, ``ruff format``): the imports sorted and wrapped as the house style wants.

After it: ``tests/test_layout.py`` holds the wings' rules (a separate commit), and ``ruff check``,
``ruff format --check``, ``mypy`` and the tests are the check that nothing else changed.

The same tree in gives the same tree out: the plan is data, and files are visited in sorted order.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

# The plan: old path -> new path, from the repository's root. A folder moves whole (with its files
# that are not named elsewhere in this map, its data files and any file added to it later).
MOVES: dict[str, str] = {
    # agent/loop/: one question's trip (the controller and the steps it takes), its conversation, its
    # trace while it runs and its replay, the scale it is judged on, and a run's export.
    "agent/controller.py": "agent/loop/controller.py",
    "agent/growth.py": "agent/loop/growth.py",
    "agent/assemble.py": "agent/loop/assemble.py",
    "agent/events.py": "agent/loop/events.py",
    "agent/runtime.py": "agent/loop/runtime.py",
    "agent/conflict_check.py": "agent/loop/conflict_check.py",
    "agent/llm_adjudicator.py": "agent/loop/llm_adjudicator.py",
    "agent/conversation.py": "agent/loop/conversation.py",
    "agent/history.py": "agent/loop/history.py",
    "agent/async_door.py": "agent/loop/async_door.py",
    "agent/tracing.py": "agent/loop/tracing.py",
    "agent/replay.py": "agent/loop/replay.py",
    "agent/calibrate.py": "agent/loop/calibrate.py",
    "agent/render.py": "agent/loop/render.py",
    "agent/run_export.py": "agent/loop/run_export.py",
    "agent/otel.py": "agent/loop/otel.py",
    "agent/spans.py": "agent/loop/spans.py",
    # agent/tuning/: evaluation sets, their scoring and attribution, and fitting from feedback.
    "agent/evaluate.py": "agent/tuning/evaluate.py",
    "agent/eval_kinds.py": "agent/tuning/eval_kinds.py",
    "agent/expansion.py": "agent/tuning/expansion.py",
    "agent/attribution.py": "agent/tuning/attribution.py",
    "agent/review_set.py": "agent/tuning/review_set.py",
    "agent/feedback_fit.py": "agent/tuning/feedback_fit.py",
    "agent/feedback_choice.py": "agent/tuning/feedback_choice.py",
    "agent/feedback_reviews.py": "agent/tuning/feedback_reviews.py",
    # agent/access/: who may call (keys) and who may write.
    "agent/api/auth.py": "agent/access/keys.py",
    "agent/write_access.py": "agent/access/write_access.py",
    "agent/run_access.py": "agent/access/run_access.py",
    # agent/doors/: the front doors over the service, one wing each: the command line (cli/: the
    # `evloop` entry, its shared options, the sample help centre; commands/: one module a command)
    # and the doors for programs (api/: the HTTP API, and the MCP tools, which share its hosts,
    # schemas and keys).
    "agent/cli.py": "agent/doors/cli/app.py",
    "agent/commands/common.py": "agent/doors/cli/common.py",
    "agent/sample.py": "agent/doors/cli/sample.py",
    "agent/commands": "agent/doors/commands",
    "agent/api": "agent/doors/api",
    "agent/toolkit.py": "agent/doors/api/toolkit.py",
    "agent/mcp_server.py": "agent/doors/api/mcp_server.py",
    "agent/mcp_stdio.py": "agent/doors/api/mcp_stdio.py",
    "agent/strict_schema.py": "agent/doors/api/strict_schema.py",
    # traces/records/: a run's records, their encoding and hashing, read and written.
    "traces/steps.py": "traces/records/steps.py",
    "traces/schema.py": "traces/records/schema.py",
    "traces/hashing.py": "traces/records/hashing.py",
    "traces/encode.py": "traces/records/encode.py",
    "traces/reader.py": "traces/records/reader.py",
    "traces/writer.py": "traces/records/writer.py",
    "traces/batch.py": "traces/records/batch.py",
    "traces/blobs.py": "traces/records/blobs.py",
    # traces/journal/: the day's files: journals, manifest, index, appends and the run chain's links.
    "traces/journal.py": "traces/journal/journal.py",
    "traces/journal_flush.py": "traces/journal/journal_flush.py",
    "traces/journal_store.py": "traces/journal/journal_store.py",
    "traces/manifest.py": "traces/journal/manifest.py",
    "traces/appends.py": "traces/journal/appends.py",
    "traces/group_sync.py": "traces/journal/group_sync.py",
    "traces/run_chain.py": "traces/journal/run_chain.py",
    "traces/run_index.py": "traces/journal/run_index.py",
    "traces/finished_lines.py": "traces/journal/finished_lines.py",
    # traces/verification/: a run, a chain and a day verified; the citations checked.
    "traces/verify.py": "traces/verification/verify.py",
    "traces/chain_verify.py": "traces/verification/chain_verify.py",
    "traces/day_verify.py": "traces/verification/day_verify.py",
    "traces/citations.py": "traces/verification/citations.py",
    "traces/pg_chain.py": "traces/verification/pg_chain.py",
    # traces/feedback/: reviewers' verdicts, chained, in either store.
    "traces/feedback.py": "traces/feedback/feedback.py",
    "traces/feedback_chain.py": "traces/feedback/feedback_chain.py",
    "traces/feedback_folder.py": "traces/feedback/feedback_folder.py",
    "traces/feedback_pg.py": "traces/feedback/feedback_pg.py",
    # traces/stores/: the folder and PostgreSQL trace stores, and retention.
    "traces/store.py": "traces/stores/store.py",
    "traces/pg_store.py": "traces/stores/pg_store.py",
    "traces/pg_rows.py": "traces/stores/pg_rows.py",
    "traces/retention.py": "traces/stores/retention.py",
    # traces/reading/: runs listed, shown and compared.
    "traces/listing.py": "traces/reading/listing.py",
    "traces/run_rows.py": "traces/reading/run_rows.py",
    "traces/render.py": "traces/reading/render.py",
    "traces/diff.py": "traces/reading/diff.py",
}
# What stays at the top of agent/ and traces/.
KEEP = {
    "agent/__init__.py",
    "agent/service.py",
    "agent/outcome.py",
    "agent/settings.py",
    "agent/logs.py",
    "traces/__init__.py",
}
# Each new package and its docstring.
PACKAGES: dict[str, str] = {
    "agent/loop": "One question's trip: the controller, its steps, conversation, trace and replay.",
    "agent/tuning": "Evaluation sets scored and attributed, and the judge fitted from reviewers' feedback.",
    "agent/access": "Who may call (the HTTP API's keys) and who may write which documents.",
    "agent/doors": "The front doors over the service: the command line, the HTTP API and the MCP tools.",
    "agent/doors/cli": "``evloop``: the entry that assembles the commands, their shared options, the sample.",
    "traces/records": "A run's records: their steps and schema, encoded, hashed, read and written.",
    "traces/journal": "The day's files: journals of frames, manifest, index, the run chain's links.",
    "traces/verification": "A run, its chain and a whole day verified, and its citations checked.",
    "traces/feedback": "Reviewers' verdicts on runs, chained, in a folder or PostgreSQL.",
    "traces/stores": "The trace stores (a folder, PostgreSQL) and what they keep.",
    "traces/reading": "Runs listed, shown and compared.",
}
ROOTS = ("agent", "traces")
# References made relative to a module's own place, which the move would break: (the file after the
# move, the text, the text that names the same module from anywhere). Each must be found once.
FIXUPS: tuple[tuple[str, str, str], ...] = (
    (
        "agent/doors/cli/app.py",
        'f"{__package__}.commands.',
        'f"evidence_loop.agent.doors.commands.',
    ),
)
# Text files whose references are rewritten, and what is never touched.
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ".sh", ""}
UNTOUCHED_PREFIXES = ("tests/agent/golden/", "tests/agent/written/", ".ci/move36.py")
UNTOUCHED = {"CHANGELOG.md", "docs/wings.json", "LICENSE"}


def fail(message: str) -> None:
    print(f"move36: {message}", file=sys.stderr)
    raise SystemExit(2)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def tracked(prefix: str) -> list[str]:
    return sorted(line for line in git("ls-files", "-z", "--", prefix).split("\0") if line)


def file_moves() -> dict[str, str]:
    """Every tracked file under agent/ and traces/ that moves, old path -> new path (a folder's files
    one by one; a file the map names itself takes its own place)."""
    moves: dict[str, str] = {}
    for old, new in sorted(MOVES.items()):
        if old.endswith(".py"):
            moves[old] = new
            continue
        for path in tracked(old + "/"):
            if path not in MOVES:
                moves[path] = new + path[len(old) :]
    return moves


def check_tree() -> dict[str, str]:
    if git("status", "--porcelain", "--untracked-files=no").strip():
        fail("the tree has uncommitted changes: commit or stash them first")
    done = [folder for folder in PACKAGES if Path(folder).exists()]
    if done:
        fail(f"already moved ({', '.join(done)} exist): this script runs once, on the tree before the move")
    moves = file_moves()
    missing = sorted(old for old in MOVES if not Path(old).exists())
    if missing:
        fail(f"the plan names files that are not here: {', '.join(missing)}")
    unplaced = [
        path
        for root in ROOTS
        for path in tracked(root + "/")
        if path.endswith(".py") and path not in moves and path not in KEEP
    ]
    if unplaced:
        fail(
            "modules that the plan does not place (add each to MOVES or KEEP in .ci/move36.py): "
            + ", ".join(unplaced)
        )
    relative = [
        path
        for root in ROOTS
        for path in tracked(root + "/")
        if path.endswith(".py")
        and any(
            isinstance(node, ast.ImportFrom) and node.level
            for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8")))
        )
    ]
    if relative:
        fail(f"relative imports, which this script does not rewrite: {', '.join(relative)}")
    return moves


# --- names -------------------------------------------------------------------------------------


def module_map(moves: dict[str, str]) -> dict[str, str]:
    """Old dotted name (``agent.api.auth``, a package ``agent.api``) -> new dotted name."""
    names: dict[str, str] = {}

    def dotted(path: str) -> str:
        parts = path.removesuffix(".py").split("/")
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    for old, new in moves.items():
        if old.endswith(".py"):
            names[dotted(old)] = dotted(new)
    for old, new in MOVES.items():
        if not old.endswith(".py"):
            names[dotted(old)] = dotted(new)
    return names


def mapped(dotted: str, names: dict[str, str]) -> str:
    """The longest moved prefix of ``dotted`` (``agent.controller.Controller.ask``) replaced."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        head = ".".join(parts[:end])
        if head in names:
            return ".".join([names[head], *parts[end:]])
    return dotted


DOTTED = re.compile(r"(?<![\w.])(evidence_loop\.)?((?:agent|traces)(?:\.\w+)+)")
PATH = re.compile(r"(?<![\w/.-])((?:agent|traces)(?:/[\w.-]+)+/?)")


def rewrite_dotted(match: re.Match[str], names: dict[str, str]) -> str:
    prefix, dotted = match.group(1) or "", match.group(2)
    return prefix + mapped(dotted, names)


def rewrite_path(match: re.Match[str], names: dict[str, str]) -> str:
    path = match.group(1)
    trailing = "/" if path.endswith("/") else ""
    parts = path.rstrip("/").split("/")
    # The module part: every segment without a dot, and a last segment `name.py`.
    module: list[str] = []
    for index, part in enumerate(parts):
        if "." not in part:
            module.append(part)
            continue
        if part.endswith(".py") and index == len(parts) - 1 and "." not in part[:-3]:
            module.append(part[:-3])
            new = mapped(".".join(module), names).replace(".", "/") + ".py"
            return new + trailing
        break
    rest = parts[len(module) :]
    new = mapped(".".join(module), names).replace(".", "/")
    return "/".join([new, *rest]) + trailing


def rewrite_text(text: str, names: dict[str, str]) -> str:
    text = DOTTED.sub(lambda m: rewrite_dotted(m, names), text)
    return PATH.sub(lambda m: rewrite_path(m, names), text)


def bound_in_init(package: str) -> set[str]:
    """The names a package's ``__init__.py`` binds (imports, definitions, assignments, and the names
    a lazy ``__getattr__`` table hands on): ``from PACKAGE import NAME`` then reads that name, not a
    module of the same name (``traces.verify`` is a module, ``from evidence_loop.traces import
    verify`` the function)."""
    init = Path(package.replace(".", "/")) / "__init__.py"
    if not init.is_file():
        return set()
    names: set[str] = set()
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Dict):
            names.update(
                key.value for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)
            )
    return names


def split_from_import(
    node: ast.ImportFrom, names: dict[str, str], modules: set[str], bound: dict[str, set[str]]
) -> list[str] | None:
    """``from evidence_loop.agent import logs, tracing`` as one statement per new package, or None
    when no name it imports is a moved module."""
    assert node.module is not None
    package = node.module.removeprefix("evidence_loop.")

    def is_module(name: str) -> bool:
        return f"{package}.{name}" in modules and name not in bound.get(package, set())

    if not node.module.startswith("evidence_loop.") or not any(is_module(alias.name) for alias in node.names):
        return None
    groups: dict[str, list[str]] = {}
    for alias in node.names:
        if is_module(alias.name):
            parent, _, leaf = mapped(f"{package}.{alias.name}", names).rpartition(".")
            bound_as = alias.asname or alias.name
            text = leaf if bound_as == leaf else f"{leaf} as {bound_as}"
        else:
            parent = mapped(package, names)
            text = alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"
        groups.setdefault(parent, []).append(text)
    return [f"from evidence_loop.{parent} import {', '.join(items)}" for parent, items in groups.items()]


def words_spans(text: str) -> list[tuple[int, int]]:
    """Where a Python file holds words, not code: its strings and comments (as offsets)."""
    starts = line_starts(text)
    spans = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT):
            spans.append(
                (starts[token.start[0] - 1] + token.start[1], starts[token.end[0] - 1] + token.end[1])
            )
    return spans


def line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def inside(position: int, spans: list[tuple[int, int]]) -> bool:
    index = bisect.bisect_right(spans, (position, sys.maxsize)) - 1
    return index >= 0 and spans[index][0] <= position < spans[index][1]


def rewrite_python(text: str, names: dict[str, str], modules: set[str], bound: dict[str, set[str]]) -> str:
    """Rewrite a Python file: `from PACKAGE import module` lists (by the AST, on the old names); every
    other ``evidence_loop.`` name and path anywhere; a name without the prefix (``agent.controller``)
    only in strings and comments, since in code it is an attribute (``traces.feedback``)."""
    starts = line_starts(text)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
            continue
        statements = split_from_import(node, names, modules, bound)
        if statements is None:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        edits.append((start, end, ("\n" + " " * node.col_offset).join(statements)))
    taken = sorted((start, end) for start, end, _ in edits)
    words = words_spans(text)
    for match in DOTTED.finditer(text):
        if inside(match.start(), taken) or (match.group(1) is None and not inside(match.start(), words)):
            continue
        new = rewrite_dotted(match, names)
        if new != match.group(0):
            edits.append((match.start(), match.end(), new))
    for match in PATH.finditer(text):
        if inside(match.start(), taken):
            continue
        new = rewrite_path(match, names)
        if new != match.group(0):
            edits.append((match.start(), match.end(), new))
    out: list[str] = []
    position = 0
    for start, end, new in sorted(edits):
        out.append(text[position:start])
        out.append(new)
        position = end
    out.append(text[position:])
    return "".join(out)


LIMIT = 110  # pyproject's line-length


def wrap_long_lines(text: str, before: str) -> str:
    """Lines a longer name made too long, broken at a space (a docstring's or a comment's words) or
    after a comma (code under ``# fmt: skip``, which the formatter leaves): what ruff format cannot.
    A line that was as long before (``before``, the file as it was) is left as it was."""
    kept = set(before.splitlines())
    lines = text.splitlines(keepends=True)
    if all(len(line.rstrip("\n")) <= LIMIT for line in lines):
        return text
    docstrings: set[int] = set()
    skipped: set[int] = set()  # the lines of statements left to their author by `# fmt: skip`
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docstrings.update(range(node.lineno, node.end_lineno + 1))
        elif "# fmt: skip" in lines[node.end_lineno - 1]:
            skipped.update(range(node.lineno, node.end_lineno + 1))
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    comments = {token.start[0]: token.start[1] for token in tokens if token.type == tokenize.COMMENT}
    strings = {
        token.start[0]: token
        for token in tokens
        if token.type == tokenize.STRING and token.start[0] == token.end[0]
    }
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        body = line.rstrip("\n")
        if len(body) <= LIMIT or body in kept:
            out.append(line)
            continue
        indent = " " * (len(body) - len(body.lstrip()))
        if number in comments and comments[number] == len(indent):  # a comment line
            cut = body.rfind(" ", 0, LIMIT + 1)
            out.append(body[:cut] + "\n" + indent + "# " + body[cut + 1 :] + line[len(body) :])
        elif number in docstrings:
            cut = body.rfind(" ", len(indent) + 4, LIMIT + 1)
            out.append(body[:cut] + "\n" + indent + body[cut + 1 :] + line[len(body) :])
        elif number in skipped:
            cut = body.rfind(", ", 0, LIMIT)
            out.append(body[: cut + 1] + "\n" + indent + body[cut + 2 :] + line[len(body) :])
        elif number in strings and (split := split_string(strings[number].string)) is not None:
            token = strings[number]  # one string in two, which ruff format then puts on two lines
            out.append(body[: token.start[1]] + split + body[token.end[1] :] + line[len(body) :])
        else:
            out.append(line)
    return "".join(out)


def split_string(literal: str) -> str | None:
    """``"a\\nb"`` as ``"a\\n" "b"`` (split after its last escaped newline), or None."""
    prefix = literal[: len(literal) - len(literal.lstrip("rbfuRBFU"))]
    quote = literal[len(prefix)]
    if "r" in prefix.lower() or literal[len(prefix) : len(prefix) + 3] == quote * 3:
        return None
    cut = literal.rfind("\\n", 0, len(literal) - 3)
    if cut <= len(prefix):
        return None
    return f"{literal[: cut + 2]}{quote} {prefix}{quote}{literal[cut + 2 :]}"


# --- the move ----------------------------------------------------------------------------------


def candidates() -> list[str]:
    return [
        path
        for path in tracked(".")
        if Path(path).suffix in TEXT_SUFFIXES
        and path not in UNTOUCHED
        and not path.startswith(UNTOUCHED_PREFIXES)
        and not Path(path).is_symlink()
        and Path(path).is_file()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="store_true", help="print the moves as JSON and change nothing")
    args = parser.parse_args()
    if not (Path("pyproject.toml").is_file() and Path("evidence_loop").is_dir()):
        fail("run it from the repository's root")
    if args.plan:
        print(json.dumps({"move": dict(sorted(MOVES.items()))}, indent=1))
        return
    moves = check_tree()
    names = module_map(moves)
    modules = set(names)
    bound = {
        package: bound_in_init(package) for package in sorted({name.rpartition(".")[0] for name in names})
    }
    for old, new in moves.items():
        Path(new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", old, new)
    for folder, docstring in sorted(PACKAGES.items()):
        init = Path(folder) / "__init__.py"
        if not init.exists():
            init.write_text(f'"""{docstring}"""\n', encoding="utf-8")
            git("add", str(init))
    for old in sorted(MOVES):  # the old folders, with only caches left in them
        if not old.endswith(".py") and Path(old).is_dir():
            subprocess.run(["rm", "-rf", old], check=True)
    changed: list[str] = []
    for path in candidates():
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if file.suffix == ".py":
            new = rewrite_python(text, names, modules, bound)
            new = wrap_long_lines(new, text) if new != text else new
        else:
            new = rewrite_text(text, names)
        if new != text:
            file.write_text(new, encoding="utf-8")
            changed.append(path)
    for path, text, fixed in FIXUPS:
        file = Path(path)
        content = file.read_text(encoding="utf-8")
        if content.count(text) != 1:
            fail(f"{path}: expected {text!r} once, found it {content.count(text)} times")
        file.write_text(content.replace(text, fixed), encoding="utf-8")
        changed = sorted({*changed, path})
    python = [path for path in changed if path.endswith(".py")]
    if python:
        ruff = [sys.executable, "-m", "ruff"]
        subprocess.run([*ruff, "check", "--select", "I", "--fix", "--quiet", *python], check=False)
        subprocess.run([*ruff, "format", "--quiet", *python], check=True)
    git("add", "-A", "--", *ROOTS, *changed)
    print(f"move36: {len(moves)} files moved, {len(PACKAGES)} packages made, {len(changed)} files rewritten")


if __name__ == "__main__":
    main()
