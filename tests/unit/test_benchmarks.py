"""The paper's benchmarks read as they are downloaded (no model): every layout, every quirk, every
bad row named by its field; `murgat dataset`; subsets drawn the same way every time; open
answers graded."""

from __future__ import annotations

import pytest
from support.paths import ROOT

from murgat_local.inputs import InputError
from murgat_local.inputs.benchmarks import DatasetFormatError, detect, open_dataset
from murgat_local.inputs.subsets import choose
from murgat_local.sample import benchmarks as layouts
from murgat_local.text.open_answers import as_number, matches, open_answer


def split(items):
    ok = [i for i in items if not isinstance(i, InputError)]
    bad = [i for i in items if isinstance(i, InputError)]
    return ok, bad


def test_worldsense_official_is_read_as_released(worldsense):
    for path in (worldsense, worldsense / "worldsense_qa.json"):
        ds = open_dataset(path)
        assert (ds.format, ds.name, ds.media_root) == ("worldsense", "worldsense", worldsense)
        ok, bad = split(list(ds.items()))
        assert [i.id for i in ok][:3] == ["ws00000/task0", "ws00000/task1", "ws00001/task0"]
        first = ok[0]
        assert first.video == "videos/ws00000.mp4" and (worldsense / first.video).is_file()
        assert first.options == ("red", "green", "blue", "yellow") and first.answer == "A"
        assert first.question_type == "multiple-choice"
        assert first.categories == {
            "domain": "Sports",
            "sub_category": "sub0",
            "duration": "<1min",
            "audio_class": ["speech"],
            "task_domain": "Recognition",
            "task_type": "Counting",
        }
        assert {b.id: b.reason for b in bad} == {
            "wsbad01/task0": "field 'candidates': option 1 should start with 'A.', got 'one'",
            "wsbad02/task0": "field 'answer' 'E' names no option (A-B)",
        }


def test_worldsense_flattened_table_in_tsv_and_parquet(tmp_path, video):
    for kind in ("tsv", "parquet"):
        folder = layouts.worldsense_table(tmp_path / kind, video, rows=4, kind=kind)
        ds = open_dataset(folder)
        assert ds.format == "worldsense-table" and ds.media_root == folder
        ok, bad = split(list(ds.items()))
        assert bad == [] and [i.id for i in ok] == ["0", "1", "2", "3"]
        assert ok[1].video == "videos/wt0001.mp4" and (folder / ok[1].video).is_file()
        assert ok[1].options == ("red", "green", "blue", "yellow") and ok[1].answer == "B"
        assert ok[1].categories["audio_class"] == ["speech"]  # a list written as a Python literal
        assert ok[1].categories["task_type"] == "Audio Recognition"


def test_videommmu_tracks_disciplines_quirks_and_images(videommmu):
    ds = open_dataset(videommmu)
    assert (ds.format, ds.media_root) == ("videommmu", videommmu)
    ok, bad = split(list(ds.items()))
    assert len(ok) == 9
    ids = [i.id for i in ok]
    assert ids[0] == "Perception/validation_Physics_1" and "Adaptation/validation_Physics_1" in ids
    p1 = ok[0]
    assert p1.video == "Science/validation_Physics_1.mp4" and (videommmu / p1.video).is_file()
    assert p1.options == ("red", "green", "blue")  # "(A) red": the option's own letter dropped
    assert p1.categories == {"track": "Perception", "discipline": "Science", "subject": "Physics"}
    none_type = ok[1]  # question_type "None" on a row with options
    assert none_type.question_type == "multiple-choice" and none_type.answer == "A"
    assert none_type.categories["discipline"] == "Art"
    open_q = next(i for i in ok if i.id == "Comprehension/validation_Clinical_Medicine_3")
    assert (open_q.question_type, open_q.answer, open_q.options) == ("open", "8", None)
    adapt = next(i for i in ok if i.id == "Adaptation/validation_Art_Theory_2")
    assert len(adapt.images) == 1 and adapt.images[0].data.startswith(b"\x89PNG")
    assert "image" not in adapt.row and adapt.row["images"][0]["bytes"] == len(adapt.images[0].data)
    assert {b.id: b.reason for b in bad} == {
        "Perception/validation_Astrology_1": "field 'id' names an unknown subject 'Astrology'",
        "Perception/validation_Physics_99": "field 'answer' 'Q' names no option (A-B)",
    }
    # one track's folder alone, and the archive litter (__MACOSX, ._ files) is never read
    only = open_dataset(videommmu / "Adaptation")
    assert (
        only.media_root == videommmu
        and [i.id.split("/")[0] for i in only.items()] == ["Adaptation"] * 3
    )


