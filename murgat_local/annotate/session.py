"""One annotator's session over a source and a store: what to ask next, answers, undo, progress,
and the labels file kept up to date. The server is a thin layer over this.

The answers of this annotator are held in memory as well as in the store (read back at start),
so finding the next question costs the current response's questions, not the store's size: a
cursor walks the responses in asking order and stays at the first one not finished (an undo
moves it back).

Responses are asked in a random order drawn with a seed (`--order-seed`, 0 by default), the
same for every annotator of a store and whatever the source's order: by SHA-256 of the seed and
the response's id. The seed is written into each labels line (`order: {"seed": S}`), so that
`murgat meta-eval` knows labels taken from the start of it are a random sample of the responses
(what its PPI estimates assume). `--order file` asks in the source's order and records none. The
store keeps the order it was started with; a store with answers from before the order was
recorded goes on in file order.

With an overlap (`--overlap K`), K responses chosen by a hash of their ids (the same K whatever
the source order) are asked of everyone, first; each other response goes to the first annotator
who reaches it (a claim in the store) and is skipped by the others.
"""

from __future__ import annotations

import hashlib
import pathlib
import threading
from typing import Any

from ..jsonl import dumps_record
from ..media.segments import SegmentOptions
from ..media.source import MediaInfo
from .all_answers import agreement_report, answers_of, human_views
from .export import LabelsLock, label_record, write_atomic
from .questions import UNSURE, check_answer, find, next_question, questions
from .session_page import SessionPage
from .source import Item, Source
from .store import Store


class SessionError(Exception):
    """A session that cannot start as asked (a usage error)."""


ORDERS = ("random", "file")
DEFAULT_SEED = 0


def asking_order(ids: list[str], seed: int | None) -> list[str]:
    """`ids` in the order they are asked: by SHA-256 of the seed and the id (None: as given)."""
    if seed is None:
        return list(ids)
    return sorted(
        ids,
        key=lambda i: hashlib.sha256(f"{seed}\0{i}".encode("utf-8", "surrogatepass")).hexdigest(),
    )


def pick_overlap(ids: list[str], k: int) -> list[str]:
    """The `k` responses everyone labels: the first by SHA-256 of their id."""
    return sorted(
        ids, key=lambda i: hashlib.sha256(i.encode("utf-8", "surrogatepass")).hexdigest()
    )[:k]


