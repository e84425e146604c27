"""Split files cannot hang or bloat the data checks (issue 10 item 10).

The pull request writes the split files. Two attacks that worked:

* a 345-byte Parquet file whose footer claims 2^60 rows ran on past
  `data.time_budget` (the loop over the claimed rows never looked at the
  deadline);
* a small gzip CSV holding one record with a field of 60 MiB took gigabytes
  (csv.reader takes a line whole, and keeps 4 bytes per character).

Every read loop now checks the deadline, and one record (a JSON Lines line, a
CSV record, the checked columns of a Parquet row) is capped at
`MAX_RECORD_BYTES`. Reaching a limit is a note, or PL006 with
--require-data: never a silent pass, and never cached as a result.

Budgets are proven with an injected clock that counts its calls (the work
done), memory with the child's own peak RSS; the only timing is a generous
`timeout=` that catches a hang.
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import REFERENCE_PLAN, ROOT, run_process, write
from planlint.rules.leakage_findings import findings
from planlint.services import split_data
from planlint.services.split_data import _base

ROW = '{"customer_id": "%s", "created_at": "%s", "prompt": "p %s"}\n'
MiB = 1 << 20
HANG = 120  # seconds: only catches a hang; the budgets themselves are counted


def check_split_data(*args, **kwargs):
    """The data check as the rules see it: its facts worded as findings and notes."""
    return findings(split_data.check_split_data(*args, **kwargs))


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def huge_footer_parquet(path: Path, rows: int = 2 ** 60) -> Path:
    """A Parquet file with one (empty) string column whose footer claims `rows` rows."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"other": pa.array([], pa.string())}), path)
    data = path.read_bytes()
    length = struct.unpack("<I", data[-8:-4])[0]
    footer = data[-8 - length:-8]
    # FileMetaData field 3 (num_rows, i64, thrift compact: header 0x16, zigzag varint) right before
    # field 4 (row_groups, a list of structs: 0x19 0x1c).
    marker = b"\x16\x00\x19\x1c"
    assert footer.count(marker) == 1
    forged = footer.replace(marker, b"\x16" + _varint(rows << 1) + b"\x19\x1c")
    path.write_bytes(data[:-8 - length] + forged + struct.pack("<I", len(forged)) + b"PAR1")
    assert pq.ParquetFile(path).metadata.num_rows == rows
    return path


