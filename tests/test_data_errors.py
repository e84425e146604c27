"""What stops the data checks (services/split_data/errors.py) ends as a note, caught in one place.

Every way a check can stop without an answer is a DataError (unreadable,
denied, over the budget, over a cap, a missing extra); check_split_data
turns each into the note that names it, and with --require-data the rules
make it PL006. Nothing else escapes: a split the checks cannot read is never
an internal error.
"""

from __future__ import annotations

import json
import pickle

import pytest

from conftest import REFERENCE_PLAN, write
from planlint.rules.leakage_findings import findings
from planlint.services import split_data
from planlint.services.split_data import GlobMatches, local_glob
from planlint.services.split_data.errors import DataError, Denied, MissingExtra, OverBudget, OverBytes, OverCap, Unreadable


def check_split_data(*args, **kwargs):
    """The data check as the rules see it: its facts worded as findings and notes."""
    return findings(split_data.check_split_data(*args, **kwargs))


def _rows(customers: list[str]) -> str:
    return "".join(json.dumps({"customer_id": c, "prompt": f"question {c}"}) + "\n" for c in customers)


def _repo(tmp_path, train_path: str = "data/train-*", eval_path: str = "data/eval.jsonl"):
    write(tmp_path / ".git" / "HEAD", "")
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    text = text.replace("path: data/retail/train.jsonl", f"path: {train_path}").replace("path: data/retail/eval.jsonl", f"path: {eval_path}")
    write(tmp_path / "plans" / "plan.yaml", text)
    write(tmp_path / "data" / "train-1.jsonl", _rows(["a", "b"]))
    write(tmp_path / "data" / "eval.jsonl", _rows(["c"]))


@pytest.mark.parametrize("require", [False, True])
def test_a_glob_matching_a_file_of_no_split_format_is_a_note_not_an_internal_error(tmp_path, planlint, require):
    _repo(tmp_path)
    write(tmp_path / "data" / "train-2.txt", "hello\n")
    result = planlint("--format", "json", "--no-cache", *(["--require-data"] if require else []), "plans", cwd=tmp_path)
    said = "data/train-*: train-2.txt is not a supported split format (.jsonl, .ndjson, .csv, .parquet, .jsonl.gz, .csv.gz)"
    assert "internal error" not in result.err, result
    if require:
        assert result.status == 1, result
        found = [f for f in result.json["findings"] if f["code"] == "PL006"]
        assert len(found) == 1 and said in found[0]["message"] and found[0]["line"] == 27, result
    else:
        assert result.status == 0, result
        assert any(f"splits.train.path: {said}; data-aware checks skipped" in note for note in result.json["notes"]), result


def test_matches_of_two_formats_are_a_note(tmp_path):
    _repo(tmp_path)
    write(tmp_path / "data" / "train-2.csv", "customer_id,prompt\nz,q\n")
    train = GlobMatches("data/train-*", local_glob(tmp_path, "data/train-*"))
    issues, notes = check_split_data(train, tmp_path / "data" / "eval.jsonl", group_key="customer_id", time_key=None,
                                     cutoff=None, input_fields=None, cache_dir=None)
    assert issues == [] and [(n.split, n.incomplete) for n in notes] == [("train", True)]
    assert notes[0].message == "data/train-*: the matched objects are of different formats; a split is one format; data-aware checks skipped"


def test_each_kind_says_what_it_is_and_survives_a_worker_pipe():
    """A worker process's error is raised in the planlint process: each kind pickles with its split and row."""
    for error in (Unreadable("x: no such object", split="eval"), Denied("x: access denied", split="train"),
                  MissingExtra("reading Parquet needs the optional extra"), OverBudget(split="eval"),
                  OverCap("is longer than 16 MiB (the limit on one record)", row=7, noun="record", split="train"),
                  OverBytes("the train split read more than 2 GiB (limit data.max_bytes)")):
        copy = pickle.loads(pickle.dumps(error))
        assert isinstance(copy, DataError) and type(copy) is type(error)
        assert (copy.message, copy.split) == (error.message, error.split)
    assert OverCap("is longer than 16 MiB (the limit on one record)", row=7, noun="record").message == \
        "record 7 is longer than 16 MiB (the limit on one record)"
    assert issubclass(OverBytes, OverCap)
