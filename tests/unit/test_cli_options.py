"""Each option is declared once and each command's flags are built from the declarations and the
configuration's fields: a command shows only its own options, with its own help and the default
the configuration really has, and refuses a value the way the same key in a TOML file is refused."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.cli.options import OPTIONS, for_command
from murgat_local.cli.options_build import LOADS
from murgat_local.config import RunConfig
from murgat_local.generate_config import GenerateConfig
from murgat_local.meta_config import MetaEvalOptions

runner = CliRunner()


def _command(path: str):
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    found = group
    for part in path.split():
        found = found.get_command(ctx, part)  # type: ignore[attr-defined]
    return found


def _options(path: str) -> dict[str, object]:
    return {opt: p for p in _command(path).params for opt in p.opts if opt.startswith("--")}


def _said(r) -> str:
    return " ".join(r.output.split())


@pytest.mark.parametrize("command", sorted(LOADS))
def test_a_command_has_exactly_the_options_declared_for_it(command):
    have = set(_options(command))
    declared = {o.flag for o in for_command(command)}
    assert declared <= have
    # every other declared flag is absent, unless the command has its own option of that name
    others = {o.flag for o in OPTIONS} - declared
    own = {"--out", "--cache", "--model"}  # cut's and program run's own, of another meaning
    assert (have & others) <= own, (command, have & others)


def _config_value(key: str):
    """The value a configuration built with no file has for `key`, read from the object."""
    for cfg in (RunConfig(), GenerateConfig(models=["any"]), MetaEvalOptions()):
        value = cfg
        try:
            for part in key.split("."):
                value = getattr(value, part)
        except AttributeError:
            continue
        return value
    raise LookupError(key)


def test_help_shows_the_default_the_configuration_has():
    checked = 0
    for option in OPTIONS:
        if not option.keys or option.switch is not None or option.required:
            continue
        value = _config_value(option.keys[0])
        for command in option.commands:
            text = " ".join((_options(command)[option.flag].help or "").split())  # type: ignore[attr-defined]
            if value in (None, []):
                assert "default: " not in text or option.help in text, (command, option.flag)
                continue
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            assert f"default: {shown})" in text, (command, option.flag, text)
            checked += 1
    assert checked >= 10
    # the numbers a user is most likely to look up
    assert "default: 32" in _options("score")["--max-concurrency"].help  # type: ignore[attr-defined]
    assert "default: 0.05" in _options("score")["--max-failed-calls"].help  # type: ignore[attr-defined]


def test_help_gives_the_bounds_of_the_key():
    h = " ".join(_options("generate")["--samples"].help.split())  # type: ignore[attr-defined]
    assert "(>= 1 and <= 64; default: 1)" in h
    h = _options("generate")["--top-p"].help  # type: ignore[attr-defined]
    assert "> 0 and <= 1" in h


def test_each_command_shows_its_own_help_only():
    score = _options("score")["--media-root"]
    generate = _options("generate")["--media-root"]
    assert score.required and not generate.required  # type: ignore[attr-defined]
    assert "benchmark" not in score.help and "benchmark" in generate.help  # type: ignore[attr-defined]
    assert _options("rescore")["--out"].help != _options("score")["--out"].help  # type: ignore[attr-defined]
    for command in LOADS:
        r = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "200"})
        assert r.exit_code == 0
        # a help text written for several commands names them: none does now
        assert "(generate, run" not in r.output and "(score, run" not in r.output


@pytest.mark.parametrize(
    "args, line",
    [
        (["rescore", "x.jsonl", "--compat", "other"], "--compat (key compat): input should be"),
        (["segment", "x.jsonl", "--limit", "0"], "--limit (key limit): must be >= 1, got 0"),
        (
            ["score", "x.jsonl", "--media-root", ".", "--out", "o", "--max-failed-calls", "2"],
            "--max-failed-calls (key max_failed_calls): must be >= 0 and <= 1, got 2.0",
        ),
        (
            ["meta-eval", "r", "--human", "h", "--out", "o", "--alpha", "1"],
            "--alpha (key alpha): must be > 0 and < 1, got 1.0",
        ),
        (
            ["generate", "d", "--model", "m", "--out", "o", "--max-concurrency", "0"],
            "--max-concurrency (key server.max_concurrency): must be >= 1, got 0",
        ),
    ],
)
def test_a_value_out_of_the_keys_bounds_is_refused_naming_flag_and_key(args, line):
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert line in _said(r)


def test_stratify_without_sample_is_refused_by_the_configuration(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text('{"id": "1", "video": "v.mp4", "question": "q?", "answer": "x"}\n')
    args = ["generate", str(data), "--media-root", str(tmp_path), "--model", "m"]
    r = runner.invoke(app, [*args, "--out", str(tmp_path / "o"), "--stratify", "kind"])
    assert r.exit_code == 2 and "give sample too (--sample N)" in _said(r)
