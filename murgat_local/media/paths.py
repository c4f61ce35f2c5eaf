"""Locating a video named by a response, without touching anything outside the allowed roots.

`Path.resolve()` would follow a symlink out of the media root and stat its target before the
escape could be noticed. Here a path is walked one component at a time from an allowed root
(itself resolved once, so a root that is a symlink works): a symlink's target is joined and
normalized *lexically*, checked against the allowed roots, and only then looked at. A path
that leaves them is refused with nothing outside opened or even stat'ed.
"""

from __future__ import annotations

import os
import pathlib
import stat

_MAX_LINKS = 40  # as the kernel's ELOOP limit


class PathRefused(Exception):
    """A path that leaves the allowed roots, loops, or is not a usable name."""


def _within(path: pathlib.PurePath, roots: tuple[pathlib.Path, ...]) -> pathlib.Path | None:
    for root in roots:
        if path == root or root in path.parents:
            return root
    return None


def resolve_within(
    root: pathlib.Path, name: str, allowed: tuple[pathlib.Path, ...] = ()
) -> pathlib.Path:
    """The real path of `name` (relative to `root`, or absolute), if it stays within `root` or
    one of `allowed` (all already resolved). Raises PathRefused, or FileNotFoundError when a
    component inside the roots is missing."""
    roots = (root, *allowed)
    if "\x00" in name:
        raise PathRefused("contains a NUL byte")
    start = pathlib.PurePath(os.path.normpath(os.path.join(root, name)))
    base = _within(start, roots)
    if base is None:
        raise PathRefused("it names a place outside it")
    current, pending = base, list(start.relative_to(base).parts)
    links = 0
    while pending:
        part = pending.pop(0)
        nxt = current / part
        st = os.lstat(nxt)  # inside the roots: checked above or below
        if not stat.S_ISLNK(st.st_mode):
            current = nxt
            continue
        links += 1
        if links > _MAX_LINKS:
            raise PathRefused("too many symbolic links")
        target = pathlib.PurePath(
            os.path.normpath(os.path.join(current, os.readlink(nxt), *pending))
        )
        base = _within(target, roots)
        if base is None:
            raise PathRefused(
                f"a symbolic link ({nxt.relative_to(root) if root in nxt.parents else nxt}) "
                f"leads out of the allowed roots"
            )
        current, pending = base, list(target.relative_to(base).parts)
    return current
