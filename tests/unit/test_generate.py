"""`murgat generate`'s logic with a deterministic scripted responder (the real engines run in
tests/e2e/test_generate_e2e.py): strategies, post-hoc checks, answers, resume and the cache."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support.scripted import CITED, PLAIN, Scripted, run_generate

from murgat_local.engines import AudioPart, ImagePart, VideoPart
from murgat_local.generate.strategies import parse_strategy, posthoc_problem


def rows(path):
    return [json.loads(l) for l in path.read_text().splitlines()]


def test_base_rows_keep_the_dataset_row_and_add_the_generation(tmp_path, media_root):
    eng = Scripted("tiny-qwen3-omni")
    result = run_generate(tmp_path, media_root, {"tiny-qwen3-omni": eng})
    assert result.exit_code == 0, result.summary.errors_list
    out = rows(tmp_path / "gen.jsonl")
    assert [r["id"] for r in out] == [
        "q-after-green",
        "q-first",
        "q-tone",
        "q-words",
        "q-silent",
        "q-late",
    ]
    first = out[0]
    assert first["model_generation"] == PLAIN and first["strategy"] == "base"
    assert first["model"] == "tiny-qwen3-omni/base" and first["question"].startswith("What colour")
    assert (
        first["predicted"] == "B"
        and first["answer_path"] == "answer_line"
        and first["correct"] is False
    )
    # An omni responder gets the whole video as one clip at the sampled rate, and its soundtrack.
    clip, sound = eng.seen[0].media
    assert isinstance(clip, VideoPart) and isinstance(sound, AudioPart)
    assert (
        clip.fps == first["media"]["visual"]["fps"] == 2.0
        and len(clip.frames) == first["media"]["visual"]["frames"]
    )
    assert len(sound.waveform) == pytest.approx(16000 * first["media"]["duration"], rel=0.02)
    silent = next(r for r in out if r["id"] == "q-silent")
    assert (
        silent["media"]["heard_audio"] is False
        and "no audio track" in silent["media"]["audio_missing"]
    )
    cell = result.summary.cells["tiny-qwen3-omni/base"]
    assert cell.accuracy == pytest.approx(2 / 6) and cell.answer_paths == {"answer_line": 6}


def test_an_image_only_model_gets_timed_frames_and_no_sound(tmp_path, media_root):
    eng = Scripted("tiny-gemma3")
    run_generate(tmp_path, media_root, {"tiny-gemma3": eng})
    req = eng.seen[0]
    assert (
        all(isinstance(m, ImagePart) for m in req.media) and len(req.media) <= 8
    )  # its image limit
    assert req.captions[0] == "[frame at 0:00]" and req.captions[-1].startswith("[frame at 0:0")
    out = rows(tmp_path / "gen.jsonl")[0]
    assert out["media"]["heard_audio"] is False and "heard nothing" in out["media"]["audio_missing"]
    assert "there is no sound" in req.prompt


def test_grid_posthoc_and_reasoning_tax(tmp_path, media_root):
    eng = Scripted("tiny-qwen3-omni")
    result = run_generate(
        tmp_path,
        media_root,
        {"tiny-qwen3-omni": eng},
        strategies=("base", "cite", "posthoc"),
        out="grid",
    )
    cells = result.summary.cells
    assert set(cells) == {"tiny-qwen3-omni/base", "tiny-qwen3-omni/cite", "tiny-qwen3-omni/posthoc"}
    post = rows(tmp_path / "grid" / "tiny-qwen3-omni__posthoc" / "responses.jsonl")
    assert post[0]["posthoc"] == {"source": "base", "accepted": True, "rejected": None}
    assert post[0]["model_generation"] == CITED
    assert result.summary.reasoning_tax == {"tiny-qwen3-omni": 0.0}
    # the base answers were generated once, for the base cell and the posthoc source alike
    assert (
        sum(
            1
            for r in eng.seen
            if "Question:" in r.prompt and "answer to edit" not in r.prompt and r.choices is None
        )
        == 6 * 2
    )


def test_a_posthoc_edit_that_changes_the_prose_is_rejected_and_the_original_kept(
    tmp_path, media_root
):
    eng = Scripted("tiny-qwen3-omni", edit="rewrite")
    run_generate(tmp_path, media_root, {"tiny-qwen3-omni": eng}, strategies=("posthoc",))
    out = rows(tmp_path / "gen.jsonl")[0]
    assert out["posthoc"]["accepted"] is False and "changed the prose" in out["posthoc"]["rejected"]
    assert out["model_generation"] == PLAIN and out["posthoc"]["edit"].startswith(
        "Reasoning: Something else"
    )


def test_posthoc_prose_check():
    assert posthoc_problem(PLAIN, CITED) is None
    assert posthoc_problem(PLAIN, CITED.replace("So B", "So A")) is not None
    assert posthoc_problem(PLAIN, PLAIN.replace(". ", ".  \n ")) is None  # whitespace only
    assert posthoc_problem("<think>hm</think>" + PLAIN, CITED) is None
    assert posthoc_problem(PLAIN, "") == "the edit is empty"
    with pytest.raises(ValueError, match="unknown strategy"):
        parse_strategy("summary")
    assert parse_strategy("posthoc:cite").source == "cite"


def test_a_free_answer_is_mapped_by_the_judge_and_none_is_unanswered(tmp_path, media_root):
    eng = Scripted("tiny-qwen3-omni", answer="free", judge_choice="C")
    result = run_generate(tmp_path, media_root, {"tiny-qwen3-omni": eng})
    out = rows(tmp_path / "gen.jsonl")
    assert out[0]["predicted"] == "C" and out[0]["answer_path"] == "judge"
    none = Scripted("tiny-qwen3-omni", answer="free", judge_choice="NONE")
    result = run_generate(tmp_path / "n", media_root, {"tiny-qwen3-omni": none})
    cell = result.summary.cells["tiny-qwen3-omni/base"]
    # unanswered questions are graded and wrong (metrics.accuracy): 0 of 6, not "no accuracy"
    assert cell.answered == 0 and cell.unanswered == 6 and cell.accuracy == 0.0
    assert cell.graded == 6 and cell.unanswered_rate == 1.0 and len(cell.unanswered_ids or ()) == 6
    assert all(r["correct"] is False for r in rows(tmp_path / "n" / "gen.jsonl"))


def test_samples_and_a_rerun_from_the_cache(tmp_path, media_root):
    eng = Scripted("tiny-qwen3-omni")
    run_generate(
        tmp_path, media_root, {"tiny-qwen3-omni": eng}, samples=2, sampling={"temperature": 0.7}
    )
    out = rows(tmp_path / "gen.jsonl")
    assert [r["id"] for r in out[:2]] == ["q-after-green#0", "q-after-green#1"]
    seeds = {r.sampling.seed for r in eng.seen}
    assert seeds == {0, 1}
    before = (tmp_path / "gen.jsonl").read_bytes()
    again = Scripted("tiny-qwen3-omni")
    result = run_generate(
        tmp_path, media_root, {"tiny-qwen3-omni": again}, samples=2, sampling={"temperature": 0.7}
    )
    assert again.seen == [] and (tmp_path / "gen.jsonl").read_bytes() == before
    assert result.summary.calls["generate:tiny-qwen3-omni"].cache_hits == 12


def test_bad_items_are_errors_and_the_run_goes_on(tmp_path, media_root):
    data = tmp_path / "q.jsonl"
    data.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "ok",
                        "video": "colors",
                        "question": "Which colour?",
                        "options": ["red", "blue"],
                        "answer": "A",
                    }
                ),
                json.dumps(
                    {
                        "id": "gone",
                        "video": "no_such",
                        "question": "Which colour?",
                        "options": ["red"],
                    }
                ),
                "{not json",
            ]
        )
        + "\n"
    )
    result = run_generate(
        tmp_path, media_root, {"tiny-qwen3-omni": Scripted("tiny-qwen3-omni")}, dataset=data
    )
    out = rows(tmp_path / "gen.jsonl")
    assert [r["status"] for r in out] == ["ok", "error", "error"] and "not found" in out[1]["error"]
    assert result.exit_code == 1 and len(result.summary.errors_list) == 2


def test_reference_format_and_thinking_budget(tmp_path, media_root):
    eng = Scripted("tiny-qwen3-omni")
    eng.preset = dataclasses.replace(
        eng.preset, quirks=eng.preset.quirks.model_copy(update={"thinking": True})
    )
    run_generate(
        tmp_path,
        media_root,
        {"tiny-qwen3-omni": eng},
        reference_format=True,
        sampling={"max_tokens": 100, "thinking_budget": 400},
    )
    listed = json.loads((tmp_path / "gen.reference.json").read_text())
    assert isinstance(listed, list) and listed == rows(tmp_path / "gen.jsonl")
    assert {"video", "question", "options", "model_generation"} <= set(listed[0])
    assert {r.sampling.max_tokens for r in eng.seen if r.sampling} == {500}


class Counting(Scripted):
    """Scripted, and says what reached the model as an engine counts it: every modality sent,
    or (`deaf`) the audio lost on the way."""

    def __init__(self, preset_name, *, deaf=False, **kw):
        super().__init__(preset_name, **kw)
        self.deaf = deaf

    def judge(self, requests):
        out = []
        for r, res in zip(requests, super().judge(requests)):
            sent = {type(m).__name__ for m in r.media}
            out.append(
                dataclasses.replace(
                    res,
                    reached={
                        "video": 12 * ("VideoPart" in sent),
                        "image": 4 * ("ImagePart" in sent),
                        "audio": 0 if self.deaf else 7 * ("AudioPart" in sent),
                    },
                )
            )
        return out


def test_a_responders_row_records_what_reached_it_and_lost_audio_is_its_error(tmp_path, media_root):
    run_generate(
        tmp_path, media_root, {"tiny-qwen3-omni": Counting("tiny-qwen3-omni")}, out="a.jsonl"
    )
    first = rows(tmp_path / "a.jsonl")[0]
    assert first["status"] == "ok" and first["media"]["reached"] == {
        "video": 12,
        "image": 0,
        "audio": 7,
    }
    result = run_generate(
        tmp_path,
        media_root,
        {"tiny-qwen3-omni": Counting("tiny-qwen3-omni", deaf=True)},
        out="b.jsonl",
        cache=tmp_path / "deaf.sqlite",
    )
    out = rows(tmp_path / "b.jsonl")
    heard = [r for r in out if r["media"].get("heard_audio")]
    assert heard and all(
        r["status"] == "error" and "0 audio tokens reached" in r["error"] for r in heard
    ), heard
    silent = next(r for r in out if r["id"] == "q-silent")  # sent no audio: nothing to lose
    assert silent["status"] == "ok" and result.exit_code == 1
