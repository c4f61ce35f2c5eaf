"""Program plans and a scripted planner that answers the tools by rule."""

from __future__ import annotations

import json

from murgat_local.engines import EngineStats
from murgat_local.engines.base import finish, record
from murgat_local.generate_config import GenerateConfig
from murgat_local.metrics.run_summary import GenerationGrades
from murgat_local.pipeline.generating import GenerateRunner
from support.fakes import FakeHolder, fenced
from support.paths import ROOT

PLANS = {
    "logic-declarative": """```python
def main(video):
    notes = []
    notes.append(video.query("0:02-0:03", "What colour is the screen?", "visual"))
    notes.append(video.query("0:05", "Is a tone heard?", "audio"))
    notes.append(video.query("9:00", "What is there?", "visual"))
    return answer("Which colour?", notes, ["A", "B", "C", "D"])
```""",
    "logic-imperative": """def main(video):
    notes = []
    for span in video.find("the screen is green", "visual"):
        notes.append(video.query(span, "What colour is the screen?", "visual"))
    return answer("Which colour?", notes, [])""",
    "narrative-declarative": '1. describe("0:02-0:03", "visual", "What colour is the screen?")\n'
    '2. describe("0:05", "audio", "Is a tone heard?")\n'
    '3. synthesize("Pick the option.")',
    "narrative-imperative": '1. find("the screen is green", "visual")\n'
    '2. describe(#1, "visual", "What colour is the screen?")\n'
    '3. synthesize("Pick the option.")',
}


def _j(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


class Planner(FakeHolder):
    """Writes the variant's fixed plan, and answers each tool by rule from the prompt."""

    def __init__(self, plans=PLANS, name="tiny-qwen3-omni"):
        from murgat_local.engines import load_preset

        self.preset = load_preset(name)
        self.name = self.kind = name
        self.identity = f"planner:{sorted(plans.items())}"
        self.stats = EngineStats()
        self.started = True
        self.plans = plans
        self.seen = []
        self.batches = []

    def _reply(self, r) -> str:
        system = r.system or ""
        if "You plan how to answer" in system or "by writing a small program" in system:
            variant = ("logic" if "program" in system.split(".")[0] else "narrative") + (
                "-imperative" if "find" in system else "-declarative"
            )
            return self.plans[variant]
        kind = r.verdict.__name__ if r.verdict else None
        if kind == "Spans":
            return _j({"spans": ["0:02-0:03", "0:07-0:08", "0:30-0:40"]})
        if kind == "YesNo":  # find's check: the green second is 0:02-0:03 in the sample
            return _j({"label": "YES" if "0:02-0:03" in r.prompt else "NO"})
        if kind == "Observation":
            return _j(
                {"sentence": f"It looks green here (visual, 9:99). {fenced(r.prompt, 'REQUEST')}"}
            )
        if kind == "Synthesis":
            return _j(
                {"text": "The screen is green [1], and something is heard [2][7].", "answer": "B"}
            )
        if r.choices:
            return r.choices[0]
        return "Answer: A"

    def judge(self, requests):
        self.batches.append(len(requests))
        out = []
        for r in requests:
            self.seen.append(r)
            out.append(finish(r, self._reply(r), 50, 10))
        record(self.stats, out)
        return out


def run(tmp_path, media_root, engine, strategies, out="gen", dataset=None, **cfg):
    config = GenerateConfig(models=["tiny-qwen3-omni"], strategies=strategies, **cfg)
    runner = GenerateRunner(
        config,
        media_root,
        tmp_path / out,
        engines={"tiny-qwen3-omni": engine},
        grades=GenerationGrades(),
    )
    try:
        result = runner.run(dataset or ROOT / "samples" / "questions.jsonl")
    finally:
        runner.close()
    return result


def rows(path):
    return [json.loads(l) for l in path.read_text().splitlines()]
