"""How large one value of an input may be, checked before it is decoded.

A few kilobytes of parquet can expand to a gigabyte of text, and a small PNG to hundreds of
megabytes of pixels. Each size is checked where it can be read without building the value:
Arrow's lengths before a batch becomes Python objects, an image's header before its pixels are
decoded. A value over a limit is its row's error (or, for an image being sent, its call's),
naming the value, its size and the configuration key that sets the limit (`[inputs]`, see
`shared_config.InputConfig`).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class InputLimits:
    max_text_chars: int = 10_000_000  # characters in one text value of a row
    max_binary_bytes: int = 64 * 2**20  # bytes in one binary value of a row (an image's file)
    max_image_pixels: int = 25_000_000  # width x height of an image, read from its header

    def text_over(self, what: str, chars: int) -> str:
        return (
            f"{what} has {chars:,} characters, over the limit of {self.max_text_chars:,} "
            "(inputs.max_text_chars)"
        )

    def binary_over(self, what: str, size: int) -> str:
        return (
            f"{what} has {size:,} bytes, over the limit of {self.max_binary_bytes:,} "
            "(inputs.max_binary_mb)"
        )


DEFAULT_LIMITS = InputLimits()


def oversize(row: object, limits: InputLimits) -> str | None:
    """Why a value of `row` (a parsed record: text, bytes, lists and objects) is over a limit,
    naming its top-level field; None when none is."""
    if not isinstance(row, dict):
        return None
    for name, value in row.items():
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                if len(node) > limits.max_text_chars:
                    return limits.text_over(f"field {name!r}", len(node))
            elif isinstance(node, (bytes, bytearray)):
                if len(node) > limits.max_binary_bytes:
                    return limits.binary_over(f"field {name!r}", len(node))
            elif isinstance(node, dict):
                stack.extend(node.values())
            elif isinstance(node, (list, tuple)):
                stack.extend(node)
    return None


_PNG = b"\x89PNG\r\n\x1a\n"


def image_size(data: bytes) -> tuple[int, int] | str:
    """(width, height) from an encoded image's header, nothing decoded; or why it cannot be read."""
    # A PNG's size is the first chunk's (IHDR) first 8 bytes: read here, as opening it with PIL
    # costs ~0.1 ms, the most of reading a benchmark row with an image.
    if data[:8] == _PNG and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        if width and height:
            return width, height
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as pic:
                return pic.size
    except Image.DecompressionBombError as e:
        return f"is too large to open ({e})"
    except Exception as e:  # not an image PIL knows, or a header that does not parse
        return f"is not a readable image ({type(e).__name__}: {e})"


def image_problem(what: str, data: bytes, limits: InputLimits) -> str | None:
    """Why the encoded image `data` cannot be decoded within the limits; None when it can."""
    if len(data) > limits.max_binary_bytes:
        return limits.binary_over(what, len(data))
    size = image_size(data)
    if isinstance(size, str):
        return f"{what} {size}"
    width, height = size
    if width * height > limits.max_image_pixels:
        return (
            f"{what} is {width:,} x {height:,} = {width * height:,} pixels, over the limit of "
            f"{limits.max_image_pixels:,} (inputs.max_image_pixels)"
        )
    return None


def batch_oversize(batch, limits: InputLimits) -> dict[int, str]:
    """{row: why} for the rows of an Arrow record batch holding a value over a limit, from
    Arrow's lengths alone: nothing of the batch is turned into Python objects."""
    import numpy as np

    found: dict[int, str] = {}
    for name, column in zip(batch.schema.names, batch.columns):
        chars, size = _sizes(column)
        for sizes, cap, over in (
            (chars, limits.max_text_chars, limits.text_over),
            (size, limits.max_binary_bytes, limits.binary_over),
        ):
            if sizes is None:
                continue
            for row in np.flatnonzero(sizes > cap):
                found.setdefault(int(row), over(f"field {name!r}", int(sizes[row])))
    return found


def _sizes(array):
    """(characters of the longest text, bytes of the largest binary value) in each row of an
    Arrow array, as numpy arrays (None when the type holds no such value)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t = array.type
    n = len(array)
    if pa.types.is_dictionary(t):
        chars, size = _sizes(array.dictionary)
        indices = array.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        valid = array.is_valid().to_numpy(zero_copy_only=False)

        def pick(s):
            return np.where(valid, s[indices], 0) if len(s) else np.zeros(n, np.int64)

        return (None if chars is None else pick(chars)), (None if size is None else pick(size))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _filled(pc.utf8_length(array)), None
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return None, _filled(pc.binary_length(array))
    valid = None
    if pa.types.is_struct(t):
        children = [(child, None) for child in array.flatten()]
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        # The values a slice's offsets point into; a null list's values (if any) count for nothing.
        offsets = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
        child = array.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        children = [(child, np.repeat(np.arange(n), np.diff(offsets)))]
        valid = array.is_valid().to_numpy(zero_copy_only=False)
    elif pa.types.is_fixed_size_list(t):
        children = [
            (
                array.flatten(),
                pc.list_parent_indices(array).to_numpy(zero_copy_only=False).astype(np.int64),
            )
        ]
    else:
        return None, None
    chars = size = None
    for child, parents in children:
        c, s = _sizes(child)
        for got, kind in ((c, "chars"), (s, "size")):
            if got is None:
                continue
            if parents is not None:
                per_row = np.zeros(n, np.int64)
                np.maximum.at(per_row, parents, got)
                if valid is not None:
                    per_row[~valid] = 0
                got = per_row
            if kind == "chars":
                chars = got if chars is None else np.maximum(chars, got)
            else:
                size = got if size is None else np.maximum(size, got)
    return chars, size


def _filled(lengths):
    import numpy as np

    return lengths.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
