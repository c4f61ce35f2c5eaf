"""`murgat schema [NAME]`: the JSON Schema of a file murgat writes (no model, no files)."""

from __future__ import annotations

import json

import typer

import murgat_local.cli.ui as ui
from murgat_local.cli.ui import app


@app.command()
def schema(
    name: str | None = typer.Argument(
        None,
        help="score-record, generation-record, summary, generation-summary, run-summary, "
        "meta-eval or comparison (none: list them)",
    ),
) -> None:
    """Print the JSON Schema of a record or summary murgat writes: every field with its type,
    bounds and description (each file has `schema_version`)."""
    from ..results import CURRENT, SCHEMAS

    if name is None:
        for known, listed in SCHEMAS.items():
            first = (listed.__doc__ or "").strip().splitlines()[0]
            typer.echo(f"{known}\t{first}")
        typer.echo(f"(schema_version {CURRENT}; `murgat schema NAME` prints one)")
        return
    model = SCHEMAS.get(name)
    if model is None:
        ui._fail(f"no schema {name!r}; the schemas are: {', '.join(SCHEMAS)}")
    typer.echo(json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False))
