"""A cache row as the verdict cache stores it."""

from murgat_local.pipeline.cache import CachedVerdict, make_key


def row(i):
    return (
        make_key({"i": i}),
        "entail",
        "judge-x",
        CachedVerdict("ok", '{"label":"YES"}', '{"label":"YES"}', None, 10, 3),
    )
