"""Data-aware split checks (PL207-PL209): planlint.services.split_data."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planlint.rules.leakage_findings import DataFinding, DataNote, findings
from planlint.services.split_data import _base, _file_workers, _index, _scan, schemes
from planlint.services.split_data.budget import UNLIMITED
import planlint.services.split_data as split_data

FORMATS = ["jsonl", "jsonl.gz", "csv", "csv.gz", "parquet"]
CUTOFF = "2026-08-01"


def check_split_data(*args, **kwargs):
    """The data check as the rules see it: its facts worded as findings and notes."""
    return findings(split_data.check_split_data(*args, **kwargs))


# --------------------------------------------------------------------------
# helpers


def write_rows(path: Path, rows: list[dict], fmt: str | None = None) -> Path:
    """Write rows as JSON Lines, CSV (header = union of keys), Parquet, or the
    gzip variants, by `fmt` or the file's suffix."""
    fmt = fmt or path.name.split(".", 1)[1]
    if fmt.startswith("jsonl"):
        text = "".join(json.dumps(row) + "\n" for row in rows)
        if fmt.endswith(".gz"):
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text, encoding="utf-8")
    elif fmt.startswith("csv"):
        names: list[str] = []
        for row in rows:
            names += [name for name in row if name not in names]
        opener = (lambda: gzip.open(path, "wt", encoding="utf-8", newline="")) if fmt.endswith(".gz") else (lambda: open(path, "w", encoding="utf-8", newline=""))
        with opener() as handle:
            writer = csv.DictWriter(handle, fieldnames=names)
            writer.writeheader()
            writer.writerows(rows)
    elif fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), str(path))
    else:
        raise AssertionError(fmt)
    return path


def row(i: int, customer: str, when: str, prompt: str | None = None, **extra) -> dict:
    data = {"id": f"r{i}", "customer_id": customer, "created_at": when, "prompt": prompt or f"Ticket {i} about order {i * 37}", "answer": "SECRET-ANSWER-TEXT"}
    data.update(extra)
    return data


def clean_train(n: int = 20) -> list[dict]:
    return [row(i, f"cust-{i % 7}", f"2026-0{1 + i % 7}-1{i % 10}T10:00:00Z", f"How do I return train item {i}?") for i in range(n)]


def clean_eval(n: int = 10) -> list[dict]:
    return [row(100 + i, f"ev-cust-{i % 4}", f"2026-08-{10 + i}T09:00:00Z", f"Where is eval parcel {i}?") for i in range(n)]


def check(train: Path, eval_: Path, **kwargs):
    options = dict(group_key="customer_id", time_key="created_at", cutoff=CUTOFF, input_fields=None, cache_dir=None)
    options.update(kwargs)
    return check_split_data(train, eval_, **options)


def by_code(issues: list[DataFinding]) -> dict[tuple[str, str], DataFinding]:
    return {(issue.code, issue.split): issue for issue in issues}


@pytest.fixture(params=FORMATS)
def fmt(request) -> str:
    if request.param == "parquet":
        pytest.importorskip("pyarrow")
    return request.param


# --------------------------------------------------------------------------
# every format: quiet on a clean split, each rule fires


def test_clean_split_is_quiet(tmp_path, fmt):
    train = write_rows(tmp_path / f"train.{fmt}", clean_train())
    eval_ = write_rows(tmp_path / f"eval.{fmt}", clean_eval())
    assert check(train, eval_) == ([], [])


def test_done_when_three_customers_and_one_late_row(tmp_path, fmt):
    train_rows = clean_train(30)
    train_rows[17]["created_at"] = "2026-08-03T12:00:00Z"  # row 18, after the cutoff
    eval_rows = clean_eval(12)
    for eval_index, customer in ((2, "cust-1"), (5, "cust-4"), (9, "cust-6"), (10, "cust-1")):
        eval_rows[eval_index]["customer_id"] = customer
    train = write_rows(tmp_path / f"train.{fmt}", train_rows)
    eval_ = write_rows(tmp_path / f"eval.{fmt}", eval_rows)
    issues, notes = check(train, eval_)
    assert notes == []
    found = by_code(issues)
    assert set(found) == {("PL207", "eval"), ("PL208", "train")}
    group = found["PL207", "eval"].message
    # cust-1 is in train rows 2, 9, 16, 23, 30; cust-4 in 5, 12, 19, 26; cust-6 in 7, 14, 21, 28
    assert group.startswith("3 customer_id values occur in both train and eval (13 train rows, 4 eval rows)")
    assert "'cust-1' (train row 2, eval row 3)" in group
    assert "'cust-4' (train row 5, eval row 6)" in group
    assert "'cust-6' (train row 7, eval row 10)" in group
    late = found["PL208", "train"].message
    assert late.startswith("1 train row is dated at or after the cutoff 2026-08-01 (created_at): row 18 '2026-08-03T12:00:00Z'")
    assert "SECRET-ANSWER-TEXT" not in group + late


def test_eval_row_before_cutoff(tmp_path, fmt):
    eval_rows = clean_eval()
    eval_rows[3]["created_at"] = "2026-07-31T23:59:59Z"
    eval_rows[4]["created_at"] = "2026-08-01T00:00:00Z"  # exactly the cutoff: allowed in eval
    train = write_rows(tmp_path / f"train.{fmt}", clean_train())
    eval_ = write_rows(tmp_path / f"eval.{fmt}", eval_rows)
    issues, notes = check(train, eval_)
    assert [(issue.code, issue.split) for issue in issues] == [("PL208", "eval")]
    assert issues[0].message.startswith("1 eval row is dated before the cutoff 2026-08-01 (created_at): row 4 '2026-07-31T23:59:59Z'")