def test_detection_names_what_it_looked_for_and_what_it_found(tmp_path, worldsense):
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("x")
    with pytest.raises(DatasetFormatError) as e:
        open_dataset(tmp_path / "junk")
    msg = str(e.value)
    for looked in ("worldsense_qa.json", "Perception/", "state.json", "worldsense-table"):
        assert looked in msg
    assert "Found: notes.txt" in msg
    with pytest.raises(DatasetFormatError, match="unknown dataset format 'wordsense'"):
        open_dataset(worldsense, "wordsense")
    # --format names a format detection would not pick: the official file read as JSON rows
    rows = list(open_dataset(worldsense / "worldsense_qa.json", "json").items())
    assert len(rows) == 1 and isinstance(rows[0], InputError)
    assert detect(ROOT / "samples" / "questions.jsonl") == "jsonl"


def test_the_references_saved_samples_keep_their_categories(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = [
        {
            "video": "clip1",
            "question": "Q?",
            "options": ["a", "b"],
            "answer": "B",
            "task_domain": "Recognition",
            "task_type": "Counting",
            "domain": "Sports",
        }
    ]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    ds = open_dataset(tmp_path / "saved")
    (item,) = list(ds.items())
    assert ds.format == "saved" and ds.media_root is None
    assert item.categories == {
        "task_domain": "Recognition",
        "task_type": "Counting",
        "domain": "Sports",
    }


def test_subsets_are_the_same_every_time_and_stratified_by_share(worldsense, tmp_path, video):
    items = list(open_dataset(worldsense).items())
    a = choose(items, 4, seed=7)
    assert a.indices == choose(list(reversed(items)), 4, seed=7).indices  # not the file's order
    assert len(a.indices) == 4 and a.indices <= {i.index for i in items}
    assert choose(items, 4, seed=8).indices != a.indices or len(items) <= 4
    assert a.indices <= choose(items, 6, seed=7).indices  # a larger draw holds the smaller one
    big = layouts.worldsense_official(tmp_path / "big", video, videos=30, tasks=2, bad=False)
    many = list(open_dataset(big).items())
    s = choose(many, 12, seed=1, stratify="domain")
    assert s.strata == {"Sports": (4, 20), "Music": (4, 20), "Daily Life": (4, 20)}
    chosen = [i for i in many if i.index in s.indices]
    assert sorted(i.categories["domain"] for i in chosen).count("Music") == 4
    assert s.provenance()["stratify"] == "domain" and s.provenance()["population"] == 60
    assert choose(many, 1000, seed=1).size == 60


@pytest.mark.parametrize(
    "text,gold,expected",
    [
        ("Reasoning: ...\nAnswer: 8", "8", True),
        ("Answer: 8.05", "8", True),  # within 1%
        ("Answer: 8.2", "8", False),
        ("\\boxed{1,000}", "1000", True),
        ("Answer: 12.5%", "12.5", True),
        ("Answer: 2/3", "0.6667", True),
        ("Answer: The Eiffel Tower.", "eiffel tower", True),
        ("Answer: **Paris**", "Paris", True),
        ("Answer: Lyon", "Paris", False),
        ("Answer: 12-15", "12", False),
        ("<think>Answer: 3</think> I am not sure.", "3", None),
    ],
)
def test_open_answers_are_graded_by_text_or_number(text, gold, expected):
    assert matches(open_answer(text), gold) is expected


def test_numbers_read_from_text():
    assert as_number("12 cm") == 12 and as_number("$3") == 3 and as_number("1e3") == 1000
    assert as_number("two") is None and as_number("3 or 4") is None
