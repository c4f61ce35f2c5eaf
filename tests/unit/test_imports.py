"""murgat_local's modules import one another one way: no import cycle, at any depth.

Every `import` and `from ... import` in the package is read with `ast`, those inside functions
and `if TYPE_CHECKING:` included (a function-level import only hides a cycle until the function
runs). An edge goes from a module to the murgat_local module it names: `from .x import y` names
`x.y` when that is a module, else `x`. Importing a submodule also runs its package's
`__init__`; that implied edge is not counted (every package imports the modules it gathers).
"""

from __future__ import annotations

import ast
import pathlib

import murgat_local

PACKAGE = pathlib.Path(murgat_local.__file__).parent
ROOT = "murgat_local"


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = [ROOT, *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _named(
    node: ast.Import | ast.ImportFrom, module: str, path: pathlib.Path, modules: dict
) -> list[str]:
    """The dotted names an import statement reaches (each a module or something inside one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(
            package[: len(package) - node.level + 1] + ([node.module] if node.module else [])
        )
    else:
        base = node.module or ""
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported murgat_local module: line of the first such import}."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name in _named(node, module, path, modules):
                while name and name not in modules:  # `a.b.thing` -> the module `a.b`
                    name = name.rpartition(".")[0]
                if name and name != module:
                    edges.setdefault(name, node.lineno)
        graph[module] = edges
    return graph


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None when the graph is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    modules = _modules()
    return "\n".join(
        f"  {a} ({modules[a].relative_to(PACKAGE.parent)}:{graph[a][b]}) imports {b}"
        for a, b in zip(cycle, cycle[1:])
    )


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert (
        len(graph) > 50
        and "murgat_local.pipeline.protocol" in graph["murgat_local.pipeline.runner"]
    )
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle:\n" + describe(cycle, graph)


def test_the_checker_sees_function_level_and_relative_imports():
    graph = import_graph()
    # a function-level import (runner.plan imports dryrun when called)
    assert "murgat_local.pipeline.dryrun" in graph["murgat_local.pipeline.runner"]
    # `from . import tools` in a package's __init__ names the module
    assert "murgat_local.cli.tools" in graph["murgat_local.cli"]
    # a cycle is found and named, however it is spelled
    bad = {
        **graph,
        "murgat_local.pipeline.dryrun": {
            **graph["murgat_local.pipeline.dryrun"],
            "murgat_local.pipeline.runner": 1,
        },
    }
    cycle = find_cycle(bad)
    assert (
        cycle
        and cycle[0] == cycle[-1]
        and {"murgat_local.pipeline.runner", "murgat_local.pipeline.dryrun"} <= set(cycle)
    )
    assert "imports murgat_local.pipeline.runner" in describe(cycle, bad)
