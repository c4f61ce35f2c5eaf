"""A deterministic judge for unit tests of the protocol logic: it reads the prompt and the
attached media (dominant colour of frames, loudness of audio) and answers by fixed rules."""

from __future__ import annotations

import json
import re

import numpy as np

from murgat_local.engines.base import EngineStats, JudgeResult, finish, record, refusal
from murgat_local.media.parts import AudioPart, ImagePart, VideoPart
from murgat_local.sample.media import COLORS, dominant_color

COLOR_WORDS = [c[0] for c in COLORS] + ["gray"]


def fenced(prompt: str, label: str) -> str | None:
    """The text a prompt holds between `<<<LABEL` and `LABEL>>>` (None when it has no such fence)."""
    m = re.search(rf"<<<{label}\n(.*?)\n{label}>>>", prompt, re.S)
    return m.group(1) if m else None


def _j(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class FakeHolder:
    """What a test's engine holder states besides its identity (`engines.holder.EngineHolder`):
    a model of no preset, known only by its name, answering the same for every item."""

    kind = "fake"
    identity_detail = None
    neutralization = None
    preset = None
    modalities = frozenset({"text", "image", "video", "audio"})
    unavailable: dict = {}
    per_item = False
    needs_media = True
    media_by_reference = False
    started = True
    stats = EngineStats()

    def get(self):
        return self

    def close(self):
        pass

    def check_response(self, item_id, sentences, *, member=False):
        return None


class OracleEngine(FakeHolder):
    """An engine that is its own holder."""

    def __init__(self, name="oracle", modalities=("text", "image", "video", "audio"), salt=""):
        self.name = name
        self.kind = name  # what the judge's messages name it by
        self.modalities = frozenset(modalities)
        self.stats = EngineStats()
        self.identity = f"oracle:{name}:{salt}"
        self.started = True
        self.seen = []

    def _answer(self, req) -> str:
        kind = req.verdict.__name__
        prompt = req.prompt
        if kind == "Rewrite":
            return _j({"sentence": fenced(prompt, "SENTENCE").strip()})
        if kind == "RewrittenText":
            return _j({"text": fenced(prompt, "TEXT").strip()})
        if kind == "AtomicFacts":
            sent = fenced(prompt, "SENTENCE").strip().rstrip(".")
            facts = [f.strip() + "." for f in re.split(r"\band\b|,", sent) if f.strip()]
            return _j({"facts": facts[:6]})
        sent = fenced(prompt, "SENTENCE")
        if sent is not None:
            verifiable = not re.match(
                r"(therefore|so|hence|the answer|thus)\b", sent.strip().lower()
            )
            return _j({"label": "YES" if verifiable else "NO"})
        claim = fenced(prompt, "CLAIM").strip().lower()
        seen_colors, loud = set(), False
        for m in req.media:
            if isinstance(m, ImagePart):
                seen_colors.add(dominant_color(m.pixels))
            elif isinstance(m, VideoPart):
                seen_colors.update(dominant_color(f) for f in m.frames)
            elif isinstance(m, AudioPart):
                loud = loud or float(np.sqrt(np.mean(m.waveform**2))) > 0.05
        said = [c for c in COLOR_WORDS if re.search(rf"\b{c}\b", claim)]
        audio_claim = any(w in claim for w in ("tone", "voice", "sound", "music", "says"))
        ok = (not said or all(c in seen_colors for c in said)) and (not audio_claim or loud)
        ok = ok and (said or audio_claim)
        return _j({"label": "YES" if ok else "NO"})

    def judge(self, requests):
        results = []
        for r in requests:
            self.seen.append(r)
            why = refusal(r, self.name, self.modalities)
            if why:
                results.append(JudgeResult(error=why))
                continue
            results.append(finish(r, self._answer(r), 10, 5))
        record(self.stats, results)
        return results
