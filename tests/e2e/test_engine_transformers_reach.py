"""What reaches the model on a real transformers engine: audio stripped before the engine, or a
template without its placeholder, is an error, never a verdict."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from support.fakes import FakeHolder
from support.paths import require_model

from murgat_local.engines import load_preset, make_engine
from murgat_local.judges import load_prompt
from murgat_local.judges.calls import Call
from murgat_local.judges.smoke import probe_requests
from murgat_local.pipeline.cache import VerdictCache
from murgat_local.pipeline.judging import StageJudge

OMNI = "tiny-qwen2.5-omni"


class StripAudio(FakeHolder):
    """A broken path: the real engine, with every request's audio taken out before it is sent."""

    def __init__(self, engine):
        self.inner = engine
        self.name, self.kind, self.preset = engine.name, "transformers", engine.preset
        self.modalities, self.stats, self.identity = (
            engine.modalities,
            engine.stats,
            "strip-audio:" + engine.identity,
        )
        self.started = True

    def judge(self, requests):
        return self.inner.judge(
            [
                dataclasses.replace(r, media=tuple(m for m in r.media if m.modality != "audio"))
                for r in requests
            ]
        )

    def close(self):
        pass


def _audio_call():
    _, req = next(p for p in probe_requests(frozenset({"audio"})) if p[0] == "audio")
    tpl = load_prompt("entail")
    return req, Call(
        tpl,
        tpl.render(fact="A tone plays.", evidence="audio"),
        (("t.wav", "d", "audio", 0, 2),),
        media=lambda: req.media,
    )


@pytest.fixture(scope="module")
def omni(engine_pool):
    return engine_pool.get(OMNI, "transformers")


def test_audio_stripped_before_the_engine_is_an_error_not_a_verdict(omni, tmp_path):
    req, call = _audio_call()
    (direct,) = omni.judge([req])
    assert direct.ok and direct.reached["audio"] > 0, direct  # the healthy path hears it
    judge = StageJudge("entail", StripAudio(omni), VerdictCache(tmp_path / "c.sqlite"))
    (out,) = judge.run([call])
    assert (
        out.verdict is None
        and out.error == f"audio cited, 0 audio tokens reached {OMNI} on the transformers engine"
    )
    assert judge.counters.unreached == 1 and judge.counters.model_calls == 0


def test_a_chat_template_without_the_audio_placeholder_gives_an_error_not_a_verdict(tmp_path):
    require_model(OMNI)
    preset = load_preset(OMNI)
    folder = tmp_path / "models" / OMNI
    shutil.copytree(preset.path, folder)
    template = folder / "chat_template.jinja"
    text = template.read_text(encoding="utf-8")
    assert "<|AUDIO|>" in text
    template.write_text(text.replace("<|audio_bos|><|AUDIO|><|audio_eos|>", ""), encoding="utf-8")
    broken = dataclasses.replace(preset, path=folder)
    eng = make_engine("transformers", broken)
    try:
        req, call = _audio_call()
        judge = StageJudge(
            "entail", _Held(eng, "transformers"), VerdictCache(tmp_path / "c.sqlite")
        )
        (out,) = judge.run([call])
        # The processor takes the clip and the model answers fluently without it: only the
        # count shows the audio never reached the model.
        (silent,) = eng.judge([req])
        assert silent.ok and silent.reached["audio"] == 0, silent
        assert (
            out.verdict is None
            and out.error
            == f"audio cited, 0 audio tokens reached {OMNI} on the transformers engine"
        ), out
    finally:
        eng.close()


class _Held(FakeHolder):
    """A started engine as the stage judge holds one."""

    def __init__(self, engine, kind):
        self._e, self.kind, self.preset, self.started = engine, kind, engine.preset, True
        self.name, self.identity = engine.name, engine.identity
        self.stats = engine.stats

    def get(self):
        return self._e
