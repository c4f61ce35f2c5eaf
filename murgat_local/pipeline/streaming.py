"""Streaming a run's items in chunks: memory holds one chunk at a time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of `size` (the last one shorter), read lazily."""
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
