import json

from murgat_local.inputs.responses import ResponseItem, read_responses


def test_every_bad_line_is_an_error_and_reading_goes_on(tmp_path):
    good = {"id": "a", "video": "v", "model_generation": "A cat (visual, 0:01)."}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({"video": "v", "model_generation": "x"}),
        json.dumps({"id": "a", "video": "v", "model_generation": "dup"}),
        json.dumps({"id": "b", "video": "v", "model_generation": "   "}),
        json.dumps({"id": "c", "model_generation": "x"}),
        json.dumps({"id": "d", "video": "v", "original_full_generation": "fallback field"}),
    ]
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(lines) + "\n")
    items = list(read_responses(p))
    assert [type(i).__name__ for i in items] == [
        "ResponseItem",
        "InputError",
        "InputError",
        "InputError",
        "InputError",
        "InputError",
        "ResponseItem",
    ]
    assert "line 2" in items[1].reason and items[1].source == "line 2"
    assert "missing field 'id'" in items[2].reason
    assert "duplicate id" in items[3].reason
    assert items[4].reason == "empty response"
    assert "missing field 'video'" in items[5].reason
    assert items[6].generation == "fallback field"


def test_reference_json_list(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps([{"id": 1, "video": "v1", "model_generation": "x", "answer": "B"}]))
    (item,) = read_responses(p)
    assert isinstance(item, ResponseItem) and item.id == "1" and item.answer == "B"
