"""Hypothesis strategies for JSON objects a JSON Schema accepts (the schemas `murgat schema`
prints): the subset of the vocabulary pydantic writes (`$ref`/`$defs`, `anyOf`, `enum`, `const`,
types with their bounds, `pattern`, `patternProperties`, `additionalProperties`, `minItems`/
`maxItems`). Optional properties are each present or absent; collections stay small and
definitions nest a few levels at most, so an example stays quick to run."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Any JSON value (a schema of `{}`): what a hand-made file may hold where the schema says nothing.
ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-2, 2, allow_nan=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)

# Text that reaches the parsers' corners: citations, brackets, markers, odd code points.
TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "ok",
            "error",
            "(visual, 0:01)",
            "(audio, 0:00-0:02) A tone.",
            "visual",
            "audio",
            "A",
            "multiple-choice",
            "open",
            "default",
            "reference",
            "YES",
            "\u202e\x00",
        ]
    ),
)


def from_schema(schema: dict, max_depth: int = 6) -> st.SearchStrategy:
    """Objects `schema` (a JSON Schema as pydantic writes it) accepts."""
    return _Builder(schema.get("$defs", {}), max_depth).build(schema, 0)


def part_of(schema: dict, name: str, max_depth: int = 4) -> st.SearchStrategy:
    """Objects the definition `name` of `schema` accepts (a sentence of a score record, ...)."""
    defs = schema.get("$defs", {})
    return _Builder(defs, max_depth).build(defs[name], 0)


class _Builder:
    def __init__(self, defs: dict, max_depth: int):
        self.defs = defs
        self.max_depth = max_depth

    def build(self, s: dict, depth: int) -> st.SearchStrategy:
        if "$ref" in s:
            name = s["$ref"].rsplit("/", 1)[-1]
            return self.build(self.defs[name], depth + 1)
        if "anyOf" in s:
            # a value more often than null: what lies beneath is where the readers can trip
            branches = [self.build(b, depth) for b in s["anyOf"] if b.get("type") != "null"]
            if len(branches) < len(s["anyOf"]):
                branches = branches * 3 + [st.none()]
            return st.one_of(branches)
        if "const" in s:
            return st.just(s["const"])
        if "enum" in s:
            return st.sampled_from(s["enum"])
        kind = s.get("type")
        if kind is None:
            return ANY_JSON
        return getattr(self, f"_{kind}")(s, depth)

    def _null(self, s: dict, depth: int) -> st.SearchStrategy:
        return st.none()

    def _boolean(self, s: dict, depth: int) -> st.SearchStrategy:
        return st.booleans()

    def _integer(self, s: dict, depth: int) -> st.SearchStrategy:
        low = s.get("minimum", s.get("exclusiveMinimum", -5))
        high = s.get("maximum", s.get("exclusiveMaximum", low + 1000))
        return st.integers(int(low), int(high))

    def _number(self, s: dict, depth: int) -> st.SearchStrategy:
        low = s.get("minimum", -1e6)
        high = s.get("maximum", 1e6)
        return st.floats(low, high, allow_nan=False, allow_infinity=False)

    def _string(self, s: dict, depth: int) -> st.SearchStrategy:
        if "pattern" in s:
            return st.from_regex(s["pattern"], fullmatch=True)
        return TEXT

    def _array(self, s: dict, depth: int) -> st.SearchStrategy:
        items = self.build(s.get("items", {}), depth)
        low = s.get("minItems", 0)
        high = min(s.get("maxItems", low + 2), low + 2)
        if depth >= self.max_depth:
            high = low
        return st.lists(items, min_size=low, max_size=high)

    def _object(self, s: dict, depth: int) -> st.SearchStrategy:
        props: dict[str, Any] = s.get("properties", {})
        extra = s.get("additionalProperties", True)
        if depth >= self.max_depth:  # every property of these schemas is optional
            return st.just({})
        each = {k: self.build(v, depth) for k, v in props.items()}
        if props or extra is False:
            # every property, or any of them
            return st.fixed_dictionaries(each) | st.fixed_dictionaries({}, optional=each)
        if "patternProperties" in s:
            ((pattern, spec),) = s["patternProperties"].items()
            keys = st.from_regex(pattern, fullmatch=True)
            return st.dictionaries(keys, self.build(spec, depth + 1), max_size=2)
        values = ANY_JSON if extra is True else self.build(extra, depth + 1)
        return st.dictionaries(TEXT, values, max_size=2)