class CountingClock:
    """A clock that advances one second per reading: `calls` is the number of deadline checks."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return float(self.calls)


def _check(train: Path, eval_: Path, **kwargs):
    return check_split_data(train, eval_, group_key="customer_id", time_key=None, cutoff=None,
                            input_fields=None, cache_dir=None, **kwargs)


def _without_hanging(work):
    """work(), in a thread that the test stops waiting for after HANG seconds (a regression hangs forever)."""
    import threading

    box: list = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(HANG)
    assert not thread.is_alive(), "the data check did not stop"
    return box[0]


def _project(tmp_path: Path, train: str, eval_: str = "data/eval.jsonl") -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    if eval_ == "data/eval.jsonl":
        write(repo / eval_, ROW % ("c-1", "2026-09-01", 1))
    plan = REFERENCE_PLAN.read_text(encoding="utf-8")
    plan = plan.replace("path: data/retail/train.jsonl", f"path: {train}").replace("path: data/retail/eval.jsonl", f"path: {eval_}")
    write(repo / "plans" / "a.yaml", plan)
    return repo


# --------------------------------------------------------------------------- the time budget in every loop


def test_attack_a_parquet_footer_claiming_2_60_rows_stops_at_the_budget(tmp_path, monkeypatch):
    train = huge_footer_parquet(tmp_path / "train.parquet")
    assert train.stat().st_size < 512
    eval_ = write(tmp_path / "eval.jsonl", ROW % ("c-1", "2026-09-01", 1))
    clock = CountingClock()
    issues, notes = _without_hanging(lambda: _check(train, eval_, time_budget=40, clock=clock))
    assert issues == []
    assert [n.incomplete for n in notes] == [True]
    assert notes[0].message == "the data checks stopped after 40s (limit data.time_budget) while reading the train split; data-aware checks skipped"
    assert notes[0].split == "train"
    # One reading to set the deadline, one per batch of 8,192 claimed rows until it passed:
    # the work is bounded by the budget, not by the 2^60 rows.
    assert 40 <= clock.calls <= 43, clock.calls


@pytest.mark.parametrize("suffix", ["jsonl", "jsonl.gz", "csv", "csv.gz"])
def test_the_deadline_is_checked_within_a_chunk(tmp_path, monkeypatch, suffix):
    """A 4 MiB chunk of short JSON lines is millions of rows: the deadline is looked at every 4,096 of them.
    CSV text is handed to the parser line by line, and the deadline looked at every CHUNK_BYTES of it
    (64 KiB here, so that these 6 MB are many chunks)."""
    if suffix.startswith("csv"):
        monkeypatch.setattr(_base, "CHUNK_BYTES", 1 << 16)
    lines = 200_000
    if suffix.startswith("jsonl"):
        text = "".join(ROW % (f"c{i}", "2026-01-01", i) for i in range(lines))
    else:
        text = "customer_id,created_at,prompt\n" + "".join(f"c{i},2026-01-01,p {i}\n" for i in range(lines))
    data = gzip.compress(text.encode(), 1) if suffix.endswith(".gz") else text.encode()
    train = tmp_path / f"train.{suffix}"
    train.write_bytes(data)
    eval_ = write(tmp_path / "eval.jsonl", ROW % ("c-1", "2026-09-01", 1))
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
    clock = CountingClock()
    _, notes = _check(train, eval_, time_budget=5, clock=clock)
    assert [n.incomplete for n in notes] == [True], notes
    assert clock.calls <= 7  # stopped at the 5th check, i.e. within ~20,000 of the 200,000 rows


def _eval_larger_than_train(repo: Path) -> None:
    """A one-row train split and a 50,000-row eval split: train is read (whole) first, then eval."""
    write(repo / "data" / "train.jsonl", ROW % ("c-1", "2026-01-01", 1))
    write(repo / "data" / "eval.jsonl", "".join(ROW % (f"e{i}", "2026-09-01", i) for i in range(50_000)))


def test_the_budget_note_names_the_split_being_read_when_it_ran_out(tmp_path, monkeypatch):
    """The budget runs out while reading the (larger) eval split: the note is about eval, and says
    where the checks stopped, not why (a stalled server and a large split look alike)."""
    _eval_larger_than_train(tmp_path)
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
    clock = CountingClock()
    issues, notes = _check(tmp_path / "data" / "train.jsonl", tmp_path / "data" / "eval.jsonl", time_budget=4, clock=clock)
    assert issues == [] and [(n.split, n.incomplete) for n in notes] == [("eval", True)], notes
    assert notes[0].message == "the data checks stopped after 4s (limit data.time_budget) while reading the eval split; data-aware checks skipped"


def test_require_data_puts_the_budget_pl006_at_the_split_being_read(planlint, tmp_path, monkeypatch):
    """--require-data: the PL006 is at splits.eval.path when the budget ran out reading eval (it was at train)."""
    import functools

    repo = _project(tmp_path, "data/train.jsonl")
    _eval_larger_than_train(repo)
    write(repo / ".planlint.yaml", "data: {time_budget: 4}\nlimits: {time_budget: 3600}\n")
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
    monkeypatch.setattr(split_data, "check_split_data", functools.partial(split_data.check_split_data, clock=CountingClock()))
    result = planlint("--no-cache", "--require-data", "--format", "json", "plans", cwd=repo)
    found = [f for f in result.json["findings"] if f["code"] == "PL006"]
    assert result.status == 1 and len(found) == 1, result
    eval_line = next(n for n, line in enumerate((repo / "plans" / "a.yaml").read_text().splitlines(), 1) if "path: data/eval.jsonl" in line)
    assert found[0]["line"] == eval_line, found
    assert found[0]["message"] == ("the data checks stopped after 4s (limit data.time_budget) while reading the eval split; "
                                   "data-aware checks skipped, and data checks are required (--require-data)"), found


@pytest.mark.parametrize("require", [False, True])
def test_attack_the_huge_parquet_footer_through_the_cli(require, tmp_path):
    """End to end: the real CLI, real clock, data.time_budget: 1. No hang; a note, or PL006."""
    repo = _project(tmp_path, "data/train.parquet")
    huge_footer_parquet(repo / "data" / "train.parquet")
    write(repo / ".planlint.yaml", "data: {time_budget: 1}\n")
    args = ["--require-data"] if require else []
    result = run_process(*args, "--format", "github", "plans", cwd=repo, timeout=HANG)
    stopped = "the data checks stopped after 1s (limit data.time_budget)"
    if require:
        assert result.status == 1 and "title=PL006" in result.out and stopped in result.out, result
    else:
        assert result.status == 0, result
        notice = next(line for line in result.out.splitlines() if stopped in line)  # said in the output format itself
        # at the split being read when the budget ran out (the 2^60-row train file)
        assert notice.startswith("::notice title=planlint::plans/a.yaml: splits.train.path: "), result
        assert f"{stopped} while reading the train split; data-aware checks skipped" in notice, result


# --------------------------------------------------------------------------- one record's size


def _peak_rss_of_check(train: Path, eval_: Path) -> tuple[int, list]:
    """Run one data check in a fresh interpreter; (its peak RSS in KiB, the notes).

    VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent (here pytest) across exec."""
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from planlint.rules.leakage_findings import findings\n"
        "from planlint.services.split_data import check_split_data\n"
        "issues, notes = findings(check_split_data(Path(sys.argv[1]), Path(sys.argv[2]), group_key='customer_id', time_key=None,\n"
        "                                          cutoff=None, input_fields=None, cache_dir=None))\n"
        "peak = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
        "print(json.dumps({'peak': peak,\n"
        "                  'issues': [i.code for i in issues],\n"
        "                  'notes': [[n.split, n.message, n.incomplete] for n in notes]}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(train), str(eval_)], capture_output=True, text=True, timeout=HANG,
                          env={"PYTHONPATH": str(ROOT / "src"), "PLANLINT_DATA_WORKERS": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    return out["peak"], out["notes"]


def _gzip_record(path: Path, header: bytes, field_bytes: int, fields: int, tail: bytes) -> Path:
    """A gzip CSV: the header, then one record of `fields` fields of `field_bytes` 'a's, then `tail`."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"a" * MiB
    parts = [compressor.compress(header)]
    for index in range(fields):
        for _ in range(field_bytes // MiB):
            parts.append(compressor.compress(block))
        parts.append(compressor.compress(b"," if index < fields - 1 else b"\n"))
    parts.append(compressor.compress(tail))
    parts.append(compressor.flush())
    path.write_bytes(b"".join(parts))
    return path


def test_attack_a_gzip_csv_record_of_60_mib_fields_is_capped(tmp_path):
    """One record of three 60 MiB fields in a gzip file of about 0.5 MB: reading stops at the cap."""
    train = _gzip_record(tmp_path / "train.csv.gz", b"customer_id,created_at,prompt\n", 60 * MiB, 3,
                         b"c-1,2026-01-01,p\n")
    assert train.stat().st_size < 1 * MiB
    eval_ = write(tmp_path / "eval.jsonl", ROW % ("c-1", "2026-09-01", 1))
    peak_kib, notes = _peak_rss_of_check(train, eval_)
    assert notes == [["train", f"{train}: record 1 is longer than 16 MiB (the limit on one record): the data checks stopped there; "
                               "data-aware checks skipped", True]]
    # Without the cap, csv.reader held the 180 MiB line, then a field buffer of 4 bytes per character.
    assert peak_kib < 160 * 1024, f"peak RSS {peak_kib} KiB"


def test_the_csv_cap_counts_a_quoted_field_across_lines(tmp_path, monkeypatch):
    """Short lines do not get around the cap: a quoted field spanning many lines is one record."""
    monkeypatch.setattr(_base, "MAX_RECORD_BYTES", 1000)
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
    field = "\n".join(["x" * 50] * 40)  # 2,040 characters in 40 lines
    train = write(tmp_path / "train.csv", f'customer_id,created_at,prompt\nc-2,2026-01-01,ok\nc-3,2026-01-01,"{field}"\nc-1,2026-01-01,p\n')
    eval_ = write(tmp_path / "eval.jsonl", ROW % ("c-1", "2026-09-01", 1))
    issues, notes = _check(train, eval_)
    assert issues == [] and len(notes) == 1 and notes[0].incomplete and notes[0].split == "train"
    assert "record 2 is longer than 1000 bytes (the limit on one record)" in notes[0].message
    monkeypatch.setattr(_base, "MAX_RECORD_BYTES", 4000)  # under the cap: read, and the leak found
    issues, notes = _check(train, eval_)
    assert [i.code for i in issues] == ["PL207"] and notes == []


def test_a_parquet_row_over_the_cap_stops_the_checks(tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(_base, "MAX_RECORD_BYTES", 5000)
    chat = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    table = pa.table({
        "customer_id": ["c-2", "c-3", "c-1"],
        "messages": pa.array([[{"role": "user", "content": "hi"}],
                              [{"role": "user", "content": "y" * 3000}, {"role": "user", "content": "z" * 3000}],
                              None], chat),
    })
    train = tmp_path / "train.parquet"
    pq.write_table(table, train)
    eval_ = write(tmp_path / "eval.jsonl", ROW % ("c-1", "2026-09-01", 1))
    issues, notes = _check(train, eval_)
    assert issues == [] and [(n.split, n.incomplete) for n in notes] == [("train", True)]
    assert "row 2 is longer than 5000 bytes (the limit on one record)" in notes[0].message
    monkeypatch.setattr(_base, "MAX_RECORD_BYTES", 7000)
    issues, _ = _check(train, eval_)
    assert [i.code for i in issues] == ["PL207"]


@pytest.mark.parametrize("require", [False, True])
def test_attack_an_over_long_json_line_is_never_a_silent_pass(require, tmp_path):
    """A JSON Lines line over the cap is skipped unread (the rest is still checked), and said: a note, or PL006
    with --require-data at that split's path. Neither is cached as a result: the second run says it again."""
    repo = _project(tmp_path, "data/train.jsonl.gz")
    with gzip.open(repo / "data" / "train.jsonl.gz", "wb", compresslevel=6) as fh:
        fh.write(b'{"customer_id": "' + b"x" * (17 * MiB) + b'"}\n')
        fh.write((ROW % ("c-1", "2026-01-01", 2)).encode())  # still checked: a leak
    skipped = "1 row longer than 16 MiB (the limit on one record) skipped unread (row 1)"
    for _ in range(2):
        if require:
            result = run_process("--require-data", "--format", "json", "plans", cwd=repo, timeout=HANG)
            assert result.status == 1, result
            assert sorted(f["code"] for f in result.json["findings"]) == ["PL006", "PL207"], result
            pl006 = next(f for f in result.json["findings"] if f["code"] == "PL006")
            assert skipped in pl006["message"] and pl006["yaml_path"] == "splits.train.path"
        else:
            result = run_process("plans", cwd=repo, timeout=HANG)
            assert result.status == 1 and "PL207" in result.out and "PL006" not in result.out, result
            assert "planlint: note: plans/a.yaml: splits.train.path: " in result.err and f"train.jsonl.gz: {skipped}" in result.err, result
