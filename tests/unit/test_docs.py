"""The README and the guide under docs/ say only what is true of the code: the command reference
is what the commands print, every relative link lands, and every command the README's recipes
show exists with the flags they give it."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shlex

import pytest
import typer
from typer.testing import CliRunner

from murgat_local.cli import app

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 12 * 1024


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts/gen_cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the command reference


def test_the_command_reference_is_what_the_commands_say():
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == _generator().render(), (
        "docs/cli.md differs from the commands: run `python scripts/gen_cli_docs.py`"
    )


def _listed_by_help() -> list[str]:
    """The command names `murgat --help` lists in its Commands panel."""
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    panel = result.output.split("Commands", 1)[1]
    return re.findall(r"^[│|] ([a-z][a-z0-9-]*) ", panel, flags=re.M)


def test_every_command_murgat_help_lists_is_in_the_reference():
    names = _listed_by_help()
    assert len(names) >= 10 and "score" in names, names
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [n for n in names if f"## `murgat {n}`" not in text]
    assert not missing, f"not in docs/cli.md: {missing}; run `python scripts/gen_cli_docs.py`"


# ---------------------------------------------------------------- links


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: pathlib.Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _prose(page), flags=re.M):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _prose(page: pathlib.Path) -> str:
    """The page without its fenced code blocks (a `#` line there is no heading, a link no link)."""
    return re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)


def _links(page: pathlib.Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", _prose(page))  # inline code holds no links
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_the_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size < README_LIMIT, f"README.md is {size} bytes; the reference belongs in docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):  # http:, https:, mailto:
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link} (no {target.relative_to(ROOT)})")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link} (no heading #{anchor} in {target.relative_to(ROOT)})")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


def test_the_guide_pages_are_all_linked_from_the_readme():
    linked = {pathlib.Path(link.partition("#")[0]).name for link in _links(ROOT / "README.md")}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set()


# ---------------------------------------------------------------- the README's recipes


def _recipe_commands() -> list[list[str]]:
    """Each `murgat ...` line of the README's shell blocks, continuations joined, comments and
    leading VAR=value assignments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```(?:bash|sh|shell)\n(.*?)^```", text, flags=re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                words.pop(0)
            if words and words[0] == "murgat":
                commands.append(words)
    return commands


def _command(words: list[str]):
    """The click command a `murgat` line runs (subcommands followed), and its context."""
    command = typer.main.get_command(app)
    ctx = typer.Context(command, info_name="murgat")
    for word in words[1:]:
        if word.startswith("-") or not hasattr(command, "list_commands"):
            break
        sub = command.get_command(ctx, word)
        assert sub is not None, f"`murgat {word}` is not a command: {' '.join(words)}"
        command, ctx = sub, typer.Context(sub, info_name=word, parent=ctx)
    return command


def test_the_readme_recipes_use_real_commands_and_flags():
    commands = _recipe_commands()
    assert len(commands) >= 10, commands
    for words in commands:
        command = _command(words)
        options = {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
        shown = {w.split("=", 1)[0] for w in words if w.startswith("--")}
        assert shown <= options, f"{' '.join(words)}: no such option {sorted(shown - options)}"


def test_the_recipe_check_catches_a_flag_that_does_not_exist():
    command = _command(["murgat", "score", "x.jsonl", "--no-such-flag"])
    options = {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
    assert "--judge" in options and "--no-such-flag" not in options
