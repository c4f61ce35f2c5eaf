"""What the annotation page shows for one question: the response, the proposal and citations.

`SessionPage` is a base of `Session` that turns a question into the page's JSON: the proposal
to confirm, the fact and citation it is about, each citation with the problem it has in the
video (the video probed once per file), and the response around it. Apart from `session.py`,
which decides what to ask and keeps the answers, because this only reads the session's state
and changes with the page.
"""

from __future__ import annotations

import pathlib

from ..media.segments import SegmentOptions, check_citation
from ..media.source import MediaError, MediaInfo, probe
from .questions import proposal
from .source import Item


def _options(value: object) -> list[str] | None:
    return [str(v) for v in value] if isinstance(value, list) else None


class SessionPage:
    """The page's JSON for a question of a `Session` (a base of that class)."""

    # What the page reads of the session, set in `Session._open`.
    answers: dict[str, dict[str, object]]
    show_judge: bool
    order: list[Item]
    position: dict[str, int]
    media: list[pathlib.Path]
    media_index: dict[pathlib.Path, int]
    _info: dict[pathlib.Path, MediaInfo | str]
    _window: SegmentOptions

    def _citations(self, item: Item, i: int) -> list[dict]:
        info = self._info.get(item.media)
        if info is None:
            try:
                info = probe(item.media)
            except MediaError as e:
                info = str(e)
            self._info[item.media] = info
        out = []
        for c in item.sentences[i].citations:
            issue = info if isinstance(info, str) else check_citation(c, info, self._window)
            out.append({**c.to_dict(), "issue": issue})
        return out

    def payload(self, item: Item, q) -> dict:
        answers = self.answers[item.id]
        offer, origin = proposal(item, q, answers, self.show_judge)
        facts = answers.get(f"s{q.sentence + 1}.facts")
        if item.ask is not None:  # --abstained: the run's own facts
            p = item.sentences[q.sentence].proposal
            facts = list(p.facts) if p is not None and p.facts else None
        return {
            "key": f"{item.id}#{q.suffix}",
            "kind": q.kind,
            "proposal": offer,
            "proposal_from": origin,
            "sentence": q.sentence,
            "fact": q.fact,
            "citation": q.citation,
            "fact_text": facts[q.fact] if q.fact is not None and isinstance(facts, list) else None,
            "citations": self._citations(item, q.sentence),
            "audio_point_window": self._window.audio_point_window,
            "response": {
                "id": item.id,
                "position": self.position[item.id] + 1,
                "of": len(self.order),
                "question": item.question,
                "options": _options(item.options),
                "video": f"/media/{self.media_index[item.media]}",
                "sentences": [s.text for s in item.sentences],
                "note": item.note if self.show_judge else None,
            },
        }

    def media_path(self, n: int) -> pathlib.Path | None:
        return self.media[n] if 0 <= n < len(self.media) else None
