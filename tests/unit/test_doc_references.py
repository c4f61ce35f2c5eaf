"""Every repository path and every flag the README and the guide under docs/ name exists.

The rule for paths: a path that starts with one of the repository's own folders (`scripts/`,
`tests/`, `murgat_local/`, ...) names a file of the repository and must exist; a `.py` path that
starts with one of murgat_local's packages (`engines/base.py`) must exist under murgat_local/.
A path with anything before it (`/data/models/x`, `~/models`, `out/models/x`, `BUNDLE/models/x`)
is the user's and is not checked. An upper-case segment (`docs/NAME.md`) or a `*` is a
placeholder: at least one file must match it.

The rule for flags: in code (spans and fenced blocks), each `--flag` after `murgat COMMAND` is
one that command accepts, and each `--flag` after `scripts/NAME` appears in that script's source.
"""

from __future__ import annotations

import pathlib
import re

import pytest
import typer

from murgat_local.cli import app

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REPO_FOLDERS = ("docs", "locks", "models", "murgat_local", "prompts", "samples", "scripts", "tests")
PACKAGES = tuple(sorted(p.parent.name for p in (ROOT / "murgat_local").glob("*/__init__.py")))

_FENCE = re.compile(r"^```.*?^```", flags=re.M | re.S)
# A path starts a word: anything before it (`/data/`, `~/`, `out/`, `BUNDLE/`) makes it the user's.
_START = r"(?<![\w./~$@*-])(?:\./)?"
_FOLDERS = "|".join(REPO_FOLDERS)
_PKGS = "|".join(PACKAGES)
_REPO_PATH = re.compile(_START + rf"((?:{_FOLDERS})/[^\s`'\"()\[\]<>,;|]*)")
_PACKAGE_PATH = re.compile(_START + rf"((?:{_PKGS})/[\w/]*\.py)\b")


def _page_id(page: pathlib.Path) -> str:
    return str(page.relative_to(ROOT))


# ---------------------------------------------------------------- paths


def _clean(path: str) -> str:
    path = path.split("::", 1)[0].split("#", 1)[0]
    path = re.sub(r":\d+(-\d+)?$", "", path)
    return path.rstrip(".,:;!?'")


def _pattern(path: str) -> str | None:
    """The glob a placeholder path stands for (`NAME` and `...` as `*`), or None for a plain path."""
    parts = [
        re.sub(r"^[A-Z][A-Z0-9_]*(?=\.|$)", "*", p.replace("...", "*"))
        for p in path.rstrip("/").split("/")
    ]
    globbed = "/".join(parts)
    return globbed if "*" in globbed else None


def _exists(path: str, base: pathlib.Path = ROOT) -> bool:
    pattern = _pattern(path)
    if pattern is None:
        return (base / path).exists()
    return any(base.glob(pattern))


def named_paths(text: str) -> list[tuple[str, pathlib.Path]]:
    """Each repository path the text names, with the folder it is relative to."""
    found = [(_clean(m.group(1)), ROOT) for m in _REPO_PATH.finditer(text)]
    found += [(_clean(m.group(1)), ROOT / "murgat_local") for m in _PACKAGE_PATH.finditer(text)]
    return [(p, base) for p, base in found if p.strip("/") not in REPO_FOLDERS + PACKAGES]


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_repository_path_the_page_names_exists(page):
    missing = sorted(
        {
            str((base / p).relative_to(ROOT))
            for p, base in named_paths(page.read_text("utf-8"))
            if not _exists(p, base)
        }
    )
    assert not missing, f"{_page_id(page)} names paths that do not exist: {missing}"


def test_the_repository_folders_are_the_repositorys():
    for name in REPO_FOLDERS:
        assert (ROOT / name).is_dir(), name
    assert {"engines", "cli", "pipeline"} <= set(PACKAGES)


