"""The architecture stays visible: imports between the design's packages point one way only, and
every import names them through the one distribution name.

The rules, which this file states and checks (it is their one home):

- ``tools`` (mechanisms: parsing, stores, indexes, models, the network) imports no other project
  package;
- ``policies`` (pure decisions and thresholds) imports ``tools``' value types, its error tree and its
  pure text and window arithmetic only (``types``, ``errors``, ``tokenize``, ``windows``); any other
  ``tools`` module only under ``if TYPE_CHECKING:``, for an annotation;
- ``traces`` (the audit record) imports neither ``agent`` nor ``policies``;
- ``agent`` (the loop and its front doors) imports all three;
- inside ``policies`` and ``tools`` each concept has its wing (a subpackage), and the arrows between
  wings point one way (``WINGS``): in ``policies``, ``question`` reads only the top (``config``,
  ``presets``, ``lexicon``, ``types``, ``judge_model``), ``evidence`` reads ``question``, and
  ``conflicts`` and ``decision`` read both; in ``tools``, ``search`` reads ``models`` and ``store``
  reads ``search``, ``models`` and ``parse``; the top of each reads no wing. A wing of ``policies``
  is at most five floors deep;
- ``agent`` and ``traces`` have wings too (``WINGS``). In ``agent``: ``loop`` (one question's trip,
  its trace and replay) and ``access`` (keys, who may write) read only the top; ``tuning`` reads
  ``loop``; the doors read what is below them: ``doors.cli`` (the ``evloop`` entry and its shared
  options) only the top, ``doors.api`` (HTTP and MCP) ``cli``, and ``doors.commands`` both. At the
  top, ``outcome``, ``settings`` and ``logs`` read no wing and ``service`` reads ``loop`` and
  ``access`` (``TOP_READS``); ``tuning`` and the doors stand above it. In ``traces``: ``records``
  at the bottom; ``journal`` and ``feedback`` read it; ``verification`` reads ``journal``;
  ``stores`` reads those four; ``reading`` reads ``stores`` and below; the package's face
  (``traces/__init__.py``) hands on names from any wing;
- seen from the top of ``agent`` and ``traces``, each wing one room: no circle between rooms (no
  arrow runs back up) and at most six floors;
- no import circle anywhere in the four packages, counting every import (``TYPE_CHECKING`` and
  imports inside functions too): a circle is a knot that no layer or wing rule sees;
- nothing imports a package by its bare folder name (``import agent``), only as
  ``evidence_loop.agent``, and ``evidence_loop/`` holds only the links to the four folders and the
  ``integrations`` subpackage (adapters for other frameworks, which no layer imports).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "evidence_loop"
PACKAGES = ("agent", "tools", "policies", "traces")
INTEGRATIONS = "integrations"  # a real subpackage of the namespace, above every layer
# The rules of the module docstring, as data.
ALLOWED: dict[str, set[str]] = {
    "tools": set(),
    "policies": {"tools"},
    "traces": {"tools"},
    "agent": {"tools", "policies", "traces"},
}
# "Types only", made exact: at run time policies may use the value types, the error tree, the pure
# text and window arithmetic over them and the check of input text (a policy file is read); any
# other tools module (a store, an index, a model, the network) only under `if TYPE_CHECKING:`, for
# an annotation.
POLICIES_RUNTIME_TOOLS = {
    "tools.types",
    "tools.errors",
    "tools.tokenize",
    "tools.windows",
    "tools.inputs",
}
# The wings of policies and tools, each with the wings it may import (besides its own modules and
# the top of its package). A module at the top of a package is named in TOPS and imports no wing.
WINGS: dict[str, set[str]] = {
    "policies.question": set(),
    "policies.evidence": {"policies.question"},
    "policies.conflicts": {"policies.question", "policies.evidence"},
    "policies.decision": {"policies.question", "policies.evidence"},
    "tools.parse": set(),
    "tools.models": set(),
    "tools.search": {"tools.models"},
    "tools.store": {"tools.search", "tools.models", "tools.parse"},
    "agent.loop": set(),
    "agent.access": set(),
    "agent.tuning": {"agent.loop"},
    "agent.doors": set(),
    "agent.doors.cli": set(),
    "agent.doors.api": {"agent.doors.cli", "agent.access", "agent.loop", "agent.tuning"},
    "agent.doors.commands": {
        "agent.doors.cli",
        "agent.doors.api",
        "agent.access",
        "agent.loop",
        "agent.tuning",
    },
    "traces.records": set(),
    "traces.journal": {"traces.records"},
    "traces.feedback": {"traces.records"},
    "traces.verification": {"traces.records", "traces.journal"},
    "traces.stores": {"traces.records", "traces.journal", "traces.feedback", "traces.verification"},
    "traces.reading": {"traces.records", "traces.journal", "traces.stores"},
}
TOPS: dict[str, set[str]] = {
    "policies": {"config", "presets", "lexicon", "types", "judge_model"},
    "tools": {"types", "errors", "tokenize", "windows", "settings_file", "disk", "inputs", "printable"},
    "agent": {"service", "outcome", "settings", "logs"},
    "traces": set(),  # only the package's face, __init__.py
}
# The modules at the top that read wings below them (every other top module reads none).
TOP_READS: dict[str, set[str]] = {
    "agent.service": {"agent.loop", "agent.access"},
    "traces": {wing for wing in WINGS if wing.startswith("traces.")},
}
WING_FLOORS = 5  # the deepest chain of imports inside one wing of policies, in modules
TOP_FLOORS = 6  # the deepest chain of rooms at the top of agent and of traces (a wing is one room)


def _sources() -> list[Path]:
    folders = (*PACKAGES, f"{NAMESPACE}/{INTEGRATIONS}", "tests", "benchmarks")
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once a session: the rules below read the same files many times."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _imports(path: Path, *, runtime_only: bool = False) -> frozenset[str]:
    """Absolute module names a file imports (``runtime_only``: leaving out `if TYPE_CHECKING:` blocks)."""
    tree = _tree(path)
    skipped: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) in {
                "TYPE_CHECKING",
                "typing.TYPE_CHECKING",
            }:
                skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return frozenset(names)


def _module_of(path: Path) -> str:
    """``ROOT/tools/store/folder.py`` -> ``tools.store.folder`` (a package's ``__init__`` is the package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Every module of the four packages with the project modules it imports, by any import at all
    (``from evidence_loop.tools.store import vectors`` reaches ``tools.store.vectors``); a copy of
    the graph built once a session, so that a test may change its own."""
    return {module: set(deps) for module, deps in _built_graph().items()}


@functools.cache
def _built_graph() -> dict[str, frozenset[str]]:
    modules = {_module_of(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}
    graph: dict[str, frozenset[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Import):
                found.update(layer for alias in node.names if (layer := _layer(alias.name)) in modules)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                base = _layer(node.module)
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        found.add(f"{base}.{alias.name}")
                    elif base in modules:
                        found.add(base)
        graph[name] = frozenset(found - {name})
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _wing(module: str) -> str | None:
    """``policies.evidence.selection`` (or the package ``policies.evidence``) -> ``policies.evidence``;
    the innermost wing (``agent.doors.cli.app`` -> ``agent.doors.cli``); None at the top of a package."""
    parts = module.split(".")
    wings = [".".join(parts[:end]) for end in range(len(parts), 1, -1) if ".".join(parts[:end]) in WINGS]
    return wings[0] if wings else None


def _room(module: str) -> str:
    """The room a module is seen as from the top of its package: its outermost wing, or itself."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and ".".join(parts[:2]) in WINGS else module


def _rooms(package: str) -> dict[str, set[str]]:
    """The top of ``package`` as rooms (each wing one room) and the rooms each imports."""
    rooms: dict[str, set[str]] = {}
    for module, deps in _graph().items():
        if module.split(".")[0] != package or module == package:
            continue
        room = _room(module)
        rooms.setdefault(room, set()).update(
            _room(dep) for dep in deps if dep.split(".")[0] == package and dep != package
        )
    return {room: deps - {room} for room, deps in rooms.items()}


def _layer(module: str) -> str | None:
    """``evidence_loop.tools.store.folder`` -> ``tools.store.folder``; None for a module outside the
    project."""
    head, _, rest = module.partition(".")
    return rest if head == NAMESPACE and rest else None


def _within(module: str, rule: str) -> bool:
    return module == rule or module.startswith(rule + ".")


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_packages_below_it(package: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in sorted(_imports(path))
        if (layer := _layer(module)) is not None
        and not _within(layer, package)
        and not any(_within(layer, rule) for rule in ALLOWED[package])
    ]
    assert wrong == []


def test_policies_use_only_the_types_and_pure_arithmetic_of_tools_at_run_time() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / "policies").rglob("*.py"))
        for module in sorted(_imports(path, runtime_only=True))
        if (layer := _layer(module)) is not None
        and _within(layer, "tools")
        and not any(_within(layer, rule) for rule in POLICIES_RUNTIME_TOOLS)
    ]
    assert wrong == []


