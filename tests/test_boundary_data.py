"""Declared boundaries are checked against the data: PL210, PL211, epoch times in PL208 (issue 12, item 3).

Real files in a temp project, the real CLI."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conftest import REFERENCE_PLAN, run_process, write

PLAN = REFERENCE_PLAN.read_text(encoding="utf-8").replace("path: data/retail/train.jsonl", "path: data/train.jsonl").replace(
    "path: data/retail/eval.jsonl", "path: data/eval.jsonl"
)


def _epoch(day: str, ms: bool = False) -> int:
    seconds = int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc).timestamp())
    return seconds * 1000 if ms else seconds


def _project(tmp_path, train_times, eval_times, plan=PLAN):
    write(tmp_path / "plans" / "p.yaml", plan)
    for name, times in (("train", train_times), ("eval", eval_times)):
        rows = [{"customer_id": f"{name}-{i}", "created_at": t, "prompt": f"{name} {i}"} for i, t in enumerate(times)]
        write(tmp_path / "data" / f"{name}.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def _findings(root, *args):
    result = run_process("--format", "json", "--no-cache", *args, "plans", cwd=root)
    assert "Traceback" not in result.err, result
    return result, [(f["code"], f["yaml_path"], f["line"]) for f in result.json["findings"]]


def _line(text, needle):
    return next(n for n, line in enumerate(text.split("\n"), 1) if needle in line)


@pytest.mark.parametrize("require", [False, True])
def test_a_misspelt_group_key_is_an_error(tmp_path, require):
    plan = PLAN.replace("group_key: customer_id", "group_key: acount_id")
    root = _project(tmp_path, ["2026-05-01"] * 3, ["2026-09-01"] * 2, plan)
    result, found = _findings(root, *(["--require-data"] if require else []))
    line = _line(plan, "group_key: acount_id")
    assert found == [("PL210", "splits.boundary.group_key", line)] * 2, result
    messages = sorted(f["message"] for f in result.json["findings"])
    assert "no eval row has 'acount_id' (all 2 rows" in messages[0] and "no train row has 'acount_id' (all 3 rows" in messages[1], messages
    assert all("first: row 1" in m for m in messages)
    assert {f["column"] for f in result.json["findings"]} == {5}  # at the key
    assert result.status == 1


def test_some_rows_without_the_key(tmp_path):
    root = _project(tmp_path, ["2026-05-01", None, "2026-05-02", ""], ["2026-09-01"])
    result, found = _findings(root)
    assert found == [("PL210", "splits.boundary.time_key", _line(PLAN, "time_key:"))], result
    assert "2 train rows of 4" in result.json["findings"][0]["message"] and "first: row 2" in result.json["findings"][0]["message"]


def test_us_dates_are_pl211(tmp_path):
    root = _project(tmp_path, ["07/30/2026", "2026-07-01"], ["08/05/2026"])
    result, found = _findings(root)
    assert found == [("PL211", "splits.boundary.time_key", _line(PLAN, "time_key:"))] * 2, result
    assert "'07/30/2026'" in result.json["findings"][0]["message"] + result.json["findings"][1]["message"]


@pytest.mark.parametrize("ms", [False, True])
def test_epoch_seconds_and_milliseconds_compare_correctly(tmp_path, ms):
    root = _project(tmp_path, [_epoch("2026-07-01", ms), _epoch("2026-07-30", ms)], [_epoch("2026-08-05", ms), str(_epoch("2026-08-06", ms))])
    result, found = _findings(root)
    assert found == [] and result.status == 0, result
    root = _project(tmp_path, [_epoch("2026-07-01", ms), _epoch("2026-08-03", ms)], [_epoch("2026-08-05", ms)])
    result, found = _findings(root)
    assert found == [("PL208", "splits.train.path", _line(PLAN, "path: data/train.jsonl"))], result  # only the one late row
    assert "1 train row is dated" in result.json["findings"][0]["message"]


def test_epoch_microseconds_are_pl211(tmp_path):
    root = _project(tmp_path, [_epoch("2026-07-01") * 1_000_000], [_epoch("2026-08-05")])
    _, found = _findings(root)
    assert [c for c, _, _ in found] == ["PL211"]
