"""`murgat cut`: what a judge receives of each citation, written as files to look at."""

from __future__ import annotations

import json
import pathlib
import sys
import wave

import numpy as np
import typer

import murgat_local.cli.flags as f
import murgat_local.cli.ui as ui
from murgat_local.cli.options import SCORE
from murgat_local.cli.options_build import Given, takes
from murgat_local.cli.ui import app


@app.command()
@takes("cut")
def cut(
    media: pathlib.Path = typer.Argument(..., help="a video (or audio) file"),
    citations: list[str] = typer.Argument(
        ..., help='citations as a response writes them: "visual, 0:12-0:14"'
    ),
    out: pathlib.Path = typer.Option(
        pathlib.Path("."), "--out", help="folder for the frames and audio (may exist)"
    ),
    as_json: bool = typer.Option(
        False, "--json", help="print only a JSON list, one object per citation"
    ),
    *,
    config: pathlib.Path | None,
    given: Given,
) -> None:
    """Cut each CITATION from MEDIA as `murgat score` with the same options would for a judge, and
    write its frames as PNG and its audio as 16-bit PCM mono WAV at 16 kHz into OUT.

    With --json, stdout holds a list of {citation, frames: [{t, file}], audio: {start, end,
    samples, file} or null, note, error}: `t` is the time sampled, seconds on the file's
    timeline; `file` is relative to OUT. A citation that cannot be cut gets its reason in
    `error` and the others go on; exit 1 when any was refused."""
    from ..config import load_config
    from ..media.segments import SegmentCutter, check_citation
    from ..media.source import MediaError

    cfg = f.load(load_config, config, given.of(SCORE))
    real = media.resolve()
    if not real.is_file():
        ui._fail(f"{media} is not a file")
    cutter = SegmentCutter(real.parent, cfg.media.options(), **cfg.media.bounds())
    try:
        ref = cutter.source(real.name)
    except MediaError as e:
        cutter.close()
        ui._fail(str(e))
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n, text in enumerate(citations, 1):
            row: dict = {"citation": text, "frames": [], "audio": None, "note": None, "error": None}
            c, row["error"] = _one_citation(text, cfg.compat)
            if c is not None:
                row["error"] = check_citation(c, ref.info, cutter.opts)
            if row["error"] is None:
                try:
                    _write(cutter.cut(ref, c), out, f"c{n:02d}", row)
                except MediaError as e:
                    row["error"] = str(e)
            rows.append(row)
    finally:
        cutter.close()
    if as_json:  # machine output: written as is, never wrapped by a console
        sys.stdout.write(json.dumps(rows, ensure_ascii=False) + "\n")
    else:
        for row in rows:
            ui.console.print(_line(row), markup=False, soft_wrap=True)
    raise typer.Exit(1 if any(r["error"] for r in rows) else 0)


def _one_citation(text: str, compat: str | None):
    """(the citation, None) or (None, why not), read with the mode's grammar."""
    from ..text.citations import parse_citations, parse_citations_reference

    found = (parse_citations_reference if compat == "reference" else parse_citations)(f"({text})")
    if len(found) != 1:
        what = "no citation" if not found else f"{len(found)} citations"
        return None, f"{text!r} holds {what}; give one per argument, as `visual, 0:12-0:14`"
    c = found[0]
    return (c, None) if c.error is None else (None, c.error)


def _write(part, out: pathlib.Path, stem: str, row: dict) -> None:
    from PIL import Image

    from ..media.parts import AudioPart, ImagePart

    row["note"] = part.note
    if isinstance(part, AudioPart):
        name = f"{stem}-audio.wav"
        pcm = np.round(np.clip(part.waveform, -1.0, 1.0) * 32767).astype("<i2")
        with wave.open(str(out / name), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(part.sample_rate)
            w.writeframes(pcm.tobytes())
        row["audio"] = {
            "start": part.start,
            "end": part.start + len(pcm) / part.sample_rate if part.start is not None else None,
            "samples": len(pcm),
            "file": name,
        }
        return
    pictures, times = (
        ((part.pixels,), (part.t,)) if isinstance(part, ImagePart) else (part.frames, part.times)
    )
    for k, (pixels, t) in enumerate(zip(pictures, times)):
        name = f"{stem}-frame{k:02d}.png"
        Image.fromarray(np.ascontiguousarray(pixels)).save(out / name)
        row["frames"].append({"t": t, "file": name})


def _line(row: dict) -> str:
    if row["error"]:
        return f"{row['citation']}: refused: {row['error']}"
    if row["audio"]:
        a = row["audio"]
        got = f"{a['samples']} samples from {a['start']:.3f}s to {a['end']:.3f}s: {a['file']}"
    else:
        got = ", ".join(f"{f['t']:.3f}s {f['file']}" for f in row["frames"])
    return f"{row['citation']}: {got}" + (f" ({row['note']})" if row["note"] else "")
