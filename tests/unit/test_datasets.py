import json

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from murgat_local.inputs import DatasetItem, InputError, read_dataset, render_options

ROWS = [
    {
        "id": "q1",
        "video": "clip1",
        "question": "What colour is the ball?",
        "options": ["red", "blue", "green"],
        "answer": "B",
        "split": "test",
    },
    {
        "id": "q2",
        "video": "clip2",
        "question": "Who speaks first?",
        "options": ["the man", "the woman"],
        "answer": "A",
        "split": "test",
    },
    {
        "id": "q3",
        "video": "clip3",
        "question": "How many cups?",
        "options": ["1", "2", "3", "4"],
        "answer": "D",
        "split": "test",
    },
]


def _kinds(items):
    return [type(i).__name__ for i in items]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(params=["jsonl", "json_list", "parquet", "save_to_disk", "save_to_disk_shards"])
def written(request, tmp_path):
    kind = request.param
    if kind == "jsonl":
        return _write_jsonl(tmp_path / "d.jsonl", ROWS)
    if kind == "json_list":
        (tmp_path / "d.json").write_text(json.dumps(ROWS, indent=2))
        return tmp_path / "d.json"
    if kind == "parquet":
        pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "d.parquet")
        return tmp_path / "d.parquet"
    shards = 2 if kind == "save_to_disk_shards" else 1
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "saved"), num_shards=shards)
    return tmp_path / "saved"


def test_every_format_reads_the_same_items(written):
    items = list(read_dataset(written))
    assert _kinds(items) == ["DatasetItem"] * 3
    assert [i.id for i in items] == ["q1", "q2", "q3"]
    assert [i.index for i in items] == [0, 1, 2]
    first = items[0]
    assert (first.video, first.question, first.options, first.answer) == (
        "clip1",
        "What colour is the ball?",
        ("red", "blue", "green"),
        "B",
    )
    assert first.row == ROWS[0]  # the whole row, for the generator to write back
    assert [i.answer for i in items] == ["B", "A", "D"]


def test_limit_stops_reading(written):
    assert [i.id for i in read_dataset(written, limit=2)] == ["q1", "q2"]


def test_save_to_disk_after_select_and_with_a_struct_of_options(tmp_path):
    rows = [
        {"video": f"v{i}", "question": f"q{i}?", "options": {"A": "yes", "B": "no"}, "answer": 1}
        for i in range(5)
    ]
    datasets.Dataset.from_list(rows).select([3, 1]).save_to_disk(str(tmp_path / "sel"))
    items = list(read_dataset(tmp_path / "sel"))
    assert [i.video for i in items] == ["v3", "v1"]
    assert all(i.options == ("yes", "no") and i.answer == "B" and i.answer_raw == 1 for i in items)


def test_a_dataset_dict_folder_names_its_splits(tmp_path):
    ds = datasets.Dataset.from_list(ROWS)
    datasets.DatasetDict({"train": ds, "test": ds}).save_to_disk(str(tmp_path / "dd"))
    (err,) = read_dataset(tmp_path / "dd")
    assert isinstance(err, InputError) and "train, test" in err.reason
    assert [i.id for i in read_dataset(tmp_path / "dd" / "test")] == ["q1", "q2", "q3"]


def test_whole_input_problems_are_one_error(tmp_path):
    (missing,) = read_dataset(tmp_path / "nope.jsonl")
    assert isinstance(missing, InputError) and "does not exist" in missing.reason
    (tmp_path / "empty").mkdir()
    (not_saved,) = read_dataset(tmp_path / "empty")
    assert "no state.json" in not_saved.reason
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    (bad,) = read_dataset(tmp_path / "bad.parquet")
    assert isinstance(bad, InputError) and bad.index == 0 and "bad.parquet" in bad.reason


def test_a_missing_shard_ends_the_reading_with_an_error(tmp_path):
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "s"), num_shards=2)
    state = json.loads((tmp_path / "s" / "state.json").read_text())
    (tmp_path / "s" / state["_data_files"][1]["filename"]).unlink()
    items = list(read_dataset(tmp_path / "s"))
    assert _kinds(items) == ["DatasetItem", "DatasetItem", "InputError"]
    assert items[2].index == 2 and "missing" in items[2].reason


@pytest.mark.parametrize(
    "escape", ["../outside/{name}", "{outside}/{name}", "sub/../../outside/{name}"]
)
def test_a_state_json_naming_a_file_outside_its_folder_is_that_datasets_error(tmp_path, escape):
    """state.json is data: a file name that leaves the folder (`..`, an absolute path) is refused
    before anything is opened. The file it names is a valid shard with rows, so reading it would show."""
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "outside"))
    name = json.loads((tmp_path / "outside" / "state.json").read_text())["_data_files"][0][
        "filename"
    ]
    datasets.Dataset.from_list(ROWS[:1]).save_to_disk(str(tmp_path / "saved"))
    state_path = tmp_path / "saved" / "state.json"
    state = json.loads(state_path.read_text())
    state["_data_files"].append(
        {"filename": escape.format(name=name, outside=tmp_path / "outside")}
    )
    state_path.write_text(json.dumps(state))
    (err,) = read_dataset(tmp_path / "saved")
    assert isinstance(err, InputError) and err.index == 0
    assert "outside its folder" in err.reason and str(state_path) in err.reason


