"""The command line is thin: the flags several commands share are defined once (the same help
wherever they appear), and each command parses, builds its configuration, calls the package
and prints, in a few lines."""

from __future__ import annotations

import ast
import pathlib

import typer

import murgat_local.cli as cli_package
from murgat_local.cli import app, flags

SHARING = ("score", "run", "generate", "rescore", "segment")
CLI = pathlib.Path(cli_package.__file__).parent
MAX_BODY = 45


def _params(command: str) -> dict:
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    found = group.get_command(ctx, command)  # type: ignore[attr-defined]
    return {opt: p for p in found.params for opt in p.opts}


def test_a_shared_flag_has_one_help_everywhere():
    shared = {
        o.param_decls[0]: o.help
        for o in vars(flags).values()
        if isinstance(o, typer.models.OptionInfo)
    }
    seen: dict[str, set[str]] = {}
    for command in SHARING:
        for opt, p in _params(command).items():
            if opt in shared:
                seen.setdefault(opt, set()).add(command)
                assert p.help == shared[opt], (command, opt, p.help)
    # the judges' and the engine's flags, and what is judged, are in more than one command
    for opt in ("--verifier", "--engine", "--base-url", "--limit", "--config", "--compat"):
        assert len(seen[opt]) > 1, (opt, seen.get(opt))
    assert seen["--verifier"] == {"score", "run"}


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
