"""The command line is thin: each command parses, builds its configuration, calls the package
and prints, in a few lines (its options are built from their declarations: test_cli_options)."""

from __future__ import annotations

import ast
import pathlib

import murgat_local.cli as cli_package

CLI = pathlib.Path(cli_package.__file__).parent
MAX_BODY = 45


def _commands(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            isinstance(d, ast.Call) and getattr(d.func, "attr", None) == "command"
            for d in node.decorator_list
        ):
            yield node


def test_no_command_function_is_longer_than_45_lines():
    long = {}
    for path in sorted(CLI.glob("*.py")):
        for fn in _commands(ast.parse(path.read_text(encoding="utf-8"))):
            body = fn.body[1:] if ast.get_docstring(fn) else fn.body
            lines = body[-1].end_lineno - body[0].lineno + 1  # type: ignore[operator]
            if lines > MAX_BODY:
                long[f"{path.name}:{fn.name}"] = lines
    assert long == {}, "parse, build the configuration, call the package, print"
