"""What the served end-to-end run (tests/e2e/test_serve_e2e.py) uses: its judges, `murgat` in a child
process, a configuration that puts attribution on a server, a cache holding only the text stages'
verdicts, the kinds of media the entailer judged, and the special tokens the server's tokenizer
sees in a request."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import httpx

from support.paths import ROOT


def murgat(*args, **kw):
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "murgat_local.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        **kw,
    )


def config(path, base_url, **server):
    lines = [
        "batch_size = 4",
        "[stage_engines.entail]",
        'engine = "openai"',
        f'base_url = "{base_url}"',
    ]
    lines += [f"{k} = {json.dumps(v)}" for k, v in server.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def text_stages_done(first_out, tmp_path):
    """A fresh output folder whose cache holds the first run's text-stage verdicts (none of its
    attribution ones), so a run there reaches attribution at once."""
    out = tmp_path / "out"
    out.mkdir()
    db = out / "verdicts.sqlite"
    with sqlite3.connect(first_out / "verdicts.sqlite") as src, sqlite3.connect(db) as dst:
        src.backup(dst)
        dst.execute("DELETE FROM verdicts WHERE stage = 'entail'")
    return out, db


def judged_kinds(records_path) -> set[str]:
    """The kinds of media the entailer judged: image (visual point), video (visual range), audio."""
    kinds = set()
    for line in records_path.read_text().splitlines():
        for s in (json.loads(line).get("trace") or {}).get("sentences", []):
            usable = [c for c in s.get("citations", []) if c["usable"]]
            for f in s.get("facts", []):
                if f.get("joint", {}).get("raw"):
                    for c in usable:
                        kinds.add(
                            "audio"
                            if c["modality"] == "audio"
                            else "image"
                            if c["start"] == c["end"]
                            else "video"
                        )
    return kinds


def served_specials(server, preset, messages, specials):
    """The special tokens among those the server's /tokenize gives for `messages` under its chat
    template (with the generation prompt)."""
    r = httpx.post(
        f"http://{server.host}:{server.port}/tokenize",
        timeout=30,
        json={
            "model": preset.name,
            "messages": messages,
            "add_generation_prompt": True,
            "return_token_strs": True,
        },
    )
    r.raise_for_status()
    return [t for t in r.json()["token_strs"] if t in specials]
