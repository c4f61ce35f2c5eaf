"""`murgat smoke`'s table at 80 columns: a long reason goes under the table as a numbered note,
so the table keeps one line per probe and `scripts/run_sample.sh` stays short."""

import io

from rich.console import Console

from murgat_local.reports.table import smoke_table

# The reason the tiny Gemma 4 preset gives for not probing audio on vLLM's CPU build.
REASON = (
    "not run on this engine: vLLM 0.32's CPU build crashes in Gemma 4's audio tower (oneDNN "
    "matmul rejects the light-conv block's transposed input: 'Expected a.stride(-1) == 1'); "
    "audio runs on a GPU and under --engine transformers"
)


def _row(model, modality, verdict="NO", raw='{"label":"NO"}'):
    return {
        "model": model,
        "modality": modality,
        "verdict": verdict,
        "raw": raw,
        "prompt_tokens": 321,
        "output_tokens": 9,
    }


def _shown(table, width=80) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(table)
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= width for line in lines), "\n".join(lines)
    return lines


def _sample_rows():
    """What `run_sample.sh`'s smoke step gets: every local test model, one probe a modality."""
    rows = []
    for model, modalities in (
        ("tiny-qwen3-omni", ("text", "image", "video", "audio")),
        ("tiny-qwen2.5-omni", ("text", "image", "video", "audio")),
        ("tiny-gemma4", ("text", "image", "video")),
        ("tiny-qwen3-vl", ("text", "image", "video")),
        ("tiny-qwen2-audio", ("text", "audio")),
        ("tiny-gemma3", ("text", "image")),
        ("smollm2-135m-instruct", ("text",)),
        ("gemma3-270m", ("text",)),
    ):
        rows.extend(_row(model, m) for m in modalities)
    rows.insert(11, _row("tiny-gemma4", "audio", verdict=None, raw=REASON))
    return rows


def test_a_long_reason_is_a_note_under_the_table_and_each_probe_one_line():
    rows = _sample_rows()
    lines = _shown(smoke_table(rows, "vllm"))
    body = [line for line in lines if "tiny-" in line or "smollm2" in line or "gemma3-270m" in line]
    assert len(body) == len(rows) + 1, "\n".join(lines)  # one line a probe, plus the note's line
    note = [line for line in lines if line.startswith("[1] tiny-gemma4, audio:")]
    assert note, "\n".join(lines)
    assert " ".join(lines).count("see [1] below") == 1
    assert "'Expected a.stride(-1) == 1'" in " ".join(lines[lines.index(note[0]) :])
    # The table with its title and header, 22 probes and a three-line note.
    assert len(lines) <= len(rows) + 12, "\n".join(lines)


def test_a_short_reason_stays_in_its_cell():
    rows = [_row("tiny-gemma3", "text"), _row("tiny-gemma3", "audio", None, "refused: no audio")]
    lines = _shown(smoke_table(rows, "vllm"))
    assert any("refused: no audio" in line for line in lines)
    assert not any(line.startswith("[1]") for line in lines)
