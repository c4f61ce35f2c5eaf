"""The one way a command loads its configuration: its flags (`options.py`) as overrides on top
of the TOML file, validated exactly as the same keys in the file, and refused the same way, one
line per key naming the flag and the key.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import TypeVar

import typer

import murgat_local.cli.ui as ui
from murgat_local.cli.options import flag_of_key

C = TypeVar("C")


def load(
    loader: Callable[[pathlib.Path | None, dict], C], config: pathlib.Path | None, overrides: dict
) -> C:
    """`loader(config, overrides)` (`config.load_config` / `load_generate_config`); a refused
    configuration is a usage error (exit 2), one line per key: its flag or its file, the key,
    the allowed range and the value given. Nothing has started yet."""
    from ..config_errors import ConfigError

    try:
        return loader(config, overrides)
    except ConfigError as e:
        for p in e.problems:
            ui._error(p.line(flag_of_key()))
        raise typer.Exit(ui.USAGE_ERROR) from None
    except (OSError, ValueError) as e:
        ui._fail(f"bad configuration: {config}: {e}" if config else f"bad configuration: {e}")
