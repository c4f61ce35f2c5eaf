"""`murgat bundle OUT --models A B C`: the names after --models are all carried, as the issue
writes the command; a stray argument without --models is a usage error."""

from __future__ import annotations

from typer.testing import CliRunner

import murgat_local.bundle as bundle_pkg
from murgat_local.cli import app


def test_models_after_one_flag_are_all_carried(monkeypatch, tmp_path):
    seen = {}

    def fake_build(out, target, **kw):  # stands in for the download; only the parsing is tested
        seen.update(kw, target=target)
        raise bundle_pkg.BundleError("stop here")

    monkeypatch.setattr(bundle_pkg, "build_bundle", fake_build)
    args = ["bundle", str(tmp_path / "b"), "--target", "cpu", "--models", "a", "b", "--models", "c"]
    done = CliRunner().invoke(app, args)
    assert seen["models"] == ["a", "c", "b"] and seen["target"] == "cpu", done.output
    done = CliRunner().invoke(app, ["bundle", str(tmp_path / "b"), "--target", "cpu", "stray"])
    assert done.exit_code == 2 and "go after --models" in done.output
