"""The modules of course_utils import one another without a cycle.

Every import is read from the source with ``ast``, at the top of a module and inside functions
alike (``from .x import y`` in a function is a dependency too, only a later one), and resolved to
the course_utils modules it names. A cycle makes the order of imports matter and hides which
module is built on which, so the graph must be acyclic; a failure names the cycle.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import course_utils

PACKAGE = Path(course_utils.__file__).parent


def _module_name(path: Path) -> str:
    parts = ("course_utils", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _base(name: str, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` statement of module ``name`` imports from, made absolute."""
    if not node.level:
        return node.module or ""
    here = name.split(".") if _is_package(name) else name.split(".")[:-1]  # from . / from .x / from ..x
    return ".".join(here[: len(here) - (node.level - 1)] + ([node.module] if node.module else []))


def _imported(name: str, node: ast.AST) -> set[str]:
    """The course_utils modules that one import statement of module ``name`` loads."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in MODULES}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = _base(name, node)
    found = set()
    for alias in node.names:
        if f"{base}.{alias.name}" in MODULES:  # `from . import plots`: the module course_utils.plots
            found.add(f"{base}.{alias.name}")
        elif base in MODULES:  # `from .plots import heatmap`: a name defined in course_utils.plots
            found.add(base)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the course_utils modules it imports anywhere in its source (itself excluded)."""
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = set().union(*(_imported(name, node) for node in ast.walk(tree))) - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle ``[a, b, ..., a]`` of the directed graph, or None (depth-first search, three colours)."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once fully explored
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    assert "course_utils.validation" in graph["course_utils.positional"]  # from .validation import positive_int
    assert "course_utils.data" in graph["course_utils.course_map"]  # from .data import ..., inside a function
    assert "course_utils.widgets" in graph["course_utils.figures.positional"]  # from ..widgets import ...
    assert "course_utils.figures.positional" in graph["course_utils.figures"]  # the package's __init__
    assert "course_utils.checks.engine" in graph["course_utils.checks.rnn"]


@pytest.mark.parametrize(
    "graph, cycle",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"a"}}, ["a", "b", "a"]),
        ({"a": {"b"}, "b": {"c"}, "c": {"b"}}, ["b", "c", "b"]),
        ({"a": {"a"}}, ["a", "a"]),
    ],
)
def test_find_cycle(graph, cycle):
    assert find_cycle(graph) == cycle


def test_course_utils_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle among course_utils modules: " + " -> ".join(cycle)


def test_env_imports_no_explorer():
    """env is at the bottom: the explorers ask it who is watching, never the other way round."""
    graph = import_graph()
    assert not {m for m in graph["course_utils.env"] if m.startswith(("course_utils.widgets", "course_utils.figures"))}


def test_the_package_docstring_maps_every_module():
    """Every module and subpackage of course_utils has its row in the package docstring's table."""
    import pkgutil

    import course_utils

    names = {m.name for m in pkgutil.iter_modules(course_utils.__path__)}
    listed = set(re.findall(r"^``(\w+)``", course_utils.__doc__, re.MULTILINE))
    assert names == listed, f"missing {sorted(names - listed)}, stale {sorted(listed - names)}"


def _unresolved(name: str, node: ast.AST) -> list[str]:
    """What a relative import of module ``name`` names that does not exist: a module, or a name in one."""
    if not (isinstance(node, ast.ImportFrom) and node.level):
        return []
    base = _base(name, node)
    where = f"{name} line {node.lineno}: from {'.' * node.level}{node.module or ''} import"
    if base not in MODULES:
        return [f"{where} ...: there is no module {base}"]
    module = importlib.import_module(base)
    return [f"{where} {alias.name}: {base} has no {alias.name}" for alias in node.names
            if f"{base}.{alias.name}" not in MODULES and alias.name != "*" and not hasattr(module, alias.name)]


def test_every_relative_import_names_what_exists_even_inside_a_function():
    """An import inside a function fails only when the function runs: ``make assets``' few-label stage
    failed after training for a minute and a half on ``from . import distill`` in the authoring package."""
    problems = [problem for name, path in MODULES.items()
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
                for problem in _unresolved(name, node)]
    assert not problems, "\n".join(problems)
