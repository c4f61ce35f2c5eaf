"""Question sets as they are downloaded: the format is told from what the path holds.

`open_dataset(PATH, format=None)` gives a `Dataset`: its format, the benchmark's name (written
into every response row, and a column of the paper's table), the folder its videos are found
under (so `--media-root` is not needed for a benchmark folder), and its questions as
`DatasetItem`s or per-row `InputError`s. Formats:

- `worldsense`: `worldsense_qa.json` (the file, or a folder holding it; videos under `videos/`);
- `worldsense-table`: the flattened TSV or parquet table other harnesses write;
- `videommmu`: the folder with `Perception/`, `Comprehension/`, `Adaptation/` parquet shards
  (or one of those folders), videos under discipline folders;
- `saved`: a `datasets` `save_to_disk` folder (the MURGAT reference's samples);
- `jsonl`, `json`, `parquet`, `arrow`: generic question files (fields in `read_dataset`).

A path that matches none is a `DatasetFormatError` naming the formats looked for and what the
path holds.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..dataset_files import _arrow_batches, _parquet_batches, _records, _rows
from ..datasets import DatasetRead, item_maker
from ..jsontext import Unparsed
from ..limits import DEFAULT_LIMITS, InputLimits
from ..responses import iter_records, read_items, text_size
from . import videommmu, worldsense

FORMATS = (
    "worldsense",
    "worldsense-table",
    "videommmu",
    "saved",
    "jsonl",
    "json",
    "parquet",
    "arrow",
)
_IGNORED = ("__MACOSX",)


class DatasetFormatError(ValueError):
    """The path is no question set this reader knows (or not the one `--format` names)."""


@dataclass(frozen=True)
class Dataset:
    path: pathlib.Path
    format: str
    name: str  # the benchmark, as rows and tables name it
    media_root: pathlib.Path | None  # where its videos are; None: the caller must say
    # The records, given how large a value may be (Arrow rows are checked before they are built).
    _records: Callable[[InputLimits], Iterator]
    # The JSON or TSV file the rows are parsed from; None: Arrow data.
    text_file: pathlib.Path | None = None

    def items(
        self, limit: int | None = None, limits: InputLimits = DEFAULT_LIMITS
    ) -> Iterator[DatasetRead]:
        """Every question in input order, valid or not; a row holding a value over `limits` (an
        image too large to decode included) is that row's error."""
        text_bytes = 0 if self.text_file is None else text_size(self.text_file)
        return read_items(self._records(limits), limit, item_maker(limits), limits, text_bytes)


def open_dataset(path: str | pathlib.Path, format: str | None = None) -> Dataset:
    """The dataset at `path`, its format detected unless `format` names it."""
    path = pathlib.Path(path)
    if format is not None and format not in FORMATS:
        raise DatasetFormatError(f"unknown dataset format {format!r}; known: {', '.join(FORMATS)}")
    if not path.exists():
        raise DatasetFormatError(f"{path} does not exist")
    found = format or detect(path)
    return _OPENERS[found](path)


