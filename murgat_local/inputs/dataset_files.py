"""Reading a dataset's files: the records of a saved `datasets` folder, Parquet, Arrow or JSON.

Formats, told apart by the path: a folder written by HuggingFace `datasets`
(`Dataset.save_to_disk`), a `.parquet` file, an `.arrow` file, and otherwise JSONL or a JSON
list. The folder's shards are Arrow IPC streams read with pyarrow, so `datasets` itself is not
needed. Apart from `datasets.py`, which makes questions of the records, because how a file is
laid out and what a row means change for different reasons; the benchmark readers use these
readers on their own downloads too.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .jsontext import Unparsed, parse
from .limits import DEFAULT_LIMITS, InputLimits, batch_oversize
from .responses import iter_records

_BATCH_ROWS = 1024


@dataclass(frozen=True)
class Invalid:
    """A row a format reader could not make into a question; its id when one is known."""

    id: str | None
    reason: str


def _records(
    path: pathlib.Path, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[tuple[int, str, object]]:
    if path.is_dir():
        yield from _saved_dataset(path, limits)
    elif not path.is_file():
        yield 0, str(path), Unparsed(f"{path} does not exist")
    elif path.suffix.lower() == ".parquet":
        yield from _rows(path, _parquet_batches(path), limits=limits)
    elif path.suffix.lower() == ".arrow":
        yield from _rows(path, _arrow_batches(path), limits=limits)
    else:
        yield from iter_records(path)


def _json_file(path: pathlib.Path) -> object:
    """The JSON value of a small file beside the data (state.json), or `Unparsed` with why not."""
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        return Unparsed(f"{type(e).__name__}: {e}")


def _saved_dataset(
    folder: pathlib.Path, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[tuple[int, str, object]]:
    state = folder / "state.json"
    if not state.is_file():
        splits = folder / "dataset_dict.json"
        if splits.is_file():
            listed: Any = _json_file(splits)  # JSON: its shape is checked as it is read
            names = listed.get("splits") if isinstance(listed, dict) else None
            names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
            yield (
                0,
                str(folder),
                Unparsed(
                    f"{folder} holds several splits ({', '.join(names) or 'unreadable dataset_dict.json'}); "
                    f"give one split's folder, e.g. {folder / (names[0] if names else 'test')}"
                ),
            )
        else:
            yield (
                0,
                str(folder),
                Unparsed(f"{folder} is not a folder written by save_to_disk (no state.json)"),
            )
        return
    listed = _json_file(state)
    if isinstance(listed, Unparsed):
        yield 0, str(state), Unparsed(f"{state} does not list the data files ({listed.reason})")
        return
    try:
        names = [f["filename"] for f in listed["_data_files"]]
        files = [folder / _data_file_name(n) for n in names]
    except (ValueError, KeyError, TypeError) as e:
        yield (
            0,
            str(state),
            Unparsed(f"{state} does not list the data files ({type(e).__name__}: {e})"),
        )
        return
    # state.json is part of the input, not trusted: its names may not lead out of the folder.
    inside = folder.resolve()
    for name, file in zip(names, files):
        if (
            pathlib.PurePath(name).is_absolute()
            or ".." in pathlib.PurePath(name).parts
            or inside not in file.resolve().parents
        ):
            yield 0, str(state), Unparsed(f"{state} names a data file outside its folder: {name!r}")
            return
    start = 0
    for file in files:
        for index, source, obj in _rows(file, _arrow_batches(file), start, limits):
            yield index, source, obj
            start = index + 1
            if isinstance(obj, Unparsed):
                return


def _data_file_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"a data file name must be a non-empty string, not {name!r}")
    return name


def _rows(
    path: pathlib.Path, batches: Iterator, start: int = 0, limits: InputLimits = DEFAULT_LIMITS
) -> Iterator[tuple[int, str, object]]:
    """Rows numbered from `start`; an unreadable file ends with one `Unparsed` and no more rows:
    where its rows would have been is unknown, so later ones could not keep their numbers. A row
    holding a value over `limits` is an `Invalid`, found from Arrow's lengths before the batch
    becomes Python objects, and never built."""
    import pyarrow as pa

    index = start
    try:
        for batch in batches:
            over = batch_oversize(batch, limits)
            if not over:
                rows = iter(batch.to_pylist())
            else:
                keep = pa.array([i not in over for i in range(batch.num_rows)])
                rows = iter(batch.filter(keep).to_pylist())
            for i in range(batch.num_rows):
                row = Invalid(_arrow_id(batch, i), over[i]) if i in over else next(rows)
                yield index, f"row {index}", row
                index += 1
    except (OSError, pa.ArrowException) as e:
        yield index, f"row {index}", Unparsed(f"{path.name} cannot be read past row {index}: {e}")


def _arrow_id(batch, row: int) -> str | None:
    """The `id` of an Arrow row when it is a short string or an integer; None otherwise."""
    import pyarrow as pa

    if "id" not in batch.schema.names:
        return None
    column = batch.column("id")
    if not (
        pa.types.is_string(column.type)
        or pa.types.is_large_string(column.type)
        or pa.types.is_integer(column.type)
    ):
        return None
    value = column[row]
    if pa.types.is_integer(column.type):
        return None if not value.is_valid else str(value.as_py())
    import pyarrow.compute as pc

    if not value.is_valid or pc.utf8_length(column.slice(row, 1))[0].as_py() > 200:
        return None
    return value.as_py().strip() or None


def _parquet_batches(path: pathlib.Path) -> Iterator:
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as pf:
        yield from pf.iter_batches(batch_size=_BATCH_ROWS)


def _arrow_batches(path: pathlib.Path) -> Iterator:
    """Record batches of an Arrow IPC stream (what `datasets` writes) or, failing that, IPC file."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing")
    with pa.memory_map(str(path)) as source:
        try:
            reader = ipc.open_stream(source)
        except pa.ArrowInvalid:
            source.seek(0)
            file_reader = ipc.open_file(source)
            for i in range(file_reader.num_record_batches):
                yield file_reader.get_batch(i)
            return
        yield from reader