def test_the_path_rule_catches_a_missing_path_and_spares_the_users():
    text = (
        "see `tests/test_gone.py::test_x`, `scripts/gen_cli_docs.py --check`, "
        "[x](../docs/cli.md), `engines/base.py`, `engines/gone.py`, `docs/NAME.md`, "
        "`prompts/*.toml`, `tests/NAME/conftest.py`, `/data/models/x`, `~/tests/y`, "
        "`out/scripts/z`, `BUNDLE/models/gemma3-270m/config.json`."
    )
    missing = [p for p, base in named_paths(text) if not _exists(p, base)]
    assert missing == ["tests/test_gone.py", "engines/gone.py"]


# ---------------------------------------------------------------- flags


def _code(text: str) -> list[str]:
    """The page's code: each fenced line (continuations joined) and each inline span."""
    lines = []
    for block in _FENCE.findall(text):
        lines += block.replace("\\\n", " ").splitlines()[1:-1]
    lines += re.findall(r"`([^`\n]+)`", _FENCE.sub("", text))
    return lines


def _commands(line: str) -> list[list[str]]:
    """The words of each `murgat ...` or `scripts/...` call in one line of code, up to the end of
    that call (a pipe, `;`, `&&`, `#` or a closing bracket)."""
    calls = []
    for m in re.finditer(r"(?<![\w/.-])(murgat|scripts/[\w/.-]+)(?=\s|$)", line):
        rest = re.split(r"[|;#)]|&&", line[m.end() :], maxsplit=1)[0]
        calls.append([m.group(1), *rest.split()])
    return calls


def _options(command) -> set[str]:
    return {"--help", *(o for p in command.params for o in [*p.opts, *p.secondary_opts])}


def _murgat_command(words: list[str]):
    """The click command a `murgat` call runs (subcommands followed); None where the word after
    `murgat` is no command (a placeholder such as COMMAND, or prose)."""
    command = typer.main.get_command(app)
    ctx = typer.Context(command, info_name="murgat")
    for i, word in enumerate(words[1:]):
        if word.startswith("-") or not hasattr(command, "list_commands"):
            break
        sub = command.get_command(ctx, word)
        if sub is None:
            if i == 0:
                return None
            break
        command, ctx = sub, typer.Context(sub, info_name=word, parent=ctx)
    return command


def _flags(words: list[str]) -> set[str]:
    return {w.split("=", 1)[0] for w in words if re.fullmatch(r"--[a-z][a-z0-9-]*(=.*)?", w)}


def wrong_flags(text: str) -> list[str]:
    wrong = []
    for line in _code(text):
        for words in _commands(line):
            flags = _flags(words)
            if not flags:
                continue
            if words[0] == "murgat":
                command = _murgat_command(words)
                if command is None:
                    continue
                unknown = flags - _options(command)
            else:
                script = ROOT / words[0]
                if not script.is_file():
                    continue  # the path test names it
                source = script.read_text(encoding="utf-8")
                unknown = {f for f in flags if not re.search(re.escape(f) + r"(?![\w-])", source)}
            wrong += [f"{' '.join(words[:2])} ... {f}" for f in sorted(unknown)]
    return wrong


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_flag_the_page_gives_a_command_exists(page):
    wrong = wrong_flags(page.read_text("utf-8"))
    assert not wrong, f"{_page_id(page)} gives flags the command does not have: {wrong}"


def test_the_flag_rule_catches_a_flag_that_does_not_exist():
    text = (
        "Run `murgat score x.jsonl --judge a --no-such-flag`, then\n\n```bash\n"
        "murgat models --fit \\\n  --gpu h100 --made-up | head\n"
        "python scripts/gen_cli_docs.py --check --not-there\n```\n"
    )
    assert sorted(wrong_flags(text)) == [
        "murgat models ... --made-up",
        "murgat score ... --no-such-flag",
        "scripts/gen_cli_docs.py --check ... --not-there",
    ]


def test_the_pages_do_call_commands_with_flags():
    calls = [
        words
        for page in PAGES
        for line in _code(page.read_text("utf-8"))
        for words in _commands(line)
        if _flags(words)
    ]
    assert sum(w[0] == "murgat" for w in calls) >= 30
    assert sum(w[0].startswith("scripts/") for w in calls) >= 5