def test_nothing_imports_a_package_by_its_bare_folder_name() -> None:
    """A bare `import agent` works from a checkout but not from the installed wheel: it would hide
    a break until a user installs it (and collide with a chatbot backend's own `agent/`)."""
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in _sources()
        for module in sorted(_imports(path))
        if module.split(".")[0] in PACKAGES
    ]
    assert wrong == []


def test_the_namespace_folder_links_to_the_design_folders_and_holds_nothing_else() -> None:
    """Besides the links, one real folder: ``integrations``, the adapters to chatbot frameworks,
    which sit above every layer (they use the front door) and exist only under the namespace."""
    folder = ROOT / NAMESPACE
    found = {path.name for path in folder.iterdir() if path.name != "__pycache__"}
    assert found == {*PACKAGES, INTEGRATIONS, "__init__.py", "py.typed"}
    for package in PACKAGES:
        link = folder / package
        assert link.is_symlink() and link.resolve() == (ROOT / package).resolve()
    assert (folder / INTEGRATIONS).is_dir() and not (folder / INTEGRATIONS).is_symlink()


def test_no_layer_imports_the_integrations() -> None:
    """The integrations import the frameworks of their extras: a layer importing one would make the
    extra a requirement of the core."""
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in sorted(_imports(path))
        if (layer := _layer(module)) is not None and _within(layer, INTEGRATIONS)
    ]
    assert wrong == []


