"""Content digests of files and folders, each file read once per (path, size, mtime).

A 60 GB checkpoint or a folder of videos is hashed in full the first time, then the digests are
remembered in a small SQLite file, so later runs (and later processes) read no byte again until
a file changes. Digests hash every byte: two files that differ anywhere never share one.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sqlite3
import threading

_DIGEST_SIZE = 16  # blake2b-128: fast, and ample against accidental collisions


def default_memo_path() -> pathlib.Path:
    return pathlib.Path.home() / ".cache" / "murgat-local" / "file-digests.sqlite"


class DigestMemo:
    """File digests keyed by (resolved path, size, mtime_ns, inode), in memory and on disk.

    The disk memo is a convenience: when its folder is not writable the memo lives in memory.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self._mem: dict[tuple, str] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self.reads = 0  # files actually read (memo misses), for tests and benchmarks
        if path is not None:
            try:
                p = pathlib.Path(path)
                p.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(p, timeout=30.0, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS digests (key TEXT PRIMARY KEY, digest TEXT NOT NULL)"
                )
                self._db = db
            except (OSError, sqlite3.Error):
                self._db = None

    @staticmethod
    def _key(path: pathlib.Path) -> tuple:
        real = path.resolve()
        st = real.stat()
        return (str(real), st.st_size, st.st_mtime_ns, st.st_ino)

    def file(self, path: str | os.PathLike) -> str:
        """The blake2b digest of every byte of `path`."""
        path = pathlib.Path(path)
        key = self._key(path)
        with self._lock:
            hit = self._mem.get(key)
            if hit is None and self._db is not None:
                row = self._db.execute(
                    "SELECT digest FROM digests WHERE key=?", (json.dumps(key),)
                ).fetchone()
                hit = row[0] if row else None
            if hit is not None:
                self._mem[key] = hit
                return hit
        h = hashlib.blake2b(digest_size=_DIGEST_SIZE)
        with open(key[0], "rb") as fh:
            while block := fh.read(1 << 22):
                h.update(block)
        digest = h.hexdigest()
        with self._lock:
            self.reads += 1
            self._mem[key] = digest
            if self._db is not None:
                try:
                    with self._db:
                        self._db.execute(
                            "INSERT OR REPLACE INTO digests VALUES (?, ?)",
                            (json.dumps(key), digest),
                        )
                except sqlite3.Error:
                    pass  # a read-only memo only costs a re-hash next time
        return digest

    def folder(self, root: str | os.PathLike, *, skip=lambda rel: False) -> str:
        """One digest over every file under `root` (recursively, following links): each file's
        relative path and full-content digest, in sorted order."""
        root = pathlib.Path(root)
        entries = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            dirnames[:] = sorted(
                d for d in dirnames if not d.startswith(".") and d != "__pycache__"
            )
            for name in sorted(filenames):
                full = pathlib.Path(dirpath) / name
                rel = full.relative_to(root).as_posix()
                if name.startswith(".") or skip(rel) or not full.is_file():
                    continue
                entries.append(f"{rel}\0{self.file(full)}")
        h = hashlib.blake2b(digest_size=_DIGEST_SIZE)
        h.update("\n".join(sorted(entries)).encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


_SHARED: DigestMemo | None = None
_SHARED_LOCK = threading.Lock()


def shared_memo() -> DigestMemo:
    """The process-wide memo, backed by `default_memo_path()`."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = DigestMemo(default_memo_path())
        return _SHARED