class Session(SessionPage):
    def __init__(
        self,
        source: Source,
        store: Store,
        annotator: str,
        *,
        show_judge: bool = False,
        overlap: int | None = None,
        labels: pathlib.Path | None = None,
        hold: bool = True,
        order: str | None = None,
        order_seed: int | None = None,
    ):
        """`order` "random" (the default for a new store) or "file", and `order_seed` (random
        only; default 0): None keeps what the store was started with. SessionError when they
        differ from it."""
        # The labels file is this session's alone, an export's too (LabelsBusy otherwise); an
        # export takes no annotator's lock on the store: it only reads, beside their server.
        self._labels_lock = LabelsLock(labels) if labels is not None else None
        try:
            if hold:
                store.lock(annotator)
            self._open(source, store, annotator, show_judge, overlap, labels, order, order_seed)
        except BaseException:
            if self._labels_lock is not None:
                self._labels_lock.release()
            raise

    def _open(
        self,
        source: Source,
        store: Store,
        annotator: str,
        show_judge: bool,
        overlap: int | None,
        labels: pathlib.Path | None,
        order: str | None = None,
        order_seed: int | None = None,
    ) -> None:
        self.source, self.store, self.annotator = source, store, annotator
        self.show_judge, self.labels = show_judge, labels
        self.lock = threading.RLock()
        self.items = source.items
        self.by_id = {it.id: it for it in self.items}
        self.shared = self._overlap(overlap)
        self.order_seed = self._order(order, order_seed)
        asked = [self.by_id[i] for i in asking_order([it.id for it in self.items], self.order_seed)]
        first = [it for it in asked if self.shared is None or it.id in self.shared]
        self.order = first + [
            it for it in asked if self.shared is not None and it.id not in self.shared
        ]
        self.position = {it.id: n for n, it in enumerate(self.order)}
        claims = store.claims()
        self.mine = {r for r, a in claims.items() if a == annotator}
        self.others = {r for r, a in claims.items() if a != annotator}
        self.answers: dict[str, dict[str, object]] = {it.id: {} for it in self.items}
        self.shown: dict[str, dict[str, bool]] = {it.id: {} for it in self.items}
        self.stale = 0  # answers made on another split of a response, or on a response no longer in the source
        for a in store.answers(annotator):
            item = self.by_id.get(a.response)
            if item is None or a.digest != item.digest:
                self.stale += 1
                continue
            self.answers[a.response][a.question] = a.value
            self.shown[a.response][a.question] = a.judge_shown
        self.counts: dict[str, tuple[int, int, int]] = {}
        self.totals = [
            0,
            0,
            0,
        ]  # answered, open, unsure over the responses that may be this annotator's
        for it in self.items:
            if it.id not in self.others:
                self._recount(it)
        # Each finished response's labels line (or why it has none), kept so that rewriting the
        # file costs a join, not a rebuild of every response, while answers wait.
        self.finished: dict[str, tuple[str | None, str | None]] = {}
        for it in self.items:
            if self.counts.get(it.id, (0, 1, 0))[1] == 0:
                self._finish(it)
        self.cursor = 0
        while self.cursor < len(self.order) and self.order[self.cursor].id in self.finished:
            self.cursor += 1
        self.media = sorted({it.media for it in self.items})
        self.media_index = {p: n for n, p in enumerate(self.media)}
        self._info: dict[pathlib.Path, MediaInfo | str] = {}  # str: why it cannot be probed
        self._window = SegmentOptions(audio_point_window=source.audio_point_window)
        self._dirty = threading.Event()
        self._closing = False
        self._write_lock = threading.Lock()
        self._writer: threading.Thread | None = None

    # ------------------------------------------------------------ assignment

    def _overlap(self, k: int | None) -> set[str] | None:
        stored: Any = self.store.get_meta("overlap")  # JSON: {"k", "ids"} as written below
        if k is not None:
            if k < 0:
                raise SessionError("--overlap takes a number of responses, 0 or more")
            stored = self.store.set_meta_once(
                "overlap", {"k": k, "ids": pick_overlap([i.id for i in self.items], k)}
            )
            if stored["k"] != k:
                raise SessionError(
                    f"the store {self.store.path} was started with --overlap {stored['k']}; "
                    f"it cannot change (give --overlap {stored['k']}, or none)"
                )
        return None if stored is None else set(stored["ids"])

    def _order(self, order: str | None, seed: int | None) -> int | None:
        """The seed of the asking order (None: file order), as the store keeps it."""
        if order is not None and order not in ORDERS:
            raise SessionError(f"--order takes {' or '.join(ORDERS)}, not {order!r}")
        if order == "file" and seed is not None:
            raise SessionError(
                "--order-seed draws a random order: it does not go with --order file"
            )
        asked = order or "random"
        want = {"order": asked, "seed": (DEFAULT_SEED if seed is None else seed)}
        if asked == "file":
            want["seed"] = None
        stored: Any = self.store.get_meta("order")
        if stored is None:
            if order is None and seed is None and self.store.count():
                # answers given before the order was recorded were asked in file order
                want = {"order": "file", "seed": None}
            stored = self.store.set_meta_once("order", want)
        given = order is not None or seed is not None
        if given and (stored["order"] != asked or (seed is not None and stored["seed"] != seed)):
            was = "file" if stored["seed"] is None else f"random, --order-seed {stored['seed']}"
            raise SessionError(
                f"the store {self.store.path} was started with --order {was}; it cannot change "
                "(give the same, or neither)"
            )
        return stored["seed"]

    def _is_mine(self, item: Item) -> bool:
        if self.shared is None or item.id in self.shared or item.id in self.mine:
            return True
        if item.id in self.others:
            return False
        if self.store.claim(item.id, self.annotator) == self.annotator:
            self.mine.add(item.id)
            return True
        self.others.add(item.id)
        self._uncount(item)
        return False

    # ------------------------------------------------------------ counts

    def _recount(self, item: Item) -> bool:
        """Refresh `item`'s counts; whether it is finished."""
        answers = self.answers[item.id]
        asked = list(questions(item, answers))
        n_open = sum(1 for q in asked if q.suffix not in answers)
        new = (len(asked) - n_open, n_open, sum(1 for v in answers.values() if v == UNSURE))
        old = self.counts.get(item.id, (0, 0, 0))
        self.counts[item.id] = new
        for k in range(3):
            self.totals[k] += new[k] - old[k]
        return n_open == 0

    def _uncount(self, item: Item) -> None:
        old = self.counts.pop(item.id, (0, 0, 0))
        for k in range(3):
            self.totals[k] -= old[k]

    # ------------------------------------------------------------ the API's operations

    def next(self) -> dict:
        with self.lock:
            while self.cursor < len(self.order):
                item = self.order[self.cursor]
                if self._is_mine(item):
                    q = next_question(item, self.answers[item.id])
                    if q is not None:
                        return {"done": False, "question": self.payload(item, q)}
                self.cursor += 1
            return {"done": True}

    def answer(self, key: object, value: object) -> tuple[int, dict]:
        """(HTTP status, body) for an answer to the question `key`."""
        if not isinstance(key, str) or "#" not in key:
            return 422, {"error": "key must be a question's key, as /api/next gives it"}
        rid, _, suffix = key.rpartition("#")
        with self.lock:
            item = self.by_id.get(rid)
            if item is None:
                return 404, {"error": f"no response {rid!r} in this source"}
            if not self._is_mine(item):
                return 409, {"error": f"response {rid!r} is another annotator's (--overlap)"}
            answers = self.answers[rid]
            if suffix in answers:
                q = next((q for q in questions(item, answers) if q.suffix == suffix), None)
                same = q is not None and check_answer(q, value)[0] == answers[suffix]
                if same:
                    return 200, {"ok": True, "key": key, "already": True}
                return 409, {
                    "error": f"{key!r} is already answered ({answers[suffix]!r}); undo it first"
                }
            q = find(item, answers, suffix)
            if q is None:
                return 409, {"error": f"{key!r} is not a question open now"}
            stored, why = check_answer(q, value)
            if why:
                return 422, {"error": why}
            _, live = self.store.add(
                self.annotator, rid, item.digest, suffix, stored, self.show_judge
            )
            answers[suffix] = live
            self.shown[rid][suffix] = self.show_judge
            finished = self._recount(item)
            if finished:
                self._finish(item)
                self._dirty.set()
            return 200, {"ok": True, "key": key, "response_finished": finished}

    def undo(self) -> dict:
        with self.lock:
            a = self.store.undo_last(self.annotator)
            if a is None:
                return {"undone": None}
            item = self.by_id.get(a.response)
            if item is not None and a.digest == item.digest:
                was_finished = self.counts.get(item.id, (0, 1, 0))[1] == 0
                self.answers[item.id].pop(a.question, None)
                self.shown[item.id].pop(a.question, None)
                self._recount(item)
                self.cursor = min(self.cursor, self.position[item.id])
                if was_finished:
                    self.finished.pop(item.id, None)
                    self._dirty.set()
            return {"undone": f"{a.response}#{a.question}"}

    def progress(self) -> dict:
        with self.lock:
            answered, open_, unsure = self.totals
            done = sum(1 for r, c in self.counts.items() if c[1] == 0)
            return {
                "answered": answered,
                "total": answered + open_,
                "unsure": unsure,
                "responses": {"done": done, "total": len(self.counts)},
                "annotator": self.annotator,
                "show_judge": self.show_judge,
                "overlap": len(self.shared) if self.shared is not None else None,
                "stale_answers": self.stale,
                "unusable": [
                    {"id": u.id, "source": u.source, "reason": u.reason}
                    for u in self.source.unusable
                ],
            }

    # ------------------------------------------------------------ labels

    def _finish(self, item: Item) -> None:
        order = {"seed": self.order_seed} if self.order_seed is not None else None
        record, why = label_record(
            item, self.answers[item.id], self.annotator, self.shown[item.id], order=order
        )
        self.finished[item.id] = (
            (None, f"{item.id}: {why}") if record is None else (dumps_record(record), None)
        )

    def lines(self) -> tuple[list[str], list[str]]:
        """This annotator's finished responses as labels lines (source order), and why each finished
        response that is left out is."""
        with self.lock:
            done = [
                self.finished[it.id]
                for it in self.items
                if it.id in self.finished and it.id not in self.others
            ]
            return [line for line, _ in done if line is not None], [
                why for _, why in done if why is not None
            ]

    def export(self) -> tuple[int, list[str]]:
        """Rewrite the labels file now; (responses written, responses left out and why)."""
        with self._write_lock:
            lines, left = self.lines()
            if self.labels is not None:
                write_atomic(self.labels, lines)
            return len(lines), left

    def start_writer(self) -> None:
        """Rewrite the labels file in the background whenever a response finishes or reopens."""

        def loop():
            while True:
                self._dirty.wait()
                if self._closing:
                    return
                self._dirty.clear()
                self.export()

        self._writer = threading.Thread(target=loop, name="labels-writer", daemon=True)
        self._writer.start()

    def close(self) -> tuple[int, list[str]]:
        """Stop the writer, write the labels file a last time, release the store."""
        self._closing = True
        self._dirty.set()
        if self._writer is not None:
            self._writer.join()
        try:
            return self.export()
        finally:
            self.release()

    def release(self) -> None:
        """Let go of the store and the labels file without writing it (an export has written it)."""
        if self._labels_lock is not None:
            self._labels_lock.release()
        self.store.close()


__all__ = [
    "Session",
    "SessionError",
    "ORDERS",
    "agreement_report",
    "answers_of",
    "asking_order",
    "human_views",
    "pick_overlap",
]