def test_no_import_circle_anywhere() -> None:
    """A circle ties its modules into one: none may be read, tested or moved without the others."""
    assert _circles(_graph()) == []


def test_every_module_of_a_package_with_wings_is_in_a_wing_or_named_at_the_top() -> None:
    """A new module lands in the wing of its concept (or is added to the top on purpose)."""
    wrong = [
        module
        for module in sorted(_graph())
        if (package := module.split(".")[0]) in TOPS
        and module != package
        and _wing(module) is None
        and module.removeprefix(package + ".") not in TOPS[package]
    ]
    assert wrong == []


def test_the_arrows_between_wings_point_one_way() -> None:
    graph = _graph()
    wrong = []
    for module, deps in sorted(graph.items()):
        package = module.split(".")[0]
        if package not in TOPS:
            continue
        wing = _wing(module)
        allowed = WINGS.get(wing, set()) if wing else TOP_READS.get(module, set())
        for dep in sorted(deps):
            other = _wing(dep)
            if dep.split(".")[0] == package and other is not None and other != wing and other not in allowed:
                wrong.append(f"{module} imports {dep}")
    assert wrong == []


def test_no_wing_of_policies_is_deeper_than_five_floors() -> None:
    graph = _graph()
    floors: dict[str, int] = {}

    def floor(module: str) -> int:
        if module not in floors:
            inside = [d for d in graph[module] if _wing(d) == _wing(module)]
            floors[module] = 1 + max((floor(d) for d in inside), default=0)
        return floors[module]

    deep = {m: floor(m) for m in graph if m.startswith("policies.") and _wing(m) in WINGS}
    assert {m: n for m, n in deep.items() if n > WING_FLOORS} == {}


@pytest.mark.parametrize("package", ["agent", "traces"])
def test_the_rooms_at_the_top_of_agent_and_traces_form_no_circle(package: str) -> None:
    """A circle between rooms is an arrow that runs back up: a wing that reads a wing above it."""
    assert _circles(_rooms(package)) == []


@pytest.mark.parametrize("package", ["agent", "traces"])
def test_agent_and_traces_stand_at_most_six_floors_high_at_their_top(package: str) -> None:
    rooms = _rooms(package)
    floors: dict[str, int] = {}

    def floor(room: str, seen: frozenset[str] = frozenset()) -> int:
        if room not in floors:
            below = [floor(dep, seen | {room}) for dep in rooms.get(room, set()) if dep not in seen]
            floors[room] = 1 + max(below, default=0)
        return floors[room]

    assert {room: n for room in rooms if (n := floor(room)) > TOP_FLOORS} == {}


def test_the_circle_finder_finds_a_circle() -> None:
    """The rule above can fail: two modules that import each other, and a third on a loop of three."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert _circles(graph) == [["a", "b"], ["c", "d", "e"]]
