"""Tables of `murgat smoke --reach` and of what `murgat models` knows it verified."""

from __future__ import annotations

from .fit_table import TEXT, VALUE, Col, FitTable, _cell, _fmt, _name

REACH_COLUMNS = ("image", "video", "audio", "audio in video")


def _pair(values) -> str:
    return "-" if not values else f"{values[0]}/{values[1]}"


def reach_table(rows: list[dict], engine: str) -> FitTable:
    """One row per model and modality: whether blanking it moved the decision token, by how
    much against the control's noise, and the prompt and placeholder tokens cut/neutralised."""
    t = FitTable(
        f"Does each modality reach the model? ({engine})",
        [
            _name("model"),
            _name("modality"),
            Col("moved", VALUE, "left"),
            Col("|Δ logprob|"),
            Col("noise"),
            Col("tokens cut/blank"),
            Col("placeholders", TEXT, "left"),
            Col("decision", TEXT, "left"),
        ],
    )
    for r in rows:
        if r.get("skipped") or r.get("error"):
            moved = "skipped" if r.get("skipped") else "FAILED"
            t.add_row(
                _cell(r["model"]),
                _cell(r["modality"]),
                moved,
                "-",
                "-",
                "-",
                _cell(r.get("error", "")),
                "",
            )
            continue
        held = ", ".join(f"{m} {_pair(v)}" for m, v in r.get("placeholders", {}).items())
        t.add_row(
            _cell(r["model"]),
            _cell(r["modality"]),
            "yes" if r["moved"] else "NO (never reached)",
            f"{r['delta']:.2e}",
            f"{r['noise']:.1e}",
            _pair(r["tokens"]),
            held or "-",
            _cell(" / ".join(repr(d) for d in r["decision"])),
        )
    return t


def verified_table(statuses: dict[str, dict[str, dict]]) -> FitTable:
    """`murgat models`: per present preset and media modality, what `--reach` found here."""
    t = FitTable(
        "Modalities verified by `murgat smoke --reach` on this machine",
        [_name("preset"), *(Col(m, TEXT, "left") for m in REACH_COLUMNS)],
    )
    for name, status in statuses.items():
        t.add_row(
            _cell(name), *(_fmt(status[m]["text"]) if m in status else "-" for m in REACH_COLUMNS)
        )
    return t