def test_train_row_exactly_at_cutoff_leaks(tmp_path):
    train_rows = clean_train()
    train_rows[0]["created_at"] = "2026-08-01"
    issues, _ = check(write_rows(tmp_path / "train.jsonl", train_rows), write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert [(issue.code, issue.split) for issue in issues] == [("PL208", "train")]
    assert "row 1 '2026-08-01'" in issues[0].message


def test_duplicate_inputs_after_normalization(tmp_path, fmt):
    eval_rows = clean_eval()
    eval_rows[1]["prompt"] = "  HOW do I   return\ttrain item 4? "
    eval_rows[6]["prompt"] = "Ｈｏｗ do I return train item 11?"  # fullwidth letters: NFKC
    eval_rows[7]["prompt"] = "how do i return train item 11?"
    train = write_rows(tmp_path / f"train.{fmt}", clean_train())
    eval_ = write_rows(tmp_path / f"eval.{fmt}", eval_rows)
    issues, notes = check(train, eval_)
    assert notes == []
    assert [(issue.code, issue.split) for issue in issues] == [("PL209", "eval")]
    message = issues[0].message
    assert message.startswith("2 inputs occur in both train and eval (2 train rows, 3 eval rows;")
    assert "'How do I return train item 4?' (train row 5, eval row 2)" in message
    assert "(train row 12, eval row 7)" in message


def test_leaked_group_counted_exactly(tmp_path):
    train_rows = [row(i, "shared" if i % 3 == 0 else f"t{i}", "2026-01-01") for i in range(30)]
    eval_rows = [row(100 + i, "shared" if i in (4, 8) else f"e{i}", "2026-09-01") for i in range(10)]
    issues, _ = check(write_rows(tmp_path / "train.jsonl", train_rows), write_rows(tmp_path / "eval.jsonl", eval_rows))
    assert [issue.code for issue in issues] == ["PL207"]
    assert issues[0].message.startswith("1 customer_id value occurs in both train and eval (10 train rows, 2 eval rows): 'shared' (train row 1, eval row 5).")
    assert "this value" in issues[0].message


def test_many_leaks_show_first_few_and_count_the_rest(tmp_path):
    train_rows = [row(i, f"c{i}", "2026-01-01") for i in range(50)]
    eval_rows = [row(100 + i, f"c{i}", "2026-09-01") for i in range(20)]
    issues, _ = check(write_rows(tmp_path / "train.jsonl", train_rows), write_rows(tmp_path / "eval.jsonl", eval_rows), time_key=None, cutoff=None)
    message = by_code(issues)["PL207", "eval"].message
    assert message.startswith("20 customer_id values occur")
    assert message.count("(train row") == split_data.EXAMPLES
    assert ", and 15 more." in message


def test_train_smaller_than_eval_keeps_roles(tmp_path):
    # the smaller file is held in memory; results must not depend on which one it is
    train_rows = [row(i, f"c{i}", "2026-01-01", f"train prompt {i}") for i in range(5)]
    train_rows[2]["created_at"] = "2026-09-09"
    eval_rows = [row(100 + i, f"e{i}", "2026-09-01", f"eval prompt {i} " + "x" * 50) for i in range(40)]
    eval_rows[30]["customer_id"] = "c3"
    eval_rows[31]["prompt"] = "TRAIN prompt 1"
    eval_rows[32]["created_at"] = "2026-01-01"
    train = write_rows(tmp_path / "train.jsonl", train_rows)
    eval_ = write_rows(tmp_path / "eval.jsonl", eval_rows)
    assert train.stat().st_size < eval_.stat().st_size
    found = by_code(check(train, eval_)[0])
    assert set(found) == {("PL207", "eval"), ("PL208", "train"), ("PL208", "eval"), ("PL209", "eval")}
    assert "'c3' (train row 4, eval row 31)" in found["PL207", "eval"].message
    assert "row 3 '2026-09-09'" in found["PL208", "train"].message
    assert "row 33 '2026-01-01'" in found["PL208", "eval"].message
    assert "(train row 2, eval row 32)" in found["PL209", "eval"].message


def test_mixed_formats(tmp_path):
    pytest.importorskip("pyarrow")
    train_rows = clean_train()
    eval_rows = clean_eval()
    eval_rows[0]["customer_id"] = "cust-3"
    train = write_rows(tmp_path / "train.parquet", train_rows)
    eval_ = write_rows(tmp_path / "eval.csv.gz", eval_rows)
    issues, notes = check(train, eval_)
    assert notes == []
    assert [issue.code for issue in issues] == ["PL207"]
    assert "'cust-3' (train row 4, eval row 1)" in issues[0].message
    assert "train: row 1 is the first row; eval: row 1 is the first row after the header" in issues[0].message


def test_number_and_string_group_values_match(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text('{"customer_id": 123, "prompt": "a"}\n{"customer_id": 7, "prompt": "b"}\n')
    eval_ = write_rows(tmp_path / "eval.csv", [{"customer_id": "123", "prompt": "c"}])
    issues, _ = check(train, eval_, time_key=None, cutoff=None)
    assert [issue.code for issue in issues] == ["PL207"]
    assert "'123' (train row 1, eval row 1)" in issues[0].message


# --------------------------------------------------------------------------
# timestamps


@pytest.mark.parametrize(
    "value, late",
    [
        ("2026-07-31", False),
        ("2026-08-01", True),
        ("2026-07-31T23:59:59", False),
        ("2026-07-31T23:59:59Z", False),
        ("2026-08-01T00:00:00Z", True),
        ("2026-08-01T01:00:00+02:00", False),  # 2026-07-31T23:00Z
        ("2026-07-31T20:00:00-05:00", True),  # 2026-08-01T01:00Z
        ("2026-07-31 23:59:59.999999", False),
        (1785542399, False),  # epoch seconds, one before 2026-08-01T00:00Z
        (1785542400, True),
        (1785542400.5, True),
        ("1785542399", False),
        ("1785542400.0", True),
        ("20260801", True),  # ISO basic date, not epoch seconds
    ],
)
def test_timestamp_forms(tmp_path, value, late):
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps({"customer_id": "a", "created_at": value, "prompt": "p"}) + "\n")
    eval_ = write_rows(tmp_path / "eval.jsonl", clean_eval())
    issues, notes = check(train, eval_)
    assert notes == []
    assert [(issue.code, issue.split) for issue in issues] == ([("PL208", "train")] if late else [])


def test_cutoff_with_time_and_zone(tmp_path):
    train = write_rows(tmp_path / "train.jsonl", [row(1, "a", "2026-08-01T11:00:00Z"), row(2, "b", "2026-08-01T13:00:00Z")])
    eval_ = write_rows(tmp_path / "eval.jsonl", [row(3, "c", "2026-08-01T12:30:00+00:00")])
    issues, _ = check(train, eval_, cutoff="2026-08-01T14:00:00+02:00")  # 12:00Z
    assert [(issue.code, issue.split) for issue in issues] == [("PL208", "train")]
    assert "row 2 " in issues[0].message and "row 1 " not in issues[0].message


def test_parquet_timestamp_columns(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import datetime as dt

    import pyarrow.parquet as pq

    utc = dt.timezone.utc
    train = tmp_path / "train.parquet"
    pq.write_table(pa.table({
        "customer_id": ["a", "b", "c"],
        "created_at": pa.array([dt.datetime(2026, 7, 1, tzinfo=utc), dt.datetime(2026, 8, 2, tzinfo=utc), None], pa.timestamp("us", tz="UTC")),
        "prompt": ["x", "y", "z"],
    }), str(train))
    eval_ = tmp_path / "eval.parquet"
    pq.write_table(pa.table({
        "customer_id": ["d"],
        "created_at": pa.array([dt.date(2026, 7, 30)], pa.date32()),
        "prompt": ["w"],
    }), str(eval_))
    issues, notes = check(train, eval_)
    assert {(issue.code, issue.split) for issue in issues} == {("PL208", "train"), ("PL208", "eval"), ("PL210", "train")}
    assert "row 2 '2026-08-02" in by_code(issues)["PL208", "train"].message
    missing = by_code(issues)["PL210", "train"]
    assert missing.key == "time_key" and "1 train row of 3 lack 'created_at'" in missing.message and "first: row 3" in missing.message
    assert notes == []


def test_unparseable_and_missing_times_are_findings(tmp_path):
    """Issue 12.3: rows the time boundary cannot be checked on are PL210 (no time) and PL211 (unreadable), not notes."""
    train_rows = clean_train(8)
    train_rows[1]["created_at"] = "yesterday"
    train_rows[2]["created_at"] = True
    train_rows[3]["created_at"] = "2026-13-45"
    train_rows[4]["created_at"] = float("nan")
    del train_rows[5]["created_at"]
    train = write_rows(tmp_path / "train.jsonl", train_rows)
    issues, notes = check(train, write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert notes == []
    assert [(issue.code, issue.split, issue.key) for issue in issues] == [("PL210", "train", "time_key"), ("PL211", "train", "time_key")]
    assert "1 train row of 8 lack 'created_at'" in issues[0].message and "first: row 6" in issues[0].message
    assert "4 train rows have a 'created_at'" in issues[1].message
    assert "row 2 'yesterday', row 3 'true', row 4 '2026-13-45', row 5 'NaN'" in issues[1].message, issues[1].message


def test_invalid_cutoff_turns_the_time_check_off(tmp_path):
    train_rows = clean_train()
    train_rows[0]["created_at"] = "2030-01-01"
    issues, _ = check(write_rows(tmp_path / "train.jsonl", train_rows), write_rows(tmp_path / "eval.jsonl", clean_eval()), cutoff="next month")
    assert issues == []  # PL204 reports the cutoff


# --------------------------------------------------------------------------
# malformed rows: counted, one note per file, never a crash


def test_malformed_jsonl_rows_counted_once_per_file(tmp_path):
    good = [json.dumps(r) for r in clean_train(6)]
    lines = [good[0], "{not json", good[1], "", "[1, 2]", good[2], '{"customer_id": "x"', "   ", good[3], "42", good[4], "\ufffd\x00garbage", good[5]]
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(lines) + "\n", encoding="utf-8")
    eval_ = write_rows(tmp_path / "eval.jsonl", clean_eval())
    issues, notes = check(train, eval_)
    assert issues == []
    assert notes == [DataNote("train", f"{train}: 3 rows skipped as not valid JSON (rows 2, 7, 12); "
                                       "2 rows skipped as not a JSON object (rows 5, 10) (row N is line N of the file)")]


def test_invalid_utf8_and_crlf_and_bom(tmp_path):
    train = tmp_path / "train.jsonl"
    rows_ = [json.dumps(r).encode() for r in clean_train(4)]
    train.write_bytes(b"\xef\xbb\xbf" + rows_[0] + b"\r\n" + b'{"customer_id": "\xff\xfe"}\r\n' + b"\r\n".join(rows_[1:]) + b"\r\n")
    issues, notes = check(train, write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert issues == []
    assert notes == [DataNote("train", f"{train}: 1 row skipped as not valid JSON (row 2) (row N is line N of the file)")]


def test_many_bad_rows_list_the_first_few(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text("oops\n" * 12 + json.dumps(row(1, "a", "2026-01-01")) + "\n")
    _, notes = check(train, write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert notes[0].message == f"{train}: 12 rows skipped as not valid JSON (rows 1, 2, 3, 4, 5, …) (row N is line N of the file)"


def test_missing_group_key_is_pl210(tmp_path, fmt):
    train_rows = clean_train(6)
    train_rows[2]["customer_id"] = None if fmt != "csv" else ""
    train_rows[4]["customer_id"] = ""
    issues, notes = check(write_rows(tmp_path / f"train.{fmt}", train_rows), write_rows(tmp_path / f"eval.{fmt}", clean_eval()))
    assert notes == []
    assert [(issue.code, issue.split, issue.key) for issue in issues] == [("PL210", "train", "group_key")]
    assert "2 train rows of 6 lack 'customer_id' or have it null or empty (first: row 3)" in issues[0].message


def test_absent_column_is_named(tmp_path):
    train = write_rows(tmp_path / "train.csv", [{"customer_id": "a", "created_at": "2026-01-01", "prompt": "p"}])
    eval_ = write_rows(tmp_path / "eval.csv", [{"customer": "b", "created_at": "2026-09-01", "prompt": "q"}])
    issues, notes = check(train, eval_)
    assert notes == []
    assert [(issue.code, issue.split, issue.key) for issue in issues] == [("PL210", "eval", "group_key")]
    assert "the eval file has no 'customer_id' column" in issues[0].message


def test_no_input_field_is_a_note_not_a_finding(tmp_path):
    train = write_rows(tmp_path / "train.jsonl", [{"task": "t1", "customer_id": "a"}, {"task": "t2", "customer_id": "b"}])
    eval_ = write_rows(tmp_path / "eval.jsonl", [{"task": "t1", "customer_id": "c"}])
    issues, notes = check(train, eval_, time_key=None, cutoff=None)
    assert issues == []
    assert [note.split for note in notes] == ["train", "eval"]
    assert "no row has an input field (prompt, input, question, messages), so duplicates across splits were not checked" in notes[0].message


def test_malformed_csv_record(tmp_path):
    train = tmp_path / "train.csv"
    train.write_text('customer_id,created_at,prompt\na,2026-01-01,"p1"\nb,2026-01-02,"bad"quote\nc,2026-01-03,p3\n', encoding="utf-8")
    eval_ = write_rows(tmp_path / "eval.csv", [{"customer_id": "c", "created_at": "2026-09-01", "prompt": "q"}])
    issues, notes = check(train, eval_)
    assert [issue.code for issue in issues] == ["PL207"]
    assert "(train row 3, eval row 1)" in issues[0].message
    assert notes == [DataNote("train", f"{train}: 1 row skipped as malformed CSV (row 2) (row 1 is the first row after the header)")]


def test_csv_rows_are_records_not_lines(tmp_path):
    train = tmp_path / "train.csv"
    train.write_text('customer_id,prompt\na,"line one\nline two"\nb,p2\n', encoding="utf-8")
    eval_ = write_rows(tmp_path / "eval.csv", [{"customer_id": "b", "prompt": "LINE ONE   line two"}])
    issues, _ = check(train, eval_, time_key=None, cutoff=None)
    found = by_code(issues)
    assert "(train row 2, eval row 1)" in found["PL207", "eval"].message
    assert "'line one\\nline two' (train row 1, eval row 1)" in found["PL209", "eval"].message


def test_truncated_gzip_is_a_note(tmp_path):
    train = write_rows(tmp_path / "train.jsonl.gz", clean_train(200))
    train.write_bytes(train.read_bytes()[:-30])
    issues, notes = check(train, write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert issues == []
    assert len(notes) == 1 and "could not be read" in notes[0].message and "data-aware checks skipped" in notes[0].message


def test_corrupt_parquet_is_a_note(tmp_path):
    pytest.importorskip("pyarrow")
    train = tmp_path / "train.parquet"
    train.write_bytes(b"PAR1 this is not parquet")
    issues, notes = check(train, write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert issues == [] and len(notes) == 1 and "could not be read" in notes[0].message


def test_unsupported_format_and_same_file(tmp_path):
    train = write_rows(tmp_path / "train.jsonl", clean_train())
    other = tmp_path / "eval.xlsx"
    other.write_bytes(b"PK")
    assert check(train, other) == ([], [DataNote("eval", f"{other}: not a supported split format (.jsonl, .ndjson, .csv, .parquet, .jsonl.gz, .csv.gz); data-aware checks skipped", incomplete=True)])
    issues, notes = check(train, train)
    assert issues == [] and "same file" in notes[0].message


def test_parquet_without_pyarrow_is_a_note(tmp_path, monkeypatch):
    train = tmp_path / "train.parquet"
    train.write_bytes(b"PAR1")
    monkeypatch.setattr(split_data.check, "_have_pyarrow", lambda: False)
    issues, notes = check(train, write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert issues == []
    assert notes == [DataNote("train", f"{train}: reading Parquet needs the optional extra: pip install 'planlint[parquet]' (pyarrow); data-aware checks skipped", incomplete=True)]


def test_import_is_lean():
    code = "import sys, planlint.services.split_data; sys.exit(1 if 'pyarrow' in sys.modules else 0)"
    env = dict(os.environ, PYTHONPATH=str(Path(split_data.__file__).resolve().parents[2]))
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


# --------------------------------------------------------------------------
# messages: values truncated and escaped, rows never dumped


def test_values_truncated_and_escaped(tmp_path):
    long_value = "\x1b[31m" + "A" * 200 + "\u202e"
    train = write_rows(tmp_path / "train.jsonl", [row(1, long_value, "2026-01-01", "p" * 500 + " tail")])
    eval_ = write_rows(tmp_path / "eval.jsonl", [row(2, long_value, "2026-09-01", "P" * 500 + " TAIL")])
    issues, _ = check(train, eval_)
    found = by_code(issues)
    group = found["PL207", "eval"].message
    assert "'\\x1b[31m" + "A" * 35 + "…'" in group
    assert "\x1b" not in group and "A" * 36 not in group and "\u202e" not in group
    duplicate = found["PL209", "eval"].message
    assert "'" + "p" * 40 + "…'" in duplicate and "p" * 41 not in duplicate
    for message in (group, duplicate):
        assert "SECRET-ANSWER-TEXT" not in message and '"id"' not in message


def test_messages_compared_by_user_turns(tmp_path):
    def chat(user: str, assistant: str) -> dict:
        return {"customer_id": user[:3], "messages": [{"role": "system", "content": "be nice"}, {"role": "user", "content": user}, {"role": "assistant", "content": assistant}]}

    train = write_rows(tmp_path / "train.jsonl", [chat("Refund please", "ok"), chat("Other thing", "no")])
    eval_ = write_rows(tmp_path / "eval.jsonl", [
        {"customer_id": "zz1", "messages": [{"role": "user", "content": [{"type": "text", "text": "REFUND   please"}]}, {"role": "assistant", "content": "different"}]},
        chat("Something new", "ok"),
    ])
    issues, notes = check(train, eval_, group_key=None, time_key=None, cutoff=None)
    assert notes == []
    assert [issue.code for issue in issues] == ["PL209"]
    assert "'Refund please' (train row 1, eval row 1)" in issues[0].message


def test_configured_input_fields(tmp_path):
    train = write_rows(tmp_path / "train.jsonl", [{"question": "Q1", "context": "C1"}, {"question": "Q2", "context": "C2"}])
    eval_ = write_rows(tmp_path / "eval.jsonl", [{"question": "q1", "context": "other"}, {"question": "q2", "context": "c2"}])
    issues, _ = check(train, eval_, group_key=None, time_key=None, cutoff=None, input_fields=["question", "context"])
    assert len(issues) == 1 and issues[0].message.startswith("1 input occurs in both train and eval (1 train row, 1 eval row; compared on fields question, context")
    assert "(train row 2, eval row 2)" in issues[0].message
    issues, _ = check(train, eval_, group_key=None, time_key=None, cutoff=None, input_fields=["question"])
    assert issues[0].message.startswith("2 inputs occur")


# --------------------------------------------------------------------------
# chunking: lines across chunk boundaries keep their numbers


def test_chunk_boundaries_and_overlong_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(_base, "CHUNK_BYTES", 7)
    monkeypatch.setattr(_base, "MAX_LINE_BYTES", 300)
    lines = [json.dumps(row(i, f"c{i}", "2026-01-01")) for i in range(5)]
    lines.insert(2, '{"customer_id": "' + "x" * 1000 + '"}')  # line 3: too long, skipped
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(lines))  # no final newline
    eval_ = write_rows(tmp_path / "eval.jsonl", [row(9, "c4", "2026-09-01")])
    issues, notes = check(train, eval_)
    assert [issue.code for issue in issues] == ["PL207"]
    assert "'c4' (train row 6, eval row 1)" in issues[0].message
    assert notes == [DataNote("train", f"{train}: 1 row longer than 300 bytes (the limit on one record) skipped unread (row 3) (row N is line N of the file)",
                              incomplete=True)]  # a limit was reached: PL006 with --require-data


# --------------------------------------------------------------------------
# cache


def _explode(*args, **kwargs):
    raise AssertionError("the split files were read although the result is cached")


def test_cache_reused_and_invalidated(tmp_path, monkeypatch):
    eval_rows = clean_eval()
    eval_rows[0]["customer_id"] = "cust-2"
    train = write_rows(tmp_path / "train.jsonl", clean_train())
    eval_ = write_rows(tmp_path / "eval.jsonl", eval_rows)
    cache = tmp_path / "cache"
    first = check(train, eval_, cache_dir=cache)
    assert [issue.code for issue in first[0]] == ["PL207"]
    entries = list((cache / "split-data").glob("*.json"))
    assert len(entries) == 1

    monkeypatch.setattr(_scan, "iter_batches", _explode)
    assert check(train, eval_, cache_dir=cache) == first
    monkeypatch.undo()

    # different parameters: a different entry
    calls = []
    real = _scan.iter_batches

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(_scan, "iter_batches", counting)
    assert check(train, eval_, cache_dir=cache, group_key=None)[0] == []
    assert len(calls) == 2

    # changed content: read again, new result
    calls.clear()
    eval_rows[0]["customer_id"] = "brand-new"
    write_rows(eval_, eval_rows)
    assert check(train, eval_, cache_dir=cache) == ([], [])
    assert len(calls) == 2
    assert len(list((cache / "split-data").glob("*.json"))) == 3
    assert not list((cache / "split-data").glob(".tmp-*"))


def test_corrupt_cache_entry_is_ignored(tmp_path):
    train = write_rows(tmp_path / "train.jsonl", clean_train())
    eval_rows = clean_eval()
    eval_rows[0]["customer_id"] = "cust-2"
    eval_ = write_rows(tmp_path / "eval.jsonl", eval_rows)
    cache = tmp_path / "cache"
    first = check(train, eval_, cache_dir=cache)
    (entry,) = (cache / "split-data").glob("*.json")
    for garbage in ("{not json", '{"version": 1, "issues": [[1]], "notes": []}', "[]"):
        entry.write_text(garbage)
        assert check(train, eval_, cache_dir=cache) == first
    assert json.loads(entry.read_text())["version"] == split_data.CACHE_VERSION


def test_unwritable_cache_dir_is_not_an_error(tmp_path):
    train = write_rows(tmp_path / "train.jsonl", clean_train())
    eval_ = write_rows(tmp_path / "eval.jsonl", clean_eval())
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    assert check(train, eval_, cache_dir=blocker) == ([], [])


def test_no_cache_dir_writes_nothing(tmp_path):
    train = write_rows(tmp_path / "train.jsonl", clean_train())
    eval_ = write_rows(tmp_path / "eval.jsonl", clean_eval())
    before = set(tmp_path.rglob("*"))
    check(train, eval_, cache_dir=None)
    assert set(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("chunk", [1, 2, 5, 16, 64])
def test_line_blocks_match_a_plain_split(tmp_path, monkeypatch, chunk):
    import random

    monkeypatch.setattr(_base, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(_base, "MAX_LINE_BYTES", 40)
    rnd = random.Random(chunk)
    for attempt in range(30):
        lines = [rnd.choice(["", "a", "b" * rnd.randrange(1, 41), "X" * rnd.randrange(41, 300)]) for _ in range(rnd.randrange(0, 12))]
        ending = rnd.choice(["", "\n"])
        path = tmp_path / f"f{attempt}.jsonl"
        text = "\n".join(lines) + ending
        path.write_bytes(text.encode())
        got: list = []
        for block in _base.line_blocks(open(path, "rb"), UNLIMITED):
            got.extend([None] if block is None else block.decode().split("\n"))
        reference = text.split("\n")
        if reference[-1] == "":
            reference.pop()  # a final newline ends the last line; it does not start one
        assert got == [None if len(line) > 40 else line for line in reference], text


def test_garbage_files_never_crash(tmp_path):
    import random

    rnd = random.Random(5)
    eval_ = write_rows(tmp_path / "eval.jsonl", clean_eval())
    suffixes = ["jsonl", "csv", "jsonl.gz", "csv.gz"] + (["parquet"] if split_data._have_pyarrow() else [])
    for attempt in range(40):
        suffix = suffixes[attempt % len(suffixes)]
        path = tmp_path / f"train{attempt}.{suffix}"
        blob = bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 400)))
        if attempt % 3 == 0:
            blob = b'{"customer_id": "a", "created_at": ' + blob + b"}\n" + b"[" * 5000 + b"\n" + blob
        if suffix.endswith(".gz") and attempt % 2:
            blob = gzip.compress(blob)
        path.write_bytes(blob)
        issues, notes = check(path, eval_)
        assert all(isinstance(issue, DataFinding) for issue in issues)
        assert all(isinstance(note, DataNote) for note in notes)


def test_deeply_nested_line_is_invalid_json(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text("[" * 100_000 + "\n" + json.dumps(row(1, "a", "2026-01-01")) + "\n")
    issues, notes = check(train, write_rows(tmp_path / "eval.jsonl", clean_eval()))
    assert issues == []
    assert notes == [DataNote("train", f"{train}: 1 row skipped as not valid JSON (row 1) (row N is line N of the file)")]


# --------------------------------------------------------------------------
# worker processes: the larger split cut into pieces gives the same result


def _messy_rows(n: int) -> list[dict]:
    rows_ = []
    for i in range(n):
        data = row(i, f"c{i % 37}", f"2026-0{1 + i % 7}-0{1 + i % 9}", f"Prompt number {i}, \"quoted\", with, commas")
        if i % 11 == 0:
            data["prompt"] = f"multi\nline prompt {i}\r\nsecond line"
        if i % 29 == 0:
            data["answer"] = "long " * 200
        if i % 13 == 0:
            data["created_at"] = "2026-08-0" + str(1 + i % 9)  # late
        if i % 17 == 0:
            data["customer_id"] = ""
        rows_.append(data)
    return rows_


_REAL_CAN_FORK = _file_workers._can_fork


def _allow_workers(monkeypatch) -> None:
    """Let the worker path run here: skip where there is no fork; where only
    daemon threads that earlier tests left behind (their HTTP servers' idle
    handlers) stop the data checks from forking, fork all the same (the
    workers never touch those threads). test_workers_not_used_with_other_threads
    keeps the real test."""
    import multiprocessing
    import threading

    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("worker processes need fork (Linux)")
    if not _REAL_CAN_FORK() and all(thread.daemon for thread in threading.enumerate() if thread is not threading.main_thread()):
        monkeypatch.setattr(_file_workers, "_can_fork", lambda: True)
    if not _file_workers._can_fork():
        pytest.skip("this process runs other threads: the data checks do not fork")


@pytest.fixture
def tiny_pieces(monkeypatch):
    """Force the worker path even for small files, with tiny pieces."""
    _allow_workers(monkeypatch)
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "3")
    monkeypatch.setattr(_file_workers, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(_file_workers, "UNIT_BYTES", 300)
    monkeypatch.setattr(_base, "CHUNK_BYTES", 256)


@pytest.mark.parametrize("suffix", ["jsonl", "jsonl.gz", "csv", "csv.gz"])
def test_workers_match_a_single_process(tmp_path, monkeypatch, suffix):
    train_rows = _messy_rows(400)
    eval_rows = [row(1000 + i, f"c{i * 5}" if i % 4 == 0 else f"e{i}", "2026-09-01" if i % 6 else "2026-07-01", f'PROMPT number {i * 9},  "quoted", WITH, commas' if i % 3 == 0 else f"eval {i}") for i in range(40)]
    train = write_rows(tmp_path / f"train.{suffix}", train_rows)
    if suffix.startswith("jsonl"):  # blank and unreadable lines too
        text = gzip.decompress(train.read_bytes()).decode() if suffix.endswith(".gz") else train.read_text()
        text = text.replace('"id": "r50"', '"id": r50', 1).replace("\n", "\n\n\n", 30) + "[1]\n\n" + json.dumps(row(999, "c0", "2026-01-01"))
        train.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    eval_ = write_rows(tmp_path / f"eval.{suffix}", eval_rows)
    monkeypatch.setattr(_base, "MAX_LINE_BYTES", 600)  # the long multi-line prompts are skipped in JSONL
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
    trace: dict = {}
    expected = check(train, eval_, trace=trace)
    assert trace["mode"] == "sequential"
    assert {issue.code for issue in expected[0]} == {"PL207", "PL208", "PL209", "PL210"}
    assert "lack 'customer_id'" in next(issue.message for issue in expected[0] if issue.code == "PL210")
    if suffix.startswith("jsonl"):
        train_note = next(note.message for note in expected[1] if note.split == "train")
        assert "1 row skipped as not valid JSON (row " in train_note
        assert "14 rows longer than 600 bytes (the limit on one record) skipped unread (rows 1, " in train_note
        assert "1 row skipped as not a JSON object" in train_note

    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "3")
    monkeypatch.setattr(_file_workers, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(_file_workers, "UNIT_BYTES", 300)
    monkeypatch.setattr(_base, "CHUNK_BYTES", 256)
    _allow_workers(monkeypatch)
    assert check(train, eval_, trace=trace) == expected
    assert trace["mode"] == "parallel", trace
    assert len(trace["worker_peak_kb"]) == 3
    monkeypatch.setattr(_index, "TABLE_FROM_ROWS", 0)  # the smaller split's inputs in an InputTable
    assert check(train, eval_) == expected


def test_stray_csv_quote_falls_back_to_one_process(tmp_path, tiny_pieces, monkeypatch):
    # a quote inside an unquoted field is literal for the csv module, so quote
    # parity cannot find record boundaries after it: the file is read whole
    lines = ["customer_id,created_at,prompt"]
    for i in range(200):
        prompt = f'he said 5" tall {i}' if i == 3 else (f'"two\nlines {i}"' if i % 7 == 0 else f"plain {i}")
        lines.append(f"c{i},2026-01-01,{prompt}")
    train = tmp_path / "train.csv"
    train.write_text("\n".join(lines) + "\n")
    eval_ = write_rows(tmp_path / "eval.csv", [{"customer_id": "c150", "created_at": "2026-09-01", "prompt": "TWO LINES 147"}])
    trace: dict = {}
    issues, notes = check(train, eval_, trace=trace)
    assert trace["fallback"], trace
    found = by_code(issues)
    assert "'c150' (train row 151, eval row 1)" in found["PL207", "eval"].message
    assert "(train row 148, eval row 1)" in found["PL209", "eval"].message
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
    assert check(train, eval_) == (issues, notes)


def test_workers_not_used_with_other_threads(tmp_path, tiny_pieces, monkeypatch):
    import threading

    monkeypatch.setattr(_file_workers, "_can_fork", _REAL_CAN_FORK)

    train = write_rows(tmp_path / "train.jsonl", clean_train(100))
    eval_ = write_rows(tmp_path / "eval.jsonl", clean_eval())
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        trace: dict = {}
        assert check(train, eval_, trace=trace) == ([], [])
        assert trace["mode"] == "sequential"
    finally:
        stop.set()
        thread.join()


def test_input_table_agrees_with_a_dict():
    """The smaller split's compact digest table answers as a dict would: codes that
    share their low bits (table slot) or filter bits, negative codes, growth."""
    import random
    from array import array

    from planlint.services.split_data._index import InputTable

    rnd = random.Random(7)
    codes = [rnd.getrandbits(64) - (1 << 63) for _ in range(3000)]
    codes += [code ^ (1 << 40) for code in codes[:500]]  # same slot and filter index as another
    codes += [(code & ~0xFFFF) | 5 for code in codes[:200]]  # crowd one run of slots
    codes += [0, -1, 1, (1 << 63) - 1, -(1 << 63)]
    codes += codes[:100] + codes[50:60]
    reference, counts = {}, {}
    for row, code in enumerate(codes, start=1):
        if code in reference:
            counts[code] = counts.get(code, 1) + 1
        reference.setdefault(code, row)
    got_counts = {}
    table = InputTable.build(array("q", codes), array("q", range(1, len(codes) + 1)), got_counts)
    assert got_counts == counts
    assert len(table) == len(reference) and bool(table)
    for code, row in reference.items():
        assert code in table and table[code] == row
    for _ in range(5000):
        code = rnd.getrandbits(64) - (1 << 63)
        assert (code in table) is (code in reference)
    absent = next(code for code in range(2, 100) if code not in reference)
    with pytest.raises(KeyError):
        table[absent]
    assert not InputTable() and 5 not in InputTable()


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_batch_fast_paths_match_the_row_loops(tmp_path, monkeypatch, suffix):
    """The per-batch fast paths (all strings, all ISO times of one kind, all ASCII
    inputs) give what the row-by-row loops give, also on batches that mix in every
    case they do not take: naive, aware and epoch times, empty and missing values,
    numbers as group values, non-ASCII and repeated inputs."""
    if suffix == "parquet":
        pytest.importorskip("pyarrow")
    times = ["2026-07-31T23:59:59Z", "2026-08-01", "2026-08-01T00:00:00+02:00", "1785542400", "", "soon", "2026-09-01T10:00:00"]
    prompts = ["Refund please", "  REFUND   please ", "Ｒｅｆｕｎｄ ＰＬＥＡＳＥ", "", "Straße", "STRASSE", "ok"]

    def rows_(n, prefix, pure):
        out = []
        for i in range(n):
            data = {"id": f"{prefix}{i}", "customer_id": f"c{i % 23}", "created_at": "2026-07-01T00:00:00Z" if prefix == "t" else "2026-09-01T00:00:00Z",
                    "prompt": f"{prefix} prompt {i}"}
            if not pure and i % 5 == 0:
                data["created_at"] = times[i // 5 % len(times)]
                data["prompt"] = prompts[i // 5 % len(prompts)]
                data["customer_id"] = ["", "c3", 7 if suffix == "jsonl" else "7", "c5"][i // 5 % 4]
            out.append(data)
        return out

    for pure in (True, False):  # batches that all take the fast paths, and batches that cannot
        train = write_rows(tmp_path / f"train{pure}.{suffix}", rows_(300, "t", pure) + rows_(20, "e", pure))
        eval_ = write_rows(tmp_path / f"eval{pure}.{suffix}", rows_(60, "e", pure) + rows_(5, "t", pure))
        monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
        for table_from in (1 << 18, 0):
            monkeypatch.setattr(_index, "TABLE_FROM_ROWS", table_from)
            fast = check(train, eval_)
            with monkeypatch.context() as slow:
                slow.setattr(_scan, "_all_nonempty_strings", lambda values: False)
                slow.setattr(_scan, "_input_texts", lambda values, inputs: [_scan._input_text(value, inputs) for value in values])
                slow.setattr(_scan, "_time_loop", _scan._time_rows)
                assert check(train, eval_) == fast
            codes = {issue.code for issue in fast[0]}
            assert {"PL207", "PL208", "PL209"} <= codes
            assert ("PL210" in codes and "PL211" in codes) is not pure


def test_ascii_inputs_normalized_as_normalize_text():
    """The batch path for ASCII inputs collapses whitespace exactly as normalize_text()."""
    from planlint.services.split_data._values import normalize_text

    values = ["", " ", "a", "A b", "a  b", " a", "a ", "a\tb", "a\nb", "a\x0bb", "a\x0cb", "a\rb", "a\x1cb", "a\x1fb",
              "a\x00b", "a\x7fb", "\ta", "MiXeD Case", "x" * 50 + "  " + "y", "  lead and trail  ", "a \t b"]
    assert _scan._input_texts(values, None) == [normalize_text(value) for value in values]


def test_content_hash_of_a_large_file_in_halves(tmp_path, monkeypatch):
    """A large file's cache identity is hashed in two halves at once: it is a
    function of every byte, and no thread is left running (workers fork after)."""
    import hashlib
    import threading

    data = bytes(range(256)) * 4099 + b"tail"
    path = tmp_path / "big.jsonl"
    path.write_bytes(data)
    assert schemes.content_sha256(path) == hashlib.sha256(data).hexdigest()  # small: the file's SHA-256
    monkeypatch.setattr(schemes, "HASH_SPLIT_BYTES", 1000)
    half = len(data) // 2
    expected = "halves:" + hashlib.sha256(hashlib.sha256(data[:half]).digest() + hashlib.sha256(data[half:]).digest()).hexdigest()
    assert schemes.content_sha256(path) == expected
    assert threading.active_count() == 1 or all(thread.name != "planlint-hash" for thread in threading.enumerate())
    for position in (0, half - 1, half, len(data) - 1):  # a change anywhere changes it
        changed = bytearray(data)
        changed[position] ^= 1
        path.write_bytes(bytes(changed))
        assert schemes.content_sha256(path) != expected
    path.unlink()
    with pytest.raises(OSError):
        schemes.content_sha256(path)
