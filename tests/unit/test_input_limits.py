"""One bad row is that row's error, never a stopped read: JSON nested 100,000 deep, a number
with 5,000 digits, a few kilobytes of parquet that expand to tens of megabytes of text, an image
whose header promises more pixels than `[inputs] max_image_pixels`. Every reader (JSONL, JSON
list, WorldSense JSON, the TSV table's cells, parquet) goes on to the next row, and so do
`murgat score`, `murgat segment`, `murgat dataset` and `murgat annotate`'s reader."""

from __future__ import annotations

import io
import json
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.deep_json import DEEP, TOO_DEEP, _worldsense
from support.fakes import OracleEngine
from typer.testing import CliRunner

from murgat_local.annotate.source import load_source
from murgat_local.cli import app
from murgat_local.config import RunConfig, load_config, load_generate_config
from murgat_local.generate.images import image_parts
from murgat_local.inputs import InputError
from murgat_local.inputs.benchmarks import open_dataset
from murgat_local.inputs.datasets import DatasetImage, item_maker, read_dataset
from murgat_local.inputs.limits import InputLimits, batch_oversize
from murgat_local.inputs.responses import ResponseItem, read_items, read_responses
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.shared_config import InputConfig

HUGE = "9" * 5_000
GOOD = "The screen is red (visual, 0:00). Therefore A.\nAnswer: A"


