"""A safetensors file's header, read without its tensors: what `verify` checks a copy against
and what `fit` sizes the weights from."""

from __future__ import annotations

import json
import pathlib
import struct

# Bytes per element, for the dtypes whose tensors are whole bytes (others are not size-checked).
DTYPE_BYTES = {
    "F64": 8,
    "I64": 8,
    "U64": 8,
    "F32": 4,
    "I32": 4,
    "U32": 4,
    "F16": 2,
    "BF16": 2,
    "I16": 2,
    "U16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
}
# safetensors itself refuses a larger header.
_MAX_HEADER = 100_000_000


class Damaged(Exception):
    """A file that is not whole, with why."""


def safetensors_header(path: pathlib.Path) -> tuple[int, dict]:
    """(the header's length, the header) of a safetensors file, read without its tensors;
    `Damaged` with the reason when the header itself is not whole."""
    size = path.stat().st_size
    if size < 8:
        raise Damaged(f"truncated: {size} bytes, less than the 8-byte header length")
    with path.open("rb") as fh:
        length = struct.unpack("<Q", fh.read(8))[0]
        if length > _MAX_HEADER:
            raise Damaged(f"not a safetensors file: a {length}-byte header")
        if 8 + length > size:
            raise Damaged(f"truncated: {size} bytes, but its header alone is {8 + length}")
        raw = fh.read(length)
    try:
        header = json.loads(raw)
    except ValueError as e:
        raise Damaged(f"its header does not parse ({e})") from None
    if not isinstance(header, dict):
        raise Damaged("its header is not a JSON object")
    return length, header
