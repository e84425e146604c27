"""The data checks' facts (services/split_data/facts.py): what the service returns, and the rules word.

The service names no rule code and quotes no value: its facts hold counts,
locations and value excerpts, and they survive the result cache (to_json,
from_json) unchanged; a damaged entry is not facts.
"""

from __future__ import annotations

import json

import pytest

from planlint.rules.leakage_findings import findings, show_value
from planlint.services.split_data import check_split_data
from planlint.services.split_data._values import SHOW_CHARS, excerpt
from planlint.services.split_data.facts import DataFacts, Location, Overlap, Rows, Shared, SplitFacts, from_json, to_json


def _rows(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_facts_of_a_leak_are_counts_locations_and_excerpts(tmp_path):
    train = _rows(tmp_path / "train.jsonl", [{"customer_id": f"c{n}", "created_at": "2026-05-01", "prompt": f"train {n}"} for n in range(6)]
                  + [{"customer_id": "c1", "created_at": "2026-09-01", "prompt": "late"}])
    eval_ = _rows(tmp_path / "eval.jsonl", [{"customer_id": "c1", "created_at": "2026-08-09", "prompt": "TRAIN  2"},
                                            {"customer_id": "e1", "created_at": "soon", "prompt": ""}])
    facts = check_split_data(train, eval_, group_key="customer_id", time_key="created_at", cutoff="2026-08-01", input_fields=None,
                             cache_dir=None)
    assert isinstance(facts, DataFacts)
    assert facts.shared_groups == Overlap(1, 2, 1, (Shared("c1", Location(2), Location(1)),))
    # the text of the larger split's row (train: 7 rows, eval: 2), as that row has it
    assert facts.shared_inputs == Overlap(1, 1, 1, (Shared("train 2", Location(3), Location(1)),))
    assert facts.train.time_leaks == Rows(1, (Location(7),), ("2026-09-01",))
    assert facts.eval.bad_time == Rows(1, (Location(2),), ("soon",))
    assert facts.eval.no_input == Rows(1, (Location(2),))
    assert (facts.cutoff, facts.time_key, facts.train.rows, facts.eval.fmt) == ("2026-08-01", "created_at", 7, "jsonl")
    assert "PL" not in json.dumps(to_json(facts))  # no rule code in what the service says
    codes = [finding.code for finding in findings(facts)[0]]
    assert codes == ["PL211", "PL207", "PL208", "PL209"]


def test_facts_survive_the_cache_and_a_damaged_entry_is_none():
    split = SplitFacts("train", "data/train-*.jsonl", "jsonl", True, 12, None, ("customer_id",),
                       invalid=Rows(2, (Location(3, "a.jsonl", 3), Location(9, "b.jsonl", 2))),
                       time_leaks=Rows(1, (Location(4, "a.jsonl", 4),), ("2026-09-01",)))
    other = SplitFacts("eval", "s3://bucket/eval.parquet", "parquet", False, 3, "prompt", ())
    facts = DataFacts("customer_id", "created_at", "2026-08-01", ("prompt", "input"), 16 << 20, split, other,
                      Overlap(7, 9, 8, (Shared("c'1", Location(4, "a.jsonl", 4), Location(1)),)),
                      Overlap(1, 1, 1, (Shared(None, Location(5, "b.jsonl", 1), Location(2)),)))
    assert from_json(json.loads(json.dumps(to_json(facts)))) == facts
    damaged = to_json(facts)
    damaged["train"]["rows"] = "12"
    assert from_json(damaged) is None
    for garbage in (None, [], {"group_key": None}, {**to_json(facts), "train": []}):
        assert from_json(garbage) is None


@pytest.mark.parametrize("value, shown", [
    ("plain", "'plain'"),
    ("x" * 40, "'" + "x" * 40 + "'"),
    ("x" * 41, "'" + "x" * 40 + "…'"),
    ("y" * 500, "'" + "y" * 40 + "…'"),
    ("it's", "'it\\'s'"),
    ([{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}], "'hi'"),
    ({"a": 1}, "'{\"a\": 1}'"),
    (12, "'12'"),
])
def test_an_excerpt_shows_as_the_value_did(value, shown):
    """The facts keep an excerpt a character past what a message shows (a chat's first user
    turn, anything else as its text): quoted, it is what the message showed of the value."""
    kept = excerpt(value)
    assert len(kept) <= SHOW_CHARS + 1
    assert show_value(kept) == shown


def test_an_excerpt_with_control_characters_is_escaped_when_shown():
    shown = show_value(excerpt("\x1b[31mred\u202e"))
    assert "\x1b" not in shown and "\u202e" not in shown and "red" in shown