def detect(path: pathlib.Path) -> str:
    if path.is_dir():
        if (path / worldsense.QA_FILE).is_file():
            return "worldsense"
        if videommmu.tracks_in(path) or (
            path.name in videommmu.TRACKS and videommmu.shards(path.parent, path.name)
        ):
            return "videommmu"
        if (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
            return "saved"
        tables = [p for p in _listing(path) if p.suffix.lower() in (".tsv", ".parquet")]
        if len(tables) == 1 and _table_columns(tables[0]) >= worldsense.TABLE_COLUMNS:
            return "worldsense-table"
        raise DatasetFormatError(
            f"{path} matches no dataset format. Looked for: {worldsense.QA_FILE} (worldsense), "
            f"{'/, '.join(videommmu.TRACKS)}/ holding parquet shards (videommmu), state.json (saved), "
            f"one TSV or parquet table with columns {', '.join(sorted(worldsense.TABLE_COLUMNS))} "
            f"(worldsense-table). Found: {_describe(path)}"
        )
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        return "worldsense-table"
    if suffix == ".parquet":
        return "worldsense-table" if _table_columns(path) >= worldsense.TABLE_COLUMNS else "parquet"
    if suffix == ".arrow":
        return "arrow"
    if suffix == ".json" and worldsense.looks_official(path):
        return "worldsense"
    return "json" if suffix == ".json" else "jsonl"


def _listing(folder: pathlib.Path) -> list[pathlib.Path]:
    return sorted(
        p for p in folder.iterdir() if p.name not in _IGNORED and not p.name.startswith("._")
    )


def _describe(folder: pathlib.Path) -> str:
    names = [p.name + ("/" if p.is_dir() else "") for p in _listing(folder)]
    if not names:
        return "nothing (an empty folder)"
    return ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")


def _table_columns(path: pathlib.Path) -> set[str]:
    try:
        if path.suffix.lower() == ".tsv":
            with path.open(encoding="utf-8-sig") as f:
                return set(f.readline().rstrip("\r\n").split("\t"))
        import pyarrow.parquet as pq

        return set(pq.read_schema(path).names)
    except Exception:  # an unreadable table is reported when it is read
        return set()


# ---------------------------------------------------------------- openers


def _worldsense(path: pathlib.Path) -> Dataset:
    qa = path / worldsense.QA_FILE if path.is_dir() else path
    root = qa.parent
    return Dataset(
        path, "worldsense", "worldsense", root, lambda limits: worldsense.read_official(qa), qa
    )


def _worldsense_table(path: pathlib.Path) -> Dataset:
    if path.is_dir():
        tables = [p for p in _listing(path) if p.suffix.lower() in (".tsv", ".parquet")]
        if len(tables) != 1:
            raise DatasetFormatError(
                f"{path} should hold one TSV or parquet table, found {len(tables)}"
            )
        path_table, root = tables[0], path
    else:
        path_table, root = path, path.parent

    def rows(limits: InputLimits) -> Iterator:
        if path_table.suffix.lower() == ".tsv":
            source = worldsense.tsv_rows(path_table)
        else:
            source = _rows(path_table, _parquet_batches(path_table), limits=limits)
        return worldsense.read_table(path_table, source)

    return Dataset(
        path,
        "worldsense-table",
        "worldsense",
        root,
        rows,
        path_table if path_table.suffix.lower() == ".tsv" else None,
    )


def _videommmu(path: pathlib.Path) -> Dataset:
    if path.name in videommmu.TRACKS and not videommmu.tracks_in(path):
        root, tracks = path.parent, [path.name]
    else:
        root, tracks = path, videommmu.tracks_in(path)
    if not tracks:
        raise DatasetFormatError(
            f"{path} holds none of {', '.join(videommmu.TRACKS)} with parquet shards"
        )

    def records(limits: InputLimits) -> Iterator:
        return videommmu.read(
            root, tracks, lambda shard, start: _rows(shard, _parquet_batches(shard), start, limits)
        )

    return Dataset(path, "videommmu", "videommmu", root, records)


def _generic(kind: str) -> Callable[[pathlib.Path], Dataset]:
    def opener(path: pathlib.Path) -> Dataset:
        if kind == "json" and worldsense.looks_official(path):
            message = (
                f"{path.name} is one JSON object of videos, not a list of questions: "
                "it reads as --format worldsense"
            )
            records: Callable[[InputLimits], Iterator[tuple[int, str, object]]]
            records = lambda limits: iter([(0, str(path), Unparsed(message))])  # noqa: E731
        elif kind in ("jsonl", "json"):
            records = lambda limits: iter_records(path)  # noqa: E731
        elif kind == "arrow":
            records = lambda limits: _rows(path, _arrow_batches(path), limits=limits)  # noqa: E731
        else:
            records = lambda limits: _records(path, limits)  # noqa: E731
        name = path.name if path.is_dir() else path.stem
        text = path.is_file() and path.suffix.lower() not in (".parquet", ".arrow")
        return Dataset(path, kind, name, None, records, path if text else None)

    return opener


_OPENERS: dict[str, Callable[[pathlib.Path], Dataset]] = {
    "worldsense": _worldsense,
    "worldsense-table": _worldsense_table,
    "videommmu": _videommmu,
    **{k: _generic(k) for k in ("saved", "jsonl", "json", "parquet", "arrow")},
}