def test_a_state_json_file_name_that_is_not_a_string_is_that_datasets_error(tmp_path):
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "saved"))
    state_path = tmp_path / "saved" / "state.json"
    state = json.loads(state_path.read_text())
    state["_data_files"][0]["filename"] = ["data.arrow"]
    state_path.write_text(json.dumps(state))
    (err,) = read_dataset(tmp_path / "saved")
    assert isinstance(err, InputError) and "state.json" in err.reason


def test_bad_rows_are_errors_and_reading_goes_on(tmp_path):
    lines = [
        json.dumps({"id": "ok", "video": "v", "question": "q?"}),
        "{not json",
        json.dumps({"id": "no-video", "question": "q?"}),
        json.dumps({"id": "num-video", "video": 7, "question": "q?"}),
        json.dumps({"id": "no-question", "video": "v", "question": "  "}),
        json.dumps({"id": "ok", "video": "v2", "question": "q?"}),
        json.dumps({"id": "bad-options", "video": "v", "question": "q?", "options": "A or B"}),
        json.dumps({"id": "gap", "video": "v", "question": "q?", "options": {"A": "x", "C": "y"}}),
        json.dumps({"id": "nested", "video": "v", "question": "q?", "options": ["x", ["y"]]}),
        json.dumps({"id": ["x"], "video": "v", "question": "q?"}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"id": "last", "video": "v", "question": "q?", "options": [], "answer": "zzz"}),
    ]
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(lines) + "\n")
    items = list(read_dataset(p))
    assert _kinds(items) == ["DatasetItem"] + ["InputError"] * 10 + ["DatasetItem"]
    errors = {e.source: e for e in items if isinstance(e, InputError)}
    assert "malformed JSON on line 2" in errors["line 2"].reason
    assert errors["line 3"].reason == "missing field 'video'" and errors["line 3"].id == "no-video"
    assert "not a string" in errors["line 4"].reason
    assert errors["line 5"].reason == "missing field 'question'"
    assert "duplicate id 'ok'" in errors["line 6"].reason
    assert "must be a list" in errors["line 7"].reason
    assert "without gaps" in errors["line 8"].reason
    assert "option B is not a string" in errors["line 9"].reason
    assert "field 'id'" in errors["line 10"].reason
    assert "expected an object" in errors["line 11"].reason
    last = items[-1]
    # no options: an open question, whose gold answer is its text
    assert (
        last.options is None
        and last.question_type == "open"
        and last.answer == last.answer_raw == "zzz"
    )
    assert [e.index for e in items] == list(range(12))


def test_missing_id_is_made_from_video_and_question_and_is_stable(tmp_path):
    rows = [
        {"video": "clip", "question": "Why?"},
        {"video": "clip", "question": "How?"},
        {"video": "clip", "question": "Why?"},
    ]
    p = _write_jsonl(tmp_path / "d.jsonl", rows)
    first = list(read_dataset(p))
    again = list(read_dataset(p))
    assert [i.id for i in first] == [i.id for i in again]
    assert first[0].id.startswith("clip#") and first[0].id != first[1].id
    assert isinstance(first[2], InputError) and "duplicate id" in first[2].reason
    assert first[2].id == first[0].id


OPTIONS = ["A. a red ball", "B. a blue cup", "C. the man waves", "D. nothing"]


@pytest.mark.parametrize(
    "answer,letter",
    [
        ("B", "B"),
        ("b", "B"),
        ("(B)", "B"),
        ("[c]", "C"),
        (" D ", "D"),
        ("B. a blue cup", "B"),
        ("C: the man waves", "C"),
        ("A) a red ball", "A"),
        (1, "B"),
        (0, "A"),
        ("the man waves", "C"),
        ("A RED BALL", "A"),  # an option's text
        ("E", None),
        (4, None),
        (-1, None),
        ("A man", None),
        ("Bob", None),
        ("", None),
        (None, None),
        (True, None),
        (2.0, None),
        (["B"], None),
    ],
)
def test_gold_answer_is_normalized_to_a_letter(tmp_path, answer, letter):
    p = _write_jsonl(
        tmp_path / "d.jsonl",
        [{"video": "v", "question": "q?", "options": OPTIONS, "answer": answer}],
    )
    (item,) = read_dataset(p)
    assert isinstance(item, DatasetItem)
    assert item.answer == letter and item.answer_raw == answer


def test_gold_index_needs_options_and_letters_are_free_without_them(tmp_path):
    rows = [
        {"id": "i", "video": "v", "question": "q?", "answer": 1},
        {"id": "l", "video": "v", "question": "q?", "answer": "(f)"},
    ]
    items = list(read_dataset(_write_jsonl(tmp_path / "d.jsonl", rows)))
    assert [i.answer for i in items] == [None, "F"]


def test_option_dict_is_put_in_letter_order(tmp_path):
    rows = [
        {
            "video": "v",
            "question": "q?",
            "options": {"b": "no", "A": "yes", "C": None},
            "answer": "(a)",
        }
    ]
    (item,) = read_dataset(_write_jsonl(tmp_path / "d.jsonl", rows))
    assert item.options == ("yes", "no") and item.answer == "A"


def test_render_options_matches_the_reference_prompt():
    assert render_options(["red", "blue", "C. green"]) == "A: red\nB: blue\nC: C. green"
    assert render_options(None) == ""
