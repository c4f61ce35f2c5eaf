"""Content-addressed verdict cache in SQLite.

A key is the hash of everything that determines a verdict: the stage, the judge's identity
(model path, weights fingerprint, decoding settings), the prompt template's hash, the system and
user text, and the cited media segments' identities. Writes are transactions in WAL mode, so a
run killed mid-write leaves the last committed state, and several readers can share the file.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    judge TEXT NOT NULL,
    status TEXT NOT NULL,          -- 'ok' or 'unparsed'
    verdict TEXT,                  -- the verdict as JSON (status ok)
    raw TEXT NOT NULL,             -- the model's raw text
    reason TEXT,                   -- why it did not parse
    prompt_tokens INTEGER,
    output_tokens INTEGER,
    created REAL NOT NULL,
    note TEXT,                     -- what the engine changed to fit the request (frames reduced)
    reached TEXT,                  -- prompt tokens per media modality that reached the model (JSON)
    reached_unknown TEXT,          -- why they could not be counted
    p_yes REAL,                    -- a yes/no verdict's probability of YES (engines.confidence)
    p_yes_unknown TEXT,            -- why it has none
    thought_cut INTEGER,           -- 1: a thinking judge's thought was cut at its budget
    cited TEXT                     -- per cited part, expected and arrived tokens, or why unknown (JSON)
);
CREATE INDEX IF NOT EXISTS verdicts_stage ON verdicts(stage);
"""


def make_key(material: dict) -> str:
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedVerdict:
    status: str
    verdict: str | None
    raw: str
    reason: str | None
    prompt_tokens: int
    output_tokens: int
    note: str | None = None
    reached: str | None = None  # JSON object: modality -> prompt tokens
    reached_unknown: str | None = None
    p_yes: float | None = None
    p_yes_unknown: str | None = None
    thought_cut: bool = False
    # JSON: {"parts": [[citation, modality, expected, arrived, alt], ...]} (`reach.CitedTokens`)
    # or {"unknown": why}; None on a row written before parts were counted, or without media.
    cited: str | None = None


class VerdictCache:
    """The cache file. A file that is not a healthy SQLite cache (truncated, overwritten,
    failing its integrity check) is never read: it is renamed aside (`set_aside` names where)
    and a fresh cache takes its place."""

    def __init__(self, path: str | pathlib.Path):
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self.set_aside: pathlib.Path | None = None
        try:
            self._open()
        except sqlite3.DatabaseError as e:
            self.close()
            self.set_aside = self._set_aside(str(e))
            self._open()

    def _open(self) -> None:
        with self._conn() as conn:
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {check}")
            conn.executescript(SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(verdicts)")}
            for column, kind in (
                ("note", "TEXT"),
                ("reached", "TEXT"),
                ("reached_unknown", "TEXT"),
                ("p_yes", "REAL"),
                ("p_yes_unknown", "TEXT"),
                ("thought_cut", "INTEGER"),
                ("cited", "TEXT"),
            ):  # a cache written before they existed
                if column not in columns:
                    conn.execute(f"ALTER TABLE verdicts ADD COLUMN {column} {kind}")

    def _set_aside(self, why: str) -> pathlib.Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            part = pathlib.Path(str(self.path) + suffix)
            if part.exists():
                part.rename(str(aside) + suffix)
        (aside.parent / f"{aside.name}.why").write_text(why + "\n", encoding="utf-8")
        return aside

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedVerdict]:
        found: dict[str, CachedVerdict] = {}
        conn = self._conn()
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            rows = conn.execute(
                "SELECT key, status, verdict, raw, reason, prompt_tokens, output_tokens, note, reached, "
                "reached_unknown, p_yes, p_yes_unknown, thought_cut, cited "
                f"FROM verdicts WHERE key IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
            for (
                k,
                status,
                verdict,
                raw,
                reason,
                prompt_tokens,
                output_tokens,
                note,
                reached,
                reached_unknown,
                p_yes,
                p_yes_unknown,
                thought_cut,
                cited,
            ) in rows:
                found[k] = CachedVerdict(
                    status,
                    verdict,
                    raw,
                    reason,
                    prompt_tokens,
                    output_tokens,
                    note,
                    reached,
                    reached_unknown,
                    p_yes,
                    p_yes_unknown,
                    bool(thought_cut),  # stored as 0/1
                    cited,
                )
        return found

    def put_many(self, rows: Iterable[tuple[str, str, str, CachedVerdict]]) -> int:
        """Insert (key, stage, judge, verdict) rows in one transaction."""
        now = time.time()
        data = [
            (
                k,
                stage,
                judge,
                v.status,
                v.verdict,
                v.raw,
                v.reason,
                v.prompt_tokens,
                v.output_tokens,
                now,
                v.note,
                v.reached,
                v.reached_unknown,
                v.p_yes,
                v.p_yes_unknown,
                int(v.thought_cut),
                v.cited,
            )
            for k, stage, judge, v in rows
        ]
        if not data:
            return 0
        conn = self._conn()
        with conn:  # one transaction: all rows or none
            conn.executemany(
                "INSERT OR REPLACE INTO verdicts (key, stage, judge, status, verdict, raw, reason, "
                "prompt_tokens, output_tokens, created, note, reached, reached_unknown, p_yes, "
                "p_yes_unknown, thought_cut, cited) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                data,
            )
        return len(data)

    def count(self, stage: str | None = None) -> int:
        conn = self._conn()
        if stage is None:
            return conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
        return conn.execute("SELECT COUNT(*) FROM verdicts WHERE stage=?", (stage,)).fetchone()[0]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
