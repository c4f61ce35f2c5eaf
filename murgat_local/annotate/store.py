"""The answers, in SQLite (WAL): one store for every annotator of a source.

Each answer is committed (`synchronous=FULL`: on disk, not only in the OS cache) before the call
that made it returns, so a server killed at any moment and started again finds every answer it
acknowledged, and only those. An undone answer is kept, marked `undone_at`: the store is a log,
and at most one live answer per (annotator, response, digest, question) is enforced by a partial
unique index, so a question answered twice (two tabs, a retried request) keeps the first answer.
Answers are keyed by the response's digest of what was labelled (its id and sentence texts):
an answer made on another split of the response is never reused for this one.

Responses claimed by an annotator (`--overlap`: the ones outside the shared set are split among
annotators, each to the first who takes it) are in `claims`. The run's settings that must not
change between sessions (the overlap) are in `meta`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pathlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    annotator TEXT NOT NULL,
    response TEXT NOT NULL,
    digest TEXT NOT NULL,
    question TEXT NOT NULL,
    value TEXT NOT NULL,
    judge_shown INTEGER NOT NULL,
    at REAL NOT NULL,
    undone_at REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS one_live_answer
    ON answers (annotator, response, digest, question) WHERE undone_at IS NULL;
CREATE INDEX IF NOT EXISTS answers_by_annotator ON answers (annotator, seq);
CREATE TABLE IF NOT EXISTS claims (response TEXT PRIMARY KEY, annotator TEXT NOT NULL, at REAL NOT NULL);
"""


class StoreBusy(Exception):
    """Another live session holds this annotator's lock on the store."""


@dataclass(frozen=True)
class Answer:
    seq: int
    annotator: str
    response: str
    digest: str
    question: str
    value: object
    judge_shown: bool


class Store:
    def __init__(self, path: str | pathlib.Path):
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the server's threads; callers serialize access.
        self.db = sqlite3.connect(
            self.path, timeout=30, isolation_level=None, check_same_thread=False
        )
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self._locks: dict[str, int] = {}

    def close(self) -> None:
        for fd in self._locks.values():
            os.close(fd)
        self._locks.clear()
        self.db.close()

    # ------------------------------------------------------------ one session per annotator

    def lock(self, annotator: str) -> None:
        """Hold `annotator`'s lock until `close` (the kernel drops it when the process dies, even by
        SIGKILL). Two sessions of one annotator would each keep answers the other does not see."""
        digest = hashlib.sha256(annotator.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        fd = os.open(f"{self.path}.{digest}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreBusy(
                f"annotator {annotator!r} already has a session open on {self.path}"
            ) from None
        self._locks[annotator] = fd

    # ------------------------------------------------------------ settings

    def get_meta(self, name: str) -> object:
        row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def set_meta_once(self, name: str, value: object) -> object:
        """Store `value` unless `name` is set; the stored value either way."""
        self.db.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES (?, ?)", (name, json.dumps(value))
        )
        return self.get_meta(name)

    # ------------------------------------------------------------ answers

    def add(
        self,
        annotator: str,
        response: str,
        digest: str,
        question: str,
        value: object,
        judge_shown: bool,
    ) -> tuple[int, object]:
        """Commit an answer; returns (its seq, the live value): the earlier answer's when the
        question was already answered (then seq is that answer's)."""
        try:
            cur = self.db.execute(
                "INSERT INTO answers (annotator, response, digest, question, value, judge_shown, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    annotator,
                    response,
                    digest,
                    question,
                    json.dumps(value, ensure_ascii=False),
                    int(judge_shown),
                    time.time(),
                ),
            )
            seq = cur.lastrowid
            assert seq is not None, "an INSERT sets lastrowid"
            return seq, value
        except sqlite3.IntegrityError:
            row = self.db.execute(
                "SELECT seq, value FROM answers WHERE annotator = ? AND response = ? AND digest = ? "
                "AND question = ? AND undone_at IS NULL",
                (annotator, response, digest, question),
            ).fetchone()
            return row[0], json.loads(row[1])

    def undo_last(self, annotator: str) -> Answer | None:
        """Mark `annotator`'s latest live answer undone; returns it (None when there is none)."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            row = self.db.execute(
                "SELECT seq, annotator, response, digest, question, value, judge_shown FROM answers "
                "WHERE annotator = ? AND undone_at IS NULL ORDER BY seq DESC LIMIT 1",
                (annotator,),
            ).fetchone()
            if row is None:
                return None
            self.db.execute("UPDATE answers SET undone_at = ? WHERE seq = ?", (time.time(), row[0]))
        return _answer(row)

    def answers(self, annotator: str | None = None) -> Iterator[Answer]:
        """Live answers in the order they were made (one annotator's, or everyone's)."""
        sql = (
            "SELECT seq, annotator, response, digest, question, value, judge_shown FROM answers "
            "WHERE undone_at IS NULL"
        )
        args: tuple = ()
        if annotator is not None:
            sql += " AND annotator = ?"
            args = (annotator,)
        for row in self.db.execute(sql + " ORDER BY seq", args):
            yield _answer(row)

    def annotators(self) -> list[str]:
        return [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT annotator FROM answers WHERE undone_at IS NULL ORDER BY annotator"
            )
        ]

    def count(self, annotator: str | None = None) -> int:
        if annotator is None:
            return self.db.execute(
                "SELECT count(*) FROM answers WHERE undone_at IS NULL"
            ).fetchone()[0]
        return self.db.execute(
            "SELECT count(*) FROM answers WHERE undone_at IS NULL AND annotator = ?", (annotator,)
        ).fetchone()[0]

    # ------------------------------------------------------------ claims

    def claim(self, response: str, annotator: str) -> str | None:
        """Give `response` to `annotator` unless someone has it; returns who has it (None where
        the claim was released in between)."""
        self.db.execute(
            "INSERT OR IGNORE INTO claims (response, annotator, at) VALUES (?, ?, ?)",
            (response, annotator, time.time()),
        )
        return self.owner(response)

    def owner(self, response: str) -> str | None:
        row = self.db.execute(
            "SELECT annotator FROM claims WHERE response = ?", (response,)
        ).fetchone()
        return None if row is None else row[0]

    def claims(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT response, annotator FROM claims"))


def _answer(row) -> Answer:
    return Answer(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), bool(row[6]))


__all__ = ["Answer", "Store", "StoreBusy"]
