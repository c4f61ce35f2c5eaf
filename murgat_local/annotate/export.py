"""Labels in the `human:PATH` format (`text/labels.py` reads them), from one annotator's answers.

A response is written once every question it needs is answered. What cannot be written in that
format is left out and said: a sentence answered unsure on verifiability leaves its whole
response out (every sentence needs a `verifiable`); an unsure decomposition, entailment or
precision leaves that sentence's `facts` out (they are optional, and a fact needs both). Such
responses carry `unsure`, the questions answered so, which the reader ignores, as it ignores
`judge_shown` (the judges' proposals were on the page when a label was made).

The file is replaced atomically: written beside, flushed to disk, renamed over the old one. One
process writes it at a time (`LabelsLock`, a lock file beside it): two servers given the same
file, even for two annotators on two stores, would each replace the other's labels with their own.
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import tempfile
from collections.abc import Iterable, Mapping

from ..jsonl import dumps_record
from ..text.citations import parse_citations
from ..text.labels import LabelledFact, LabelledResponse, LabelledSentence
from .questions import UNSURE, open_questions, precise_labels
from .source import Item


def _facts(
    item: Item, i: int, answers: Mapping[str, object], shown: Mapping[str, bool]
) -> list[dict] | None:
    facts = answers.get(f"s{i + 1}.facts")
    if not isinstance(facts, list):
        return None
    n = len(item.sentences[i].citations)
    out = []
    for j, text in enumerate(facts):
        base = f"s{i + 1}.f{j + 1}"
        entailed = answers.get(f"{base}.entailed")
        if not isinstance(entailed, bool):
            return None
        fact: dict = {"text": text, "entailed": entailed}
        if entailed:
            precise = precise_labels(n, answers, base)
            if precise is None:
                return None
            fact["precise"] = list(precise)
        if any(v for k, v in shown.items() if k.startswith(base + ".")):
            fact["judge_shown"] = True
        out.append(fact)
    return out


def label_record(
    item: Item,
    answers: Mapping[str, object],
    annotator: str,
    shown: Mapping[str, bool] | None = None,
    *,
    order: Mapping | None = None,
) -> tuple[dict | None, str | None]:
    """The labels line for `item`, or why none can be written yet.

    Args:
        item: the response.
        answers: its answers by question suffix ("s1.verifiable").
        annotator: written as `annotator`.
        shown: per suffix, whether the judges' proposals were shown when it was answered.
        order: the random asking order it was asked in (`{"seed": S}`), written as `order`.
    """
    shown = shown or {}
    if open_questions(item, answers):
        return None, "not finished"
    if item.ask is not None:
        return _abstained_record(item, answers, annotator), None
    sentences = []
    for i, s in enumerate(item.sentences):
        verifiable = answers[f"s{i + 1}.verifiable"]
        if verifiable == UNSURE:
            return None, f"sentence {i + 1}: verifiability answered unsure"
        sentence: dict = {"text": s.text, "verifiable": verifiable}
        facts = _facts(item, i, answers, shown)
        if facts is not None:
            sentence["facts"] = facts
        if shown.get(f"s{i + 1}.verifiable") or shown.get(f"s{i + 1}.facts"):
            sentence["judge_shown"] = True
        sentences.append(sentence)
    record = {
        "id": item.id,
        "annotator": annotator,
        "sentences": sentences,
        "judge_shown": any(shown.get(k, False) for k in answers),
    }
    if order is not None:
        record["order"] = dict(order)
    unsure = [k for k, v in answers.items() if v == UNSURE]
    if unsure:
        record["unsure"] = sorted(unsure)
    return record, None


def _abstained_record(item: Item, answers: Mapping[str, object], annotator: str) -> dict:
    """`--abstained`: people's answers to the verdicts a run abstained on, each with the
    sentence, the run's fact and the citation it is about. Not the `human:PATH` format (which
    labels every sentence of a response): a line of its own shape, marked `abstained`."""
    rows = []
    for suffix in item.ask or ():
        *where, kind = suffix.split(".")
        i, *rest = [int(w[1:]) - 1 for w in where]
        j, k = (rest + [None, None])[:2]
        s = item.sentences[i]
        facts = s.proposal.facts if s.proposal is not None else None
        rows.append(
            {
                "question": suffix,
                "kind": kind,
                "sentence": s.text,
                "fact": facts[j] if j is not None and facts and j < len(facts) else None,
                "citation": s.citations[k].raw if k is not None and k < len(s.citations) else None,
                "answer": answers.get(suffix),
            }
        )
    return {"id": item.id, "annotator": annotator, "abstained": rows}


def to_labelled(record: Mapping) -> LabelledResponse:
    """A labels line as `read_labels` gives it back."""
    sentences = []
    for s in record["sentences"]:
        facts = None
        if "facts" in s:
            facts = tuple(
                LabelledFact(
                    f["text"], f["entailed"], tuple(f["precise"]) if "precise" in f else None
                )
                for f in s["facts"]
            )
        sentences.append(
            LabelledSentence(s["text"], s["verifiable"], facts, tuple(parse_citations(s["text"])))
        )
    return LabelledResponse(str(record["id"]), tuple(sentences), record.get("annotator"))


def write_atomic(path: pathlib.Path, lines: Iterable[str]) -> None:
    """Replace `path` with `lines` (each without its newline) so that a reader, or a crash at any
    moment, sees either the old file or the new one whole."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            for line in lines:
                f.write(line)
                f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except (
        OSError
    ):  # some filesystems cannot open a folder: the rename is done, only its flush is not
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


class LabelsBusy(Exception):
    """Another live process writes this labels file."""


class LabelsLock:
    """Hold the right to write a labels file until `release` (or the process's end, even by
    SIGKILL: the kernel drops the lock): `LABELS.lock` beside it, locked, holding our pid for the
    message another process gets. The lock file is left in place: removing it would let a third
    process lock a new file while a second still holds the old one."""

    def __init__(self, labels: pathlib.Path):
        given = pathlib.Path(labels)
        real = given.resolve()  # one lock however the file is named (relative, through a link)
        real.parent.mkdir(parents=True, exist_ok=True)
        self.path = real.with_name(real.name + ".lock")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 32).decode("ascii", "replace").strip()
            finally:
                os.close(fd)
            who = f"process {holder}" if holder.isdigit() else "another process"
            raise LabelsBusy(
                f"{given} is being written by another murgat annotate ({who}, lock {self.path}): "
                "give each server its own --labels file"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def write_labels(path: pathlib.Path, records: Iterable[dict]) -> int:
    """Write the labels file; returns how many responses it holds."""
    count = [0]

    def lines():
        for r in records:
            count[0] += 1
            yield dumps_record(r)

    write_atomic(path, lines())
    return count[0]


__all__ = [
    "LabelsBusy",
    "LabelsLock",
    "label_record",
    "to_labelled",
    "write_atomic",
    "write_labels",
]
