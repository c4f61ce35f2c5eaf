"""`murgat generate` on the paper's benchmarks with a scripted responder (the real engines run in
tests/e2e/test_generate_e2e.py): rows carry the categories, open questions get their prompt and
grade, attached images reach the models that take them, subsets are drawn as recorded."""

from __future__ import annotations

import json

import pytest
from support.named_keys import assert_read_whole
from support.scripted import Scripted

from murgat_local.engines import AudioPart, ImagePart, VideoPart
from murgat_local.generate_config import GenerateConfig
from murgat_local.inputs.benchmarks import open_dataset
from murgat_local.metrics.run_summary import GenerationGrades
from murgat_local.pipeline.generating import GenerateRunner
from murgat_local.results import GenerationSummary
from murgat_local.sample import benchmarks as layouts


@pytest.fixture(scope="module")
def videommmu(tmp_path_factory, media_root):
    return layouts.videommmu(tmp_path_factory.mktemp("vm") / "VideoMMMU", media_root / "colors.mp4")


def generate(tmp_path, folder, engines, **cfg):
    ds = open_dataset(folder)
    config = GenerateConfig(models=list(engines), **cfg)
    runner = GenerateRunner(
        config, ds.media_root, tmp_path / "out", engines=engines, grades=GenerationGrades()
    )
    try:
        return runner.run(ds)
    finally:
        runner.close()


def rows(path):
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_videommmu_rows_images_and_open_questions(tmp_path, videommmu):
    omni, gemma, text = (
        Scripted("tiny-qwen3-omni"),
        Scripted("tiny-gemma3"),
        Scripted("smollm2-135m-instruct"),
    )
    result = generate(
        tmp_path,
        videommmu,
        {"tiny-qwen3-omni": omni, "tiny-gemma3": gemma, "smollm2-135m-instruct": text},
        strategies=["base", "program:narrative-declarative"],
    )
    out = rows(result.outputs["tiny-qwen3-omni/base"])
    assert len(out) == 11  # 9 questions and the two bad rows, in place
    first = out["Perception/validation_Physics_1"]
    assert first["benchmark"] == "videommmu" and first["question_type"] == "multiple-choice"
    assert first["categories"] == {
        "track": "Perception",
        "discipline": "Science",
        "subject": "Physics",
    }
    assert first["video"] == "Science/validation_Physics_1.mp4" and first["status"] == "ok"
    assert (
        out["Perception/validation_Astrology_1"]["error"]
        == "field 'id' names an unknown subject 'Astrology'"
    )

    # an image the question refers to: after the video and its sound, captioned, in the cache key
    adapt = out["Adaptation/validation_Physics_1"]
    assert (
        adapt["media"]["images"]["shown"] == 1
        and adapt["images"][0]["name"] == "validation_Physics_1.png"
    )
    req = next(r for r in omni.seen if "<image 1>" in r.prompt)
    kinds = [type(m) for m in req.media]
    assert kinds == [VideoPart, AudioPart, ImagePart]
    assert req.captions[-1].startswith("[image 1") and req.media[-1].pixels.shape == (32, 48, 3)
    # an image-only model gives up one frame for it: frames and image within its limit of 8
    greq = next(r for r in gemma.seen if "<image 1>" in r.prompt)
    assert all(isinstance(m, ImagePart) for m in greq.media) and len(greq.media) <= 8
    assert greq.captions[-1].startswith("[image 1") and greq.captions[0] == "[frame at 0:00]"
    # a model that takes no images is told so, and the row says the image was not shown
    treq = next(r for r in text.seen if "<image 1>" in r.prompt)
    assert treq.media == () and "image that is not shown" in treq.prompt
    trow = rows(result.outputs["smollm2-135m-instruct/base"])["Adaptation/validation_Physics_1"]
    assert "takes no images" in trow["media"]["images"]["missing"]

    # an open question: its own prompt, a short answer graded by text or number
    op = out["Comprehension/validation_Clinical_Medicine_3"]
    assert op["question_type"] == "open" and op["gold"] == "8" and op["options"] == []
    assert op["predicted"] == "B" and op["answer_path"] == "open" and op["correct"] is False
    oreq = next(r for r in omni.seen if "How many colours" in r.prompt)
    assert "as briefly as possible" in oreq.system
    cell = result.summary.cells["tiny-qwen3-omni/base"]
    assert cell.graded_by_type == {"multiple-choice": 8, "open": 1}
    prog = rows(result.outputs["tiny-qwen3-omni/program:narrative-declarative"])
    assert (
        "multiple-choice questions only"
        in prog["Comprehension/validation_Clinical_Medicine_3"]["error"]
    )
    assert result.summary.provenance.dataset.model_dump(exclude_unset=True) == {
        "format": "videommmu",
        "benchmark": "videommmu",
        "media_root": str(videommmu),
    }


def test_a_stratified_subset_is_drawn_and_recorded(tmp_path, media_root):
    ws = layouts.worldsense_official(
        tmp_path / "ws", media_root / "colors.mp4", videos=6, tasks=2, bad=False
    )
    eng = Scripted("tiny-qwen3-omni")
    result = generate(
        tmp_path, ws, {"tiny-qwen3-omni": eng}, sample=6, sample_seed=5, stratify="domain"
    )
    out = rows(result.outputs["tiny-qwen3-omni/base"])
    assert len(out) == 6
    domains = sorted(r["categories"]["domain"] for r in out.values())
    assert domains == ["Daily Life"] * 2 + ["Music"] * 2 + ["Sports"] * 2
    sub = result.summary.provenance.subset
    assert (sub.sample, sub.seed, sub.stratify, sub.population) == (6, 5, "domain", 12)
    assert_read_whole(result.summary_path, GenerationSummary)  # every key named
    again = generate(
        tmp_path / "again",
        ws,
        {"tiny-qwen3-omni": Scripted("tiny-qwen3-omni")},
        sample=6,
        sample_seed=5,
        stratify="domain",
    )
    assert set(rows(again.outputs["tiny-qwen3-omni/base"])) == set(out)
