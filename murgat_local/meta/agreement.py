"""How far a judge's annotations agree with the truth's (a person's labels), per subtask.

Pure functions over `ResponseView`s, paired by response id:
- subtask 1 (verifiable-claim identification): per aligned sentence, the truth's label vs the
  judge's verdict;
- subtask 2 (atomic-fact decomposition): per sentence both decomposed, the judge's facts matched
  one to one with the truth's (`FACT_MATCH`), precision / recall / F1 over facts;
- subtask 3 (attribution): per judge fact matched to a truth fact, the joint entailment verdict
  vs the truth's `entailed`;
- the per-response scores (MURGAT-S, coverage, F1): correlations with bootstrap intervals.

Sentences align when the two responses split into the same sentences (texts equal after
whitespace normalization); a response that does not align is left out of the sentence and fact
statistics and counted, with the first sentence that differs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..metrics.agreement import cohen_kappa, krippendorff_alpha
from ..metrics.stats import correlation
from ..stages import Stage
from .views import ResponseView, norm

FACT_THRESHOLD = 0.6
FACT_MATCH = (
    f"a judge fact matches a truth fact of the same sentence when their word sets (lower case, "
    f"\\w+ tokens) have Jaccard similarity >= {FACT_THRESHOLD}; one to one, greedily by "
    f"similarity"
)
_WORD = re.compile(r"\w+")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def match_facts(judge: Sequence[str], truth: Sequence[str]) -> list[tuple[int, int]]:
    """(judge index, truth index) pairs under `FACT_MATCH`."""
    pairs = sorted(
        ((jaccard(a, b), i, j) for i, a in enumerate(judge) for j, b in enumerate(truth)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_i, used_j, out = set(), set(), []
    for sim, i, j in pairs:
        if sim < FACT_THRESHOLD:
            break
        if i not in used_i and j not in used_j:
            used_i.add(i)
            used_j.add(j)
            out.append((i, j))
    return sorted(out)


def first_difference(a: ResponseView, b: ResponseView) -> str | None:
    """Why two views of a response do not align (None when their sentences do)."""
    for k, (x, y) in enumerate(zip(a.sentences, b.sentences), 1):
        if norm(x.text) != norm(y.text):
            return f"sentence {k} differs: {norm(x.text)[:80]!r} vs {norm(y.text)[:80]!r}"
    if len(a.sentences) != len(b.sentences):
        return f"{len(a.sentences)} sentences vs {len(b.sentences)}"
    return None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def binary(pairs: Sequence[tuple[bool, bool]]) -> dict:
    """Accuracy, balanced accuracy, precision and recall of predictions against truth (pairs of
    (truth, prediction)); a value with an empty denominator is null, with a note."""
    tp = sum(1 for t, p in pairs if t and p)
    tn = sum(1 for t, p in pairs if not t and not p)
    fp = sum(1 for t, p in pairs if not t and p)
    fn = sum(1 for t, p in pairs if t and not p)
    tpr, tnr = _ratio(tp, tp + fn), _ratio(tn, tn + fp)
    out: dict = {
        "n": len(pairs),
        "accuracy": _ratio(tp + tn, len(pairs)),
        "balanced_accuracy": (tpr + tnr) / 2 if tpr is not None and tnr is not None else None,
        "precision": _ratio(tp, tp + fp),
        "recall": tpr,
    }
    notes = []
    if tpr is None or tnr is None:
        notes.append("balanced accuracy needs both classes in the truth")
    if tp + fp == 0:
        notes.append("precision: no positive prediction")
    if notes:
        out["note"] = "; ".join(notes)
    return out


class Judgement(NamedTuple):
    """One yes/no judgement paired with a person's label: the judge's p_yes (None: not
    recorded), the person's label, the judge's decoded verdict (which may disagree with
    p_yes >= 0.5: a label spelt in two tokens), and the item it is about, the same in every run
    of these responses: (response id, sentence index) for `verifiable`, plus the index of the
    person's fact for `entail`, plus the citation's index for `precise`."""

    p_yes: float | None
    truth: bool
    verdict: bool
    key: tuple


@dataclass
class Aligned:
    """What the judge and the truth both annotated, paired: (truth, judge) labels per yes/no
    subtask, fact counts for subtask 2, and the responses that do not align."""

    shared: list[str]
    subtask1: list[tuple[bool, bool]] = field(default_factory=list)
    subtask3: list[tuple[bool, bool]] = field(default_factory=list)
    precise: list[tuple[bool, bool]] = field(
        default_factory=list
    )  # citations of facts both call entailed
    n_sentences: int = 0
    judge_facts: int = 0
    truth_facts: int = 0
    matched: int = 0
    misaligned: dict[str, str] = field(default_factory=dict)
    # Each yes/no judgement paired above, by stage: verifiable (subtask 1), entail (subtask 3),
    # precise (a citation of a fact both call entailed, when a judgement decided it:
    # `views.precise_p_yes`)
    confidence: dict[str, list[Judgement]] = field(
        default_factory=lambda: {Stage.VERIFIABLE: [], Stage.ENTAIL: [], Stage.PRECISE: []}
    )


def align(judge: Mapping[str, ResponseView], truth: Mapping[str, ResponseView]) -> Aligned:
    """One pass over the responses both annotated: sentences aligned by text, facts matched one
    to one (`FACT_MATCH`), and every pair of labels that can be compared."""
    out = Aligned(sorted(set(judge) & set(truth)))
    for rid in out.shared:
        j, t = judge[rid], truth[rid]
        why = first_difference(j, t)
        if why:
            out.misaligned[rid] = why
            continue
        for n, (js, ts) in enumerate(zip(j.sentences, t.sentences)):
            if js.verifiable is not None and ts.verifiable is not None:
                out.subtask1.append((ts.verifiable, js.verifiable))
                out.confidence[Stage.VERIFIABLE].append(
                    Judgement(js.verifiable_p, ts.verifiable, js.verifiable, (rid, n))
                )
            if js.facts is None or ts.facts is None:
                continue
            out.n_sentences += 1
            pairs = match_facts([f.text for f in js.facts], [f.text for f in ts.facts])
            out.judge_facts += len(js.facts)
            out.truth_facts += len(ts.facts)
            out.matched += len(pairs)
            for i, k in pairs:
                jf, tf = js.facts[i], ts.facts[k]
                if jf.entailed is None or tf.entailed is None:
                    continue
                out.subtask3.append((tf.entailed, jf.entailed))
                out.confidence[Stage.ENTAIL].append(
                    Judgement(jf.entailed_p, tf.entailed, jf.entailed, (rid, n, k))
                )
                if tf.entailed and jf.entailed and len(tf.precise) == len(jf.precise):
                    out.precise.extend(
                        (a, b)
                        for a, b in zip(tf.precise, jf.precise)
                        if a is not None and b is not None
                    )
                    judged = zip(tf.precise, jf.precise, jf.precise_p, jf.precise_judged)
                    out.confidence[Stage.PRECISE].extend(
                        Judgement(p, a, b, (rid, n, k, c))
                        for c, (a, b, p, j) in enumerate(judged)
                        if a is not None and b is not None and j
                    )
    return out


def evaluate(
    judge: Mapping[str, ResponseView],
    truth: Mapping[str, ResponseView],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    aligned: Aligned | None = None,
) -> dict:
    """Every statistic of one judge against the truth, over the responses both annotated
    (`aligned`: their `align`, when the caller has it already)."""
    a = aligned or align(judge, truth)
    shared, s1, s3, misaligned = a.shared, a.subtask1, a.subtask3, a.misaligned
    judged_facts, truth_facts, matched, n_sentences = (
        a.judge_facts,
        a.truth_facts,
        a.matched,
        a.n_sentences,
    )
    p, r = _ratio(matched, judged_facts), _ratio(matched, truth_facts)
    subtask3 = binary(s3)
    out = {
        "responses": {
            "shared": len(shared),
            "only_judge": len(set(judge) - set(truth)),
            "only_truth": len(set(truth) - set(judge)),
            "misaligned": len(misaligned),
            "misaligned_examples": dict(list(misaligned.items())[:5]),
        },
        "subtask1": binary(s1),
        "subtask2": {
            "n_sentences": n_sentences,
            "judge_facts": judged_facts,
            "truth_facts": truth_facts,
            "matched": matched,
            "precision": p,
            "recall": r,
            "f1": (
                2 * p * r / (p + r)
                if p and r
                else (0.0 if p is not None and r is not None else None)
            ),
            "rule": FACT_MATCH,
        },
        "subtask3": {
            k: subtask3[k]
            for k in (
                "n",
                "accuracy",
                "balanced_accuracy",
                *(("note",) if "note" in subtask3 else ()),
            )
        },
    }
    for metric in ("murgat_s", "coverage", "f1"):
        pairs = [(judge[rid].scores.get(metric), truth[rid].scores.get(metric)) for rid in shared]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
        stats: dict = {"n": len(pairs)}
        for kind in ("pearson", "spearman", "kendall"):
            c = correlation(xs, ys, kind, ci=kind != "kendall", n_resamples=resamples, seed=seed)
            stats[kind] = c["value"]
            if kind != "kendall":
                stats[f"{kind}_ci"] = c.get("ci")
            if c.get("note"):
                stats.setdefault("note", c["note"])
        out[metric] = stats
    return out


def with_chance_agreement(
    truth: Mapping[str, ResponseView],
    other: Mapping[str, ResponseView],
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> dict:
    """`evaluate` of `other` against `truth`, with Cohen's kappa and Krippendorff's alpha
    (`metrics.agreement`) added to the yes/no subtasks and to `precise` (the citations'
    necessity): one annotator against another (`murgat annotate`'s agreement view, `murgat
    meta-eval`'s `inter_annotator`), or a judge against an annotator."""
    aligned = align(other, truth)
    result = evaluate(other, truth, resamples=resamples, seed=seed, aligned=aligned)
    for block in ("subtask1", "subtask3", "precise"):
        pairs = getattr(aligned, block)
        stats = result.setdefault(block, {"n": len(pairs)})
        stats["kappa"] = cohen_kappa(pairs)
        stats["alpha"] = krippendorff_alpha(pairs)
    return result
