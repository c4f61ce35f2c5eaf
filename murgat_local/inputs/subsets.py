"""Subsets drawn the same way every time: `--sample N --seed S [--stratify FIELD]`.

Each row is ranked by a hash of the seed and its id (its position when it has none), so the
draw depends on neither the file's order nor the machine, and a larger sample of the same seed
contains the smaller one. With a field to stratify by, each value gets its share of N by
largest remainders (ties by value), then its lowest-ranked rows. Rows that could not be read
are drawn like the others: a chosen one shows up as that row's error, nothing is hidden.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from .datasets import DatasetItem, DatasetRead

NONE = "(none)"


@dataclass(frozen=True)
class Subset:
    indices: frozenset[int]
    size: int
    population: int
    seed: int
    stratify: str | None
    strata: dict[str, tuple[int, int]]  # value -> (chosen, available)

    def provenance(self) -> dict:
        return {
            "sample": self.size,
            "seed": self.seed,
            "stratify": self.stratify,
            "population": self.population,
            "strata": {
                k: {"chosen": c, "available": a} for k, (c, a) in sorted(self.strata.items())
            },
        }


def _rank(seed: int, key: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00{key}".encode("utf-8", "surrogatepass")).digest()


def stratum(item: object, field: str | None) -> str:
    if field is None:
        return ""
    if not isinstance(item, DatasetItem):
        return NONE
    value = item.categories.get(field, item.row.get(field))
    if isinstance(value, list):
        return "+".join(str(v) for v in value) or NONE
    return NONE if value in (None, "") else str(value)


def choose(
    items: Iterable[DatasetRead], n: int, seed: int = 0, stratify: str | None = None
) -> Subset:
    """The indices of `n` rows of `items` (all of them when there are fewer)."""
    groups: dict[str, list[tuple[bytes, int]]] = {}
    population = 0
    for item in items:
        population += 1
        index = item.index
        key = item.id or f"#{index}"
        groups.setdefault(stratum(item, stratify), []).append((_rank(seed, key), index))
    n = min(n, population)
    quotas = _shares(n, {k: len(v) for k, v in groups.items()})
    chosen: set[int] = set()
    for value, members in groups.items():
        members.sort()
        chosen.update(index for _, index in members[: quotas[value]])
    strata = {k: (quotas[k], len(v)) for k, v in groups.items()} if stratify else {}
    return Subset(frozenset(chosen), n, population, seed, stratify, strata)


def _shares(n: int, sizes: dict[str, int]) -> dict[str, int]:
    """`n` split in proportion to `sizes`, by largest remainders, never more than a group holds."""
    total = sum(sizes.values())
    if total == 0:
        return dict.fromkeys(sizes, 0)
    exact = {k: n * size / total for k, size in sizes.items()}
    quotas = {k: min(int(v), sizes[k]) for k, v in exact.items()}
    left = n - sum(quotas.values())
    order = sorted(sizes, key=lambda k: (-(exact[k] - int(exact[k])), k))
    while left > 0:
        progressed = False
        for k in order:
            if left and quotas[k] < sizes[k]:
                quotas[k] += 1
                left -= 1
                progressed = True
        if not progressed:
            break
    return quotas
