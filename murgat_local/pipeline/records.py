"""Per-response records (one `results.ScoreRecord`, a line of scores.jsonl) and rescoring them without a model.

A record's `trace` holds every verdict the metric math reads, so `rescore` recomputes each
number from it and every number in a summary can be traced to the sample that produced it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping

from ..grading import (
    FactScore,
    SentenceScore,
    graded_correct,
    score_fact_default,
    score_fact_reference,
    score_response,
)
from ..inputs.responses import InputError
from ..judges.verdicts import ReasonedYesNo, YesNo
from ..results import CURRENT, ScoreRecord, Verdict, as_model
from ..results.records import CitationRecord
from ..results.versions import validate
from ..stages import PROTOCOL, Stage
from ..text.open_answers import matches, open_answer
from .judging import Outcome
from .protocol import REFERENCE, ResponseState

METRIC_FIELDS = ("coverage", "precision", "recall", "f1", "murgat_s")
# What the input row says of its question (the dataset's categories, its benchmark, the kind of
# question), carried as given so that summaries can be split by them (`--group-by`).
LABEL_FIELDS = ("benchmark", "categories", "question_type")


def labels(row: Mapping) -> dict:
    return {k: row[k] for k in LABEL_FIELDS if row.get(k) is not None}


def answer_check(
    item, letter: str | None, number_tolerance: float
) -> tuple[str | None, str | None, bool | None]:
    """(predicted, gold, correct). Multiple-choice: the response's letter against the gold letter.
    Open: the response's short answer against the gold text or number (`text.open_answers`). No
    answer given counts as wrong (`grading.graded_correct`), and is visible in `answer`.
    A row `murgat generate` wrote carries the answer it read (`answer_path`, `predicted`: with
    the option texts and its answer judge); that answer is graded, so both commands agree."""
    read = item.record.get("predicted")
    generated = "answer_path" in item.record and (read is None or isinstance(read, str))
    if item.record.get("question_type") == "open":
        said = read if generated else open_answer(item.generation)
    else:
        said = read if generated else letter
    return _graded(said, item.answer, item.record.get("question_type"), number_tolerance)


def _graded(
    said: str | None, answer: object, kind: object, number_tolerance: float
) -> tuple[str | None, str | None, bool | None]:
    """(predicted, gold, correct) of the answer `said` against the gold `answer`."""
    text = str(answer).strip() if answer is not None else ""
    if kind == "open":
        gold = text or None
        agree = matches(said, gold, number_tolerance)
    else:
        gold = text.upper()[:1] or None
        agree = said == gold
    return said, gold, graded_correct(gold is not None, said is not None, agree)


def generated_answer(row: Mapping, number_tolerance: float) -> dict:
    """The answer check (`answer`, `correct`) of a row `murgat generate` wrote and answered
    (status ok), graded from the answer it read; empty for any other row. A response that could
    not be scored keeps it: its answer was read without the judges, and generate graded it."""
    read = row.get("predicted")
    if (
        "answer_path" not in row
        or row.get("status", "ok") != "ok"
        or not (read is None or isinstance(read, str))
    ):
        return {}
    predicted, gold, correct = _graded(
        read, row.get("answer"), row.get("question_type"), number_tolerance
    )
    return {"answer": {"predicted": predicted, "gold": gold}, "correct": correct}


def _verdict(out: Outcome | None) -> dict | None:
    if out is None:
        return None
    v = out.verdict if out.ok else None
    d: dict = {"value": v.model_dump() if v is not None else None}
    if isinstance(v, YesNo | ReasonedYesNo):
        d["value"] = v.yes
        # Its confidence beside it (null only where the engine gave no log-probabilities).
        d["p_yes"] = out.p_yes
        if out.p_yes is None:
            d["p_yes_unknown"] = out.p_yes_unknown or "no p_yes was recorded"
    d.update(out.trace())
    if out.panel is not None:  # a panel's decision: every member's own verdict beside it
        d["panel"] = {**out.panel, "members": {name: _verdict(o) for name, o in out.members}}
    if out.cascade is not None:  # an escalation: who decided, and what each judge asked said
        d["decided_by"] = out.cascade["decided_by"]
        d["abstained"] = out.cascade["decided_by"] is None
        d["cascade"] = [
            {**step.as_dict(), **(_verdict(o) or {})} for step, o in out.cascade["asked"]
        ]
    return d


def yes_no_verdicts(rec: ScoreRecord) -> Iterator[tuple[Stage, tuple, Verdict]]:
    """(stage, where, verdict) for every yes/no verdict of a record's trace; `where` names it:
    (sentence,) for verifiable, (sentence, fact, slot) for entailment, slot "joint", "alone.K"
    or "without.K" (0-based)."""
    for i, s in enumerate(rec.trace.sentences if rec.trace is not None else ()):
        if s.verifiable is not None:
            yield Stage.VERIFIABLE, (i,), s.verifiable
        for j, f in enumerate(s.facts):
            if f.joint is not None:
                yield Stage.ENTAIL, (i, j, "joint"), f.joint
            for kind, slot in (("alone", f.alone), ("without", f.without)):
                for k, v in sorted(slot.items(), key=lambda kv: int(kv[0])):
                    if v is not None:
                        yield Stage.ENTAIL, (i, j, f"{kind}.{k}"), v


def certification_counts(rec: ScoreRecord) -> dict[str, dict]:
    """Per escalated stage in one record: verdicts decided per judge, and abstained."""
    out: dict[str, dict] = {}
    for stage, _, v in yes_no_verdicts(rec):
        # An escalation writes `decided_by` always, null where every judge abstained.
        if "decided_by" not in v.model_fields_set:
            continue
        c = out.setdefault(stage, {"decided_by": Counter(), "abstained": 0})
        if v.decided_by is None:
            c["abstained"] += 1
        else:
            c["decided_by"][v.decided_by] += 1
    return {s: {**c, "decided_by": dict(c["decided_by"])} for s, c in out.items()}


def _yes(v: Verdict | None) -> bool | None:
    return v.yes if v is not None else None


def _extracted(c: CitationRecord) -> bool:
    # A record written before `extracted` existed: every citation's segment was cut.
    return bool(c.extracted) if "extracted" in c.model_fields_set else True


def error_record(
    index: int,
    rid: str | None,
    reason: str,
    source: str = "",
    video: str | None = None,
    row: Mapping | None = None,
    number_tolerance: float = 0.01,
) -> dict:
    rec = {"index": index, "id": rid, "status": "error", "error": reason, "source": source}
    if video is not None:
        rec["video"] = video
    rec.update(labels(row or {}))
    for m in METRIC_FIELDS:
        rec[m] = None
    rec.update(generated_answer(row or {}, number_tolerance))
    return rec


def build_record(
    state: ResponseState | InputError, mode: str, number_tolerance: float = 0.01
) -> ScoreRecord:
    """The score record of one response (or of its error), as `scores.jsonl` holds it. A record
    its schema refuses (a value out of its bounds: never expected) is written as that response's
    error, naming the fields, and the run goes on."""
    data = {"schema_version": CURRENT, **_record(state, mode, number_tolerance)}
    got = validate(ScoreRecord, data, "score record")
    if isinstance(got, ScoreRecord):
        return got
    where = state if isinstance(state, InputError) else state.item
    return ScoreRecord.model_validate(
        error_record(where.index, where.id, f"its record could not be written: {got}", where.source)
    )


def _record(state: ResponseState | InputError, mode: str, number_tolerance: float) -> dict:
    if isinstance(state, InputError):
        return error_record(
            state.index, state.id, state.reason, state.source, None, state.row, number_tolerance
        )
    item = state.item
    if state.error:
        return error_record(
            item.index, item.id, state.error, item.source, item.video, item.record, number_tolerance
        )
    score = state.score
    if score is None:
        raise ValueError(f"response {item.id!r} has neither an error nor a score")
    predicted, gold, correct = answer_check(item, state.answer_letter, number_tolerance)
    sentences = []
    for s in state.sentences:
        sent: dict = {
            "text": s.original,
            "judged_text": s.text,
            "citations": [
                {**c.to_dict(), "usable": u, "issue": issue, "extracted": e}
                for c, u, issue, e in zip(s.citations, s.usable, s.issues, s.extracted)
            ],
            "verifiable": _verdict(s.verifiable),
            "unscored": s.score.why_unscored if s.score else None,
        }
        if s.unparsed_citations:  # not read as citations: the sentence may count as uncited
            sent["unparsed_citations"] = list(s.unparsed_citations)
        if s.decontext is not None:
            sent["decontext"] = _verdict(s.decontext)
            if s.decontext_note:
                sent["decontext"]["rejected"] = s.decontext_note
        if s.decomposition is not None:
            sent["decomposition"] = _verdict(s.decomposition)
        if s.facts:
            sent["facts"] = [
                {
                    "text": f.text,
                    "precision": f.score.precision if f.score else None,
                    "recall": f.score.recall if f.score else None,
                    "unscored": f.score.reason if f.score and not f.score.scored else None,
                    "precise": list(f.score.precise) if f.score else [],
                    "joint": _verdict(f.joint),
                    "alone": {str(i): _verdict(o) for i, o in sorted(f.alone.items())},
                    "without": {str(i): _verdict(o) for i, o in sorted(f.without.items())},
                }
                for f in s.facts
            ]
        sentences.append(sent)
    rec = {
        "index": item.index,
        "id": item.id,
        "status": "ok",
        "error": None,
        "source": item.source,
        "video": item.video,
        "model": item.model,
        **labels(item.record),
        "mode": mode,
        **{m: getattr(score, m) for m in METRIC_FIELDS},
        "note": score.note,
        "scored_fraction": score.scored_fraction,
        "counts": score.counts,
        "answer": {"predicted": predicted, "gold": gold},
        "correct": correct,
        "trace": {
            "text": state.reasoning,
            "text_decontext": _verdict(state.decontext_text),
            "text_note": state.text_note,
            "text_given": state.given_text is not None,  # the input's own decontextualized_text
            "sentences": sentences,
        },
    }
    return rec


def _unparsed(v: Verdict | None) -> bool:
    return v is not None and bool(v.unparsed)


def stage_failures(rec: ScoreRecord) -> dict[Stage, int]:
    """Unparsed verdicts per stage in one record."""
    out = dict.fromkeys(PROTOCOL, 0)
    trace = rec.trace
    if trace is None:
        return out
    out[Stage.DECONTEXT] += _unparsed(trace.text_decontext)
    for s in trace.sentences:
        out[Stage.DECONTEXT] += _unparsed(s.decontext)
        out[Stage.VERIFIABLE] += _unparsed(s.verifiable)
        out[Stage.DECOMPOSE] += _unparsed(s.decomposition)
        for f in s.facts:
            verdicts = [f.joint, *f.alone.values(), *f.without.values()]
            out[Stage.ENTAIL] += sum(map(_unparsed, verdicts))
    return out


# ---------------------------------------------------------------- rescoring


def rescore_record(rec: ScoreRecord, mode: str | None = None) -> ScoreRecord:
    """Recompute a record's scores from its trace, under `mode` (default: the record's own).
    A record that erred is returned as it is. ValueError: a scored record without a trace."""
    if rec.status != "ok":
        return rec
    if rec.trace is None:
        raise ValueError(f"record {rec.id!r}: status ok but no trace to rescore from")
    mode = mode or rec.mode or "default"
    reference = mode == REFERENCE
    sentences = []
    for s in rec.trace.sentences:
        cits = s.citations
        usable = [bool(c.usable) for c in cits]
        extracted = [_extracted(c) for c in cits]
        verifiable = _yes(s.verifiable)
        facts = []
        if verifiable and cits:
            for f in s.facts:
                alone = {int(i): _yes(v) for i, v in f.alone.items()}
                if reference:
                    fs = score_fact_reference(usable, extracted, alone, _yes(f.joint))
                else:
                    without = {int(i): _yes(v) for i, v in f.without.items()}
                    fs = score_fact_default(usable, _yes(f.joint), alone, without)
                facts.append(fs)
        decomposition = s.decomposition
        unscored = None
        if verifiable and cits and decomposition is not None and not s.facts:
            why = decomposition.unparsed or decomposition.error or "no facts"
            unscored = f"decomposition unusable ({why})"
        sentences.append(SentenceScore(verifiable, bool(cits), tuple(facts), unscored))
    score = score_response(sentences, reference=reference)
    rescored = {m: getattr(score, m) for m in METRIC_FIELDS}
    rescored |= {"scored_fraction": score.scored_fraction, "counts": score.counts}
    return rec.model_copy(update={**rescored, "note": score.note, "mode": mode})


def rescore_reference_entry(entry: Mapping) -> ScoreRecord:
    """The reference's own scored entry (`evaluations` keyed by sentence), scored as it does.
    The entry is the reference's JSON, not a record of ours: it is read as it comes. ValueError:
    a value the score record's schema refuses (an id that is an object, ...)."""
    sentences = []
    for _, data in (entry.get("evaluations") or {}).items():
        vw = (data.get("verification_worthy") or {}).get("prediction")
        facts = []
        cited = False
        for fact in data.get("atomic_facts") or []:
            scores = fact.get("scores") or {}
            if scores.get("citation_judgments"):
                cited = True
                facts.append(FactScore(scores.get("precision"), scores.get("recall")))
        # The reference counts a sentence as cited when any fact was judged against citations.
        sentences.append(SentenceScore(bool(vw) if vw is not None else False, cited, tuple(facts)))
    score = score_response(sentences, reference=True)
    rec = {
        "id": entry.get("id"),
        "status": "ok",
        "error": None,
        "video": entry.get("video"),
        "model": entry.get("model"),
        "mode": REFERENCE,
        **{m: getattr(score, m) for m in METRIC_FIELDS},
        "counts": score.counts,
        "note": score.note,
        "reference_response_score": entry.get("response_score"),
    }
    return as_model(ScoreRecord, rec)