def _hostile_jsonl(path, video="v"):
    lines = [
        '{"id": ' + HUGE + f', "video": "{video}", "model_generation": "x"}}',
        f'{{"id": "deep", "video": "{video}", "model_generation": "x", "options": {DEEP}}}',
        '{"id": "deep-dict", "x": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}",
        f'{{"id": "big-number", "video": "{video}", "model_generation": "x", "answer": {HUGE}}}',
        json.dumps({"id": "ok", "video": video, "model_generation": GOOD}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


DIGITS = (
    "a number with 5,000 digits (Python reads at most 4,300 from text; write a long id as a string)"
)


def test_jsonl_lines_too_deep_or_with_too_many_digits_are_their_lines_errors(tmp_path):
    items = list(read_responses(_hostile_jsonl(tmp_path / "r.jsonl")))
    assert [type(i).__name__ for i in items] == ["InputError"] * 4 + ["ResponseItem"]
    assert [(i.source, i.reason) for i in items[:4]] == [
        ("line 1", f"unreadable JSON on line 1: {DIGITS}"),
        ("line 2", f"unreadable JSON on line 2: {TOO_DEEP}"),
        ("line 3", f"unreadable JSON on line 3: {TOO_DEEP}"),
        ("line 4", f"unreadable JSON on line 4: {DIGITS}"),
    ]
    assert items[4].id == "ok" and items[4].source == "line 5"


def test_nesting_within_the_limit_is_read(tmp_path):
    p = tmp_path / "r.jsonl"
    nested = "[" * 99 + '"x"' + "]" * 99
    p.write_text(f'{{"id": "a", "video": "v", "model_generation": "y", "extra": {nested}}}\n')
    (item,) = read_responses(p)
    assert isinstance(item, ResponseItem)


def test_a_json_list_reads_on_past_an_entry_too_deep_or_too_long_a_number(tmp_path):
    p = tmp_path / "r.json"
    good = json.dumps({"id": "ok", "video": "v", "model_generation": "x"})
    p.write_text(f'[{DEEP},\n {{"id": {HUGE}}},\n {good}]', encoding="utf-8")
    items = list(read_responses(p))
    assert [(i.source, i.reason) for i in items[:2]] == [("item 0", TOO_DEEP), ("item 1", DIGITS)]
    assert isinstance(items[2], ResponseItem) and items[2].source == "item 2"
    # A list whose brackets never close is one error, as a list that does not parse has always been.
    p.write_text(f"[{good}, " + "[" * 100_000, encoding="utf-8")
    (only,) = read_responses(p)
    assert isinstance(only, InputError) and only.reason.startswith("the JSON list does not parse")


@pytest.mark.parametrize(
    "extra, reason",
    [
        (f'{{"task0": {DEEP}}}', f"video 'bad': {TOO_DEEP}"),
        (f'{{"video_duration": {HUGE}, "task0": {{}}}}', f"video 'bad': {DIGITS}"),
    ],
)
def test_worldsense_reads_the_other_videos_past_one_that_cannot_be_built(tmp_path, extra, reason):
    _worldsense(tmp_path / "ws", extra)
    bad, ok = open_dataset(tmp_path / "ws").items()
    assert isinstance(bad, InputError) and (bad.id, bad.reason) == ("bad", reason)
    assert ok.id == "ok/task0" and ok.options == ("red", "green")


def test_a_worldsense_file_nested_too_deep_as_a_whole_is_one_clear_error(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "worldsense_qa.json").write_text(
        '{"v": {"task0": ' + "[" * 100_000, encoding="utf-8"
    )
    (only,) = open_dataset(tmp_path / "ws").items()
    assert only.reason.startswith(
        "worldsense_qa.json is not readable JSON (does not parse past line 1"
    )


def test_a_tsv_candidates_cell_nested_too_deep_is_that_rows_error(tmp_path):
    header = "index\tvideo\tquestion\tcandidates\tanswer\n"
    rows = [
        f"0\tv0\tWhich?\t{DEEP}\tA",
        "1\tv1\tWhich?\t['A. red', 'B. green']\tA",
        f"2\tv2\tWhich?\t[{HUGE}]\tA",
    ]
    (tmp_path / "t.tsv").write_text(header + "\n".join(rows) + "\n", encoding="utf-8")
    deep, ok, digits = open_dataset(tmp_path / "t.tsv").items()
    assert (deep.id, deep.reason) == ("0", "field 'candidates' is not a list")
    assert ok.options == ("red", "green")
    assert (digits.id, digits.reason) == ("2", "field 'candidates' is not a list")


def test_parquet_text_over_the_limit_is_found_before_it_is_built(tmp_path):
    question = "x" * 30_000_000  # 30 MB of text, a few kB of parquet
    table = pa.table(
        {
            "id": ["big", "ok"],
            "video": ["v", "v"],
            "question": [question, "Which?"],
            "options": [["red", "green"], ["red", "green"]],
        }
    )
    pq.write_table(table, tmp_path / "q.parquet", compression="zstd")
    del question, table
    assert (tmp_path / "q.parquet").stat().st_size < 100_000
    tracemalloc.start()
    try:
        big, ok = read_dataset(tmp_path / "q.parquet")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(big, InputError) and big.id == "big"
    assert big.reason == (
        "field 'question' has 30,000,000 characters, over the limit of 10,000,000 "
        "(inputs.max_text_chars)"
    )
    assert ok.question == "Which?"
    assert peak < 5_000_000  # no Python string of the question was ever made


def test_arrow_sizes_are_read_through_lists_structs_maps_and_dictionaries():
    limits = InputLimits(max_text_chars=5, max_binary_bytes=4)
    batch = pa.record_batch(
        {
            "s": pa.array(["ab", None, "abcdefg", "x"]),
            "l": pa.array([["a"], None, [], ["a", "abcdefgh"]]),
            "st": pa.array([{"k": "abcdefghi"}, None, {"k": "a"}, {"k": None}]),
            "d": pa.array(["a", "zzzzzzzz", "a", None]).dictionary_encode(),
            "m": pa.array(
                [None, None, None, [("k", "vvvvvvvvvv")]], pa.map_(pa.string(), pa.string())
            ),
            "b": pa.array([b"", b"12345", None, b""]),
        }
    )
    over = batch_oversize(batch, limits)
    assert sorted(over) == [0, 1, 2, 3]
    assert over[0].startswith("field 'st' has 9 characters") and over[2].startswith(
        "field 's' has 7"
    )
    assert over[1].startswith("field 'd' has 8 characters") and over[3].startswith(
        "field 'l' has 8"
    )
    assert batch_oversize(batch.select(["m", "b"]), limits) == {
        1: "field 'b' has 5 bytes, over the limit of 4 (inputs.max_binary_mb)",
        3: "field 'm' has 10 characters, over the limit of 5 (inputs.max_text_chars)",
    }
    assert batch_oversize(batch.slice(2), limits) == {0: over[2], 1: over[3]}


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("1", (width, height)).save(buf, format="PNG")  # one bit a pixel: small to make
    return buf.getvalue()


def test_an_image_over_max_image_pixels_is_its_rows_error_and_never_decoded():
    bomb = _png(12_000, 12_000)  # 432 MB as RGB pixels
    assert len(bomb) < 200_000
    rows = [
        {
            "id": "big",
            "video": "v",
            "question": "In <image 1>?",
            "_images": (DatasetImage("bomb.png", bomb),),
        },
        {"id": "ok", "video": "v", "question": "Which?"},
    ]
    big, ok = read_items(
        iter((i, f"row {i}", r) for i, r in enumerate(rows)), None, item_maker(InputLimits())
    )
    assert isinstance(big, InputError) and big.id == "big"
    assert big.reason == (
        "image 1 (bomb.png) is 12,000 x 12,000 = 144,000,000 pixels, over the limit of "
        "25,000,000 (inputs.max_image_pixels)"
    )
    assert ok.question == "Which?"
    # Where an image is decoded to be sent, the header is read first: the call's error, no pixels.
    with pytest.raises(
        ValueError, match=r"over the limit of 25,000,000 \(inputs.max_image_pixels\)"
    ):
        image_parts([DatasetImage("bomb.png", bomb)])
    (small,) = image_parts([DatasetImage("small.png", _png(8, 4))])
    assert small.pixels.shape == (4, 8, 3)


def test_a_videommmu_image_over_the_limit_is_that_questions_error(tmp_path):
    folder = tmp_path / "vm" / "Adaptation"
    folder.mkdir(parents=True)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table(
        {
            "id": ["validation_Physics_1", "validation_Physics_2"],
            "question": ["In <image 1>?", "In <image 1>?"],
            "options": [["a", "b"], ["a", "b"]],
            "answer": ["A", "B"],
            "question_type": ["multiple-choice"] * 2,
            "image": pa.array(
                [
                    {"bytes": _png(12_000, 12_000), "path": "p1.png"},
                    {"bytes": _png(8, 8), "path": "p2.png"},
                ],
                image,
            ),
        }
    )
    pq.write_table(table, folder / "test-00000-of-00001.parquet")
    big, ok = open_dataset(tmp_path / "vm").items()
    assert big.id == "Adaptation/validation_Physics_1" and "inputs.max_image_pixels" in big.reason
    assert ok.id == "Adaptation/validation_Physics_2" and ok.images[0].name == "p2.png"
    # The limit is the configuration's: raised, the same image is read.
    limits = InputConfig(max_image_pixels=200_000_000).limits()
    assert [type(i).__name__ for i in open_dataset(tmp_path / "vm").items(limits=limits)] == [
        "DatasetItem"
    ] * 2


def test_input_limits_are_typed_and_validated(tmp_path):
    assert InputConfig().limits() == InputLimits()
    toml = tmp_path / "run.toml"
    toml.write_text(
        '[inputs]\nmax_text_chars = 1000\nmax_image_pixels = 4000000\n[generate]\nmodels = ["m"]\n'
    )
    for loaded in (
        load_config(toml, {}),
        load_generate_config(toml, {}),
    ):  # [generate] inherits [inputs]
        assert loaded.inputs.limits() == InputLimits(1000, 64 * 2**20, 4_000_000)
    assert InputConfig(max_binary_mb=1).limits().max_binary_bytes == 2**20
    for bad in (
        {"max_text_chars": 0},
        {"max_image_pixels": -1},
        {"max_binary_mb": 0},
        {"max_chars": 5},
    ):
        with pytest.raises(ValueError):
            InputConfig(**bad)
    assert RunConfig(inputs={"max_text_chars": 50}).inputs.limits().max_text_chars == 50


# ---------------------------------------------------------------- the commands go on


def test_score_writes_an_error_record_for_each_hostile_line_and_scores_the_rest(
    tmp_path, media_root
):
    f = _hostile_jsonl(tmp_path / "r.jsonl", video="colors")
    with f.open("a", encoding="utf-8") as out:  # a response longer than this run allows
        out.write(
            json.dumps({"id": "long", "video": "colors", "model_generation": GOOD + " x" * 40})
            + "\n"
        )
    config = RunConfig(judge="oracle", decontextualize=False, inputs={"max_text_chars": 100})
    runner = Runner(
        config, media_root, tmp_path / "out", engines={"oracle": OracleEngine()}, summary=RunSummary
    )
    try:
        result = runner.run(f)
    finally:
        runner.close()
    records = [
        json.loads(line) for line in result.records_path.read_text(encoding="utf-8").splitlines()
    ]
    assert [(r["status"], r["source"]) for r in records] == [
        ("error", "line 1"),
        ("error", "line 2"),
        ("error", "line 3"),
        ("error", "line 4"),
        ("ok", "line 5"),
        ("error", "line 6"),
    ]
    assert records[0]["error"] == f"unreadable JSON on line 1: {DIGITS}"
    assert records[1]["error"] == f"unreadable JSON on line 2: {TOO_DEEP}"
    assert records[4]["id"] == "ok"
    assert records[5]["id"] == "long" and records[5]["error"] == (
        f"field 'model_generation' has {len(GOOD) + 80} characters, over the limit of 100 (inputs.max_text_chars)"
    )


def test_segment_and_the_annotation_reader_go_on_past_hostile_lines(tmp_path, media_root):
    f = _hostile_jsonl(tmp_path / "r.jsonl", video="colors")
    r = CliRunner().invoke(app, ["segment", str(f)])
    assert r.exit_code == 0, r.exception
    lines = [json.loads(line) for line in r.stdout_bytes.decode("utf-8").splitlines()]
    assert [line.get("error", "") for line in lines[:4]] == [
        f"unreadable JSON on line 1: {DIGITS}",
        f"unreadable JSON on line 2: {TOO_DEEP}",
        f"unreadable JSON on line 3: {TOO_DEEP}",
        f"unreadable JSON on line 4: {DIGITS}",
    ]
    assert lines[4]["id"] == "ok" and lines[4]["sentences"]
    source = load_source(f, media_root)
    assert [u.source for u in source.unusable] == ["line 1", "line 2", "line 3", "line 4"]
    assert [i.id for i in source.items] == ["ok"]


def test_a_pngs_size_is_read_from_its_header_as_pil_reads_it():
    from PIL import Image

    from murgat_local.inputs.limits import image_size

    for size in ((1, 1), (640, 360), (12000, 3)):
        buf = io.BytesIO()
        Image.new("L", size).save(buf, format="PNG")
        assert image_size(buf.getvalue()) == size == Image.open(io.BytesIO(buf.getvalue())).size
    broken = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16  # the signature, no IHDR: PIL says why
    assert isinstance(image_size(broken), str) and "not a readable image" in image_size(broken)


def test_a_text_file_longer_than_the_limit_still_has_each_value_checked(tmp_path):
    """Values parsed from text are never longer than the text: a file under the limit needs no
    walk over its values, and one over it gets one, row by row."""
    from murgat_local.inputs.responses import read_responses

    f = tmp_path / "r.jsonl"
    rows = [
        {"id": "a", "video": "v", "model_generation": "x" * 50},
        {"id": "b", "video": "v", "model_generation": "y" * 500},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    small = InputLimits(max_text_chars=100)
    got = list(read_responses(f, None, small))
    assert not isinstance(got[0], InputError)
    assert isinstance(got[1], InputError) and "500 characters" in got[1].reason
    assert not any(isinstance(r, InputError) for r in read_responses(f, None, InputLimits()))
