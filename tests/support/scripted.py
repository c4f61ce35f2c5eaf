"""A deterministic scripted responder and a `murgat generate` run on it."""

from __future__ import annotations

from murgat_local.engines import EngineStats, load_preset
from murgat_local.engines.base import finish, record
from murgat_local.generate_config import GenerateConfig
from murgat_local.metrics.run_summary import GenerationGrades
from murgat_local.pipeline.generating import GenerateRunner
from support.fakes import FakeHolder
from support.paths import ROOT, require_model

CITED = (
    "Reasoning: The screen is red (visual, 0:00). A tone plays (audio, 0:00-0:01). So B.\nAnswer: B"
)


PLAIN = "Reasoning: The screen is red. A tone plays. So B.\nAnswer: B"


class Scripted(FakeHolder):
    """A responder that answers by rule and records what it was sent."""

    def __init__(self, preset_name, *, edit="cite", answer="B", judge_choice="C"):
        require_model(preset_name)
        self.preset = load_preset(preset_name)
        self.name = self.kind = preset_name
        self.identity = f"scripted:{preset_name}:{edit}:{answer}:{judge_choice}"
        self.stats = EngineStats()
        self.started = True
        self.seen = []
        self.edit, self.answer, self.judge_choice = edit, answer, judge_choice

    def _reply(self, r) -> str:
        if r.choices is not None:
            return self.judge_choice
        if "answer to edit" in r.prompt:
            if self.edit == "cite":
                return CITED.replace("So B", f"So {self.answer}").replace(
                    "Answer: B", f"Answer: {self.answer}"
                )
            return "Reasoning: Something else entirely (visual, 0:00).\nAnswer: A"
        text = CITED if "Cite your evidence" in (r.system or "") else PLAIN
        if self.answer == "free":
            return text.replace("\nAnswer: B", "\nI would go with the red one.")
        return text.replace("Answer: B", f"Answer: {self.answer}")

    def judge(self, requests):
        out = []
        for r in requests:
            self.seen.append(r)
            out.append(finish(r, self._reply(r), 100, 20))
        record(self.stats, out)
        return out


def run_generate(
    tmp_path,
    media_root,
    engines,
    *,
    strategies=("base",),
    out="gen.jsonl",
    dataset=None,
    reference_format=False,
    **cfg,
):
    models = list(engines)
    config = GenerateConfig(models=models, strategies=list(strategies), **cfg)
    runner = GenerateRunner(
        config, media_root, tmp_path / out, engines=engines, grades=GenerationGrades()
    )
    try:
        result = runner.run(
            dataset or ROOT / "samples" / "questions.jsonl", reference_format=reference_format
        )
    finally:
        runner.close()
    return result
