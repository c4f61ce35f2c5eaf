"""The commands' help and options, in-process: wrapped to 80 columns, --verbose offered."""

from __future__ import annotations

from typer.testing import CliRunner

from murgat_local.cli import app


def test_score_has_verbose_option():
    r = CliRunner().invoke(app, ["score", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "--verbose" in r.output and "engine.log" in r.output


def test_every_commands_help_is_wrapped_to_an_80_column_terminal():
    """A docstring's own line breaks are not kept: each paragraph of a command's help fills the
    lines rich wraps it to, so no line but a paragraph's last stops short (ragged text)."""
    names = [c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands]
    for name in names:
        r = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
        assert r.exit_code == 0, (name, r.output)
        text = r.output.split("╭", 1)[0].splitlines()
        body = [
            line.strip() for line in text[text.index(next(l for l in text if "Usage:" in l)) + 1 :]
        ]
        paragraphs = [p for p in "\n".join(body).split("\n\n") if p.strip()]
        for p in paragraphs:
            lines = p.strip().splitlines()
            assert all(len(line) >= 50 for line in lines[:-1]), (name, lines)
