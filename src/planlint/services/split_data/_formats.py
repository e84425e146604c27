"""Split-file readers: JSON Lines and CSV (standard library), Parquet
(pyarrow, imported lazily), and gzip-compressed JSON Lines and CSV.

A reader turns a *unit* of a file into *batches*: four parallel lists
`(rows, groups, times, inputs)` holding, for each well-formed data row, its
1-based row number and the raw values of the group key, the time key and the
input field(s) (None where the row has no such value, or a check is off).
Rows that cannot be read are counted in a `FileReport`, never raised.

A unit is the whole file (`FILE`), or, when the larger split is read by
several worker processes, one piece of it that starts and ends on a row
boundary: `("range", start, end)` byte offsets of a plain file, or
`("bytes", data)` already decompressed, or `SKIP` (one over-long JSON line).
Row numbers inside a piece count from 1; the caller adds the rows before it.
Only a bounded amount is held at once: one chunk of `CHUNK_BYTES`, one CSV
batch, or one Parquet record batch.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import json.scanner
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, List, Optional, Tuple

from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS

#: How much of a JSON Lines file is read, decoded and parsed at a time.
CHUNK_BYTES = 4 << 20
#: A JSON Lines line longer than this is counted as unreadable and skipped
#: without being held in memory.
MAX_LINE_BYTES = 64 << 20
#: Largest CSV field (the csv module's limit is raised to this while reading).
MAX_FIELD_CHARS = 64 << 20
#: Rows per yielded batch for CSV.
BATCH_ROWS = 65536
#: Rows per Parquet record batch: pyarrow's decoding buffers grow with it
#: (65536 rows cost ~70 MB more peak memory than 8192, for no speed gain).
PARQUET_BATCH_ROWS = 8192
#: How many row numbers (and values) of each kind are kept for messages.
SAMPLE = 5

#: When the data checks under way must stop (a CLOCK() value), or None.
#: Set by check_split_data for each plan; forked workers inherit it.
DEADLINE: Optional[float] = None

#: The clock DEADLINE is read against: time.monotonic, or the one a caller
#: of check_split_data injects (tests prove the budget without real time).
CLOCK: Callable[[], float] = time.monotonic


class OverBudget(Exception):
    """The data checks ran past data.time_budget (a 1 MiB gzip file can hold 1 GiB of lines)."""


def check_deadline() -> None:
    if DEADLINE is not None and CLOCK() > DEADLINE:
        raise OverBudget()

Batch = Tuple[List[int], List[Any], List[Any], List[Any]]

FILE = ("file",)
SKIP = ("skip",)

SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json-lines": "jsonl",
    ".jsonlines": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


class UnsupportedFormat(Exception):
    pass


class MissingExtra(Exception):
    pass


class Unsplittable(Exception):
    """The file cannot be cut into independent pieces; read it whole."""


def detect_format(path: Path) -> tuple[str, bool]:
    """(format, gzipped) from the file name: `.jsonl` `.ndjson` `.json-lines`
    `.csv` `.parquet`, the first two optionally followed by `.gz`."""
    name = path.name.lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    for suffix, fmt in SUFFIXES.items():
        if name.endswith(suffix):
            if gz and fmt == "parquet":
                break
            return fmt, gz
    raise UnsupportedFormat(path.name)


def row_hint(fmt: str, plural: bool = False) -> str:
    """What "row N" means for a format, for messages."""
    if fmt == "jsonl":
        return "row N is line N of each file" if plural else "row N is line N of the file"
    if fmt == "csv":
        return "row 1 is the first row after the header"
    return "row 1 is the first row"


class Sample:
    """A count with the first few row numbers (and optionally values)."""

    __slots__ = ("count", "rows", "values")

    def __init__(self) -> None:
        self.count = 0
        self.rows: list[int] = []
        self.values: list[Any] = []

    def add(self, row: int, value: Any = None) -> None:
        self.count += 1
        if len(self.rows) < SAMPLE:
            self.rows.append(row)
            self.values.append(value)

    def merge(self, other: "Sample", offset: int) -> None:
        """Append a later piece's sample, its rows shifted by `offset`."""
        self.count += other.count
        room = SAMPLE - len(self.rows)
        if room > 0:
            self.rows.extend(row + offset for row in other.rows[:room])
            self.values.extend(other.values[:room])

    def __getstate__(self):
        return (self.count, self.rows, self.values)

    def __setstate__(self, state) -> None:
        self.count, self.rows, self.values = state


KINDS = ("invalid", "not_object", "no_group", "no_time", "bad_time", "no_input", "time_leaks")


class FileReport:
    """What was read from one split file (or one piece of it)."""

    def __init__(self) -> None:
        self.lines = 0  # rows consumed: JSONL lines, CSV records, Parquet rows
        self.rows = 0  # well-formed data rows
        self.invalid = Sample()  # not valid JSON / not UTF-8 / malformed CSV record
        self.not_object = Sample()  # valid JSON but not an object
        self.no_group = Sample()
        self.no_time = Sample()
        self.bad_time = Sample()
        self.no_input = Sample()
        self.time_leaks = Sample()  # train: at/after the cutoff; eval: before it
        self.input_field: str | None = None  # the column used (CSV, Parquet)
        self.absent_columns: list[str] = []  # CSV header / Parquet schema lacks them
        self.ended_in_quotes = False  # a CSV piece ended inside a quoted field

    def merge(self, other: "FileReport", offset: int) -> None:
        self.lines += other.lines
        self.rows += other.rows
        for kind in KINDS:
            getattr(self, kind).merge(getattr(other, kind), offset)


class Fields:
    """What to extract from each row."""

    def __init__(self, group_key: str | None, time_key: str | None, inputs: tuple[str, ...] | None) -> None:
        self.group_key = group_key
        self.time_key = time_key
        self.inputs = inputs  # None: DEFAULT_INPUT_FIELDS, the first present per row


class CsvLayout:
    """Column positions from a CSV header."""

    def __init__(self, header: list[str], fields: Fields) -> None:
        index: dict[str, int] = {}
        for position, name in enumerate(header):
            index.setdefault(name, position)
        for position, name in enumerate(header):
            index.setdefault(name.strip(), position)
        self.absent: list[str] = []
        self.input_field: str | None = None

        def column(name: str | None) -> int:
            if name is None:
                return -1
            if name not in index:
                self.absent.append(name)
                return -1
            return index[name]

        self.group = column(fields.group_key)
        self.time = column(fields.time_key)
        self.inputs: list[int] = []
        if fields.inputs is None:
            for name in DEFAULT_INPUT_FIELDS:
                if name in index:
                    self.input_field = name
                    self.inputs = [index[name]]
                    break
        else:
            self.inputs = [column(name) for name in fields.inputs]
            if all(position < 0 for position in self.inputs):
                self.inputs = []
        self.width = 1 + max([self.group, self.time, *self.inputs])


def iter_batches(path: Path, fmt: str, gz: bool, fields: Fields, report: FileReport, unit: tuple = FILE, layout: CsvLayout | None = None) -> Iterator[Batch]:
    """Batches of one unit of a file; `report` counts what was read."""
    if unit == SKIP:
        report.lines += 1
        report.invalid.add(report.lines)
        return iter(())
    if fmt == "jsonl":
        return _jsonl_batches(_jsonl_blocks(path, gz, unit), fields, report)
    if fmt == "csv":
        return _csv_unit_batches(path, gz, fields, report, unit, layout)
    return _parquet_batches(path, fields, report)


# --------------------------------------------------------------------------
# splitting a file into pieces for worker processes


def _opener(path: Path, gz: bool):
    return gzip.open(path, "rb") if gz else open(path, "rb")


def plan_units(path: Path, fmt: str, gz: bool, fields: Fields, unit_bytes: int) -> tuple[CsvLayout | None, Iterator[tuple]]:
    """Cut a JSON Lines or CSV file into pieces that start on a row boundary.

    Plain files become byte ranges (workers read them themselves); gzip files
    are decompressed here and sent as bytes. A CSV file is cut only at a
    newline preceded by an even number of quote characters; a piece that still
    ends inside a quoted field (a stray quote in an unquoted field) is reported
    by its reader (`FileReport.ended_in_quotes`), and the caller then reads the
    file whole. Raises Unsplittable when no safe cut is in sight.
    """
    if fmt == "jsonl":
        if gz:
            return None, ((SKIP if block is None else ("bytes", block)) for block in _line_blocks(_opener(path, True)))
        return None, _jsonl_ranges(path, unit_bytes)
    handle = _opener(path, gz)
    try:
        head = handle.read(CHUNK_BYTES)
        end = _even_newline(head, 0, forward=True)
        if end < 0:
            raise Unsplittable("CSV header not found in the first chunk")
        text = head[: end + 1].decode("utf-8-sig", "replace")
        records = list(csv.reader(io.StringIO(text, newline=""), strict=True))
        if len(records) != 1:
            raise Unsplittable("CSV header spans records")
    except (csv.Error, Exception):
        handle.close()
        raise Unsplittable("CSV header not readable") from None
    layout = CsvLayout(records[0], fields)
    return layout, _csv_pieces(handle, head, end + 1, unit_bytes, keep=gz)


def _jsonl_ranges(path: Path, unit_bytes: int) -> Iterator[tuple]:
    size = path.stat().st_size
    with open(path, "rb") as handle:
        start = 0
        while start < size:
            end = start + unit_bytes
            if end >= size:
                yield ("range", start, size)
                return
            handle.seek(end)
            while True:
                check_deadline()
                piece = handle.read(1 << 16)
                if not piece:
                    end = size
                    break
                cut = piece.find(b"\n")
                if cut >= 0:
                    end += cut + 1
                    break
                end += len(piece)
            yield ("range", start, end)
            start = end


def _even_newline(data: bytes, quotes_before: int, forward: bool = False, start: int = 0) -> int:
    """Index of the last (or, `forward`, the first at or after `start`)
    newline in `data` preceded by an even number of quote characters,
    counting `quotes_before` seen before `data`; -1 if there is none."""
    if forward:
        position, seen = start, quotes_before + data.count(b'"', 0, start)
        while True:
            newline = data.find(b"\n", position)
            if newline < 0:
                return -1
            seen += data.count(b'"', position, newline)
            if seen % 2 == 0:
                return newline
            position = newline + 1
    total = quotes_before + data.count(b'"')
    cut, after = len(data), 0
    while True:
        newline = data.rfind(b"\n", 0, cut)
        if newline < 0:
            return -1
        after += data.count(b'"', newline + 1, cut)
        if (total - after) % 2 == 0:
            return newline
        cut = newline


def _csv_pieces(handle, head: bytes, data_start: int, unit_bytes: int, keep: bool) -> Iterator[tuple]:
    """Pieces of about `unit_bytes` of CSV records after the header: byte
    ranges, or the bytes themselves when `keep` (gzip). Reads 1 MiB at a time;
    holds at most one piece (when `keep`)."""
    if keep:
        unit_bytes = min(unit_bytes, CHUNK_BYTES)
    limit = max(unit_bytes * 4, MAX_LINE_BYTES)
    with handle:
        pending: list[bytes] = []
        pending_len = 0
        quotes = 0  # quote characters in the pending bytes
        start = data_start
        block = head[data_start:]
        while True:
            if not block:
                check_deadline()
                block = handle.read(1 << 20)
                if not block:
                    if pending_len:
                        yield ("bytes", b"".join(pending)) if keep else ("range", start, start + pending_len)
                    return
            due = unit_bytes - pending_len  # cut at the first safe newline from here on
            cut = _even_newline(block, quotes, forward=True, start=max(0, due)) if due < len(block) else -1
            if cut < 0:
                quotes += block.count(b'"')
                if keep:
                    pending.append(block)
                pending_len += len(block)
                block = b""
                if pending_len > limit:
                    raise Unsplittable("no CSV record boundary found")
                continue
            size = pending_len + cut + 1
            if keep:
                pending.append(block[: cut + 1])
                yield ("bytes", b"".join(pending))
            else:
                yield ("range", start, start + size)
            start += size
            block = block[cut + 1:]
            pending, pending_len, quotes = [], 0, 0


def _range_reader(path: Path, start: int, end: int) -> Tuple[Any, Callable[[int], bytes]]:
    handle = open(path, "rb")
    handle.seek(start)
    remaining = [end - start]

    def read(size: int) -> bytes:
        if remaining[0] <= 0:
            return b""
        data = handle.read(min(size, remaining[0]))
        remaining[0] -= len(data)
        return data

    return handle, read


# --------------------------------------------------------------------------
# JSON Lines

_SKIP_LINE = object()
_BAD = object()


def _make_scanner():
    decoder = json.JSONDecoder()
    maker = json.scanner.c_make_scanner or json.scanner.py_make_scanner
    return maker(decoder)


def _default_input(obj: dict) -> Any:
    for name in DEFAULT_INPUT_FIELDS:
        value = obj.get(name)
        if value is not None:
            return value
    return None


def _jsonl_blocks(path: Path, gz: bool, unit: tuple) -> Iterator[Optional[bytes]]:
    kind = unit[0]
    if kind == "file":
        yield from _line_blocks(_opener(path, gz))
    elif kind == "range":
        handle, read = _range_reader(path, unit[1], unit[2])
        with handle:
            yield from _line_blocks(None, read=read, strip_bom=unit[1] == 0)
    elif kind == "bytes":  # a block of _line_blocks(): whole lines, no final newline
        yield unit[1]
    else:
        raise ValueError(kind)


def _line_blocks(handle, read: Callable[[int], bytes] | None = None, strip_bom: bool = True) -> Iterator[Optional[bytes]]:
    """The input as blocks of whole lines (without the final newline), about
    CHUNK_BYTES each; None stands for one line longer than MAX_LINE_BYTES
    (always, however the input is chunked), which is skipped and, when it is
    longer than a chunk, never held whole. A UTF-8 byte order mark at the
    start is dropped."""
    if read is None:
        read = handle.read
    try:
        rest = b""
        skipping = False
        first = strip_bom
        while True:
            check_deadline()
            block = read(CHUNK_BYTES)
            if first:
                first = False
                if block.startswith(b"\xef\xbb\xbf"):
                    block = block[3:]
            if not block:
                if skipping:
                    yield None
                elif rest:
                    yield rest
                return
            if skipping:
                cut = block.find(b"\n")
                if cut < 0:
                    continue
                skipping = False
                yield None
                block = block[cut + 1:]
            data = rest + block if rest else block
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = b""
                if len(data) > MAX_LINE_BYTES:
                    skipping = True
                else:
                    rest = data
                continue
            rest = data[cut + 1:]
            if len(rest) > MAX_LINE_BYTES:
                skipping, rest = True, b""
            if cut > MAX_LINE_BYTES:  # may hold an over-long line: skip exactly those
                kept: list[bytes] = []
                for line in data[:cut].split(b"\n"):
                    if len(line) > MAX_LINE_BYTES:
                        if kept:
                            yield b"\n".join(kept)
                            kept = []
                        yield None
                    else:
                        kept.append(line)
                if kept:
                    yield b"\n".join(kept)
            else:
                yield data[:cut]
    finally:
        if handle is not None:
            handle.close()


def _jsonl_batches(blocks: Iterable[Optional[bytes]], fields: Fields, report: FileReport) -> Iterator[Batch]:
    scan = _make_scanner()
    invalid = report.invalid
    not_object = report.not_object
    gk, tk = fields.group_key, fields.time_key
    inputs = fields.inputs
    single_input = inputs[0] if inputs is not None and len(inputs) == 1 else None
    multi_inputs = inputs if inputs is not None and len(inputs) > 1 else None
    default_get = _default_input

    def slow(line: str) -> Any:
        """A line the fast path did not accept: blank, padded, or invalid."""
        text = line.strip(" \t\r\n")
        if not text:
            return _SKIP_LINE
        try:
            obj, end = scan(text, 0)
        except (StopIteration, ValueError, RecursionError):
            return _BAD
        return obj if end == len(text) else _BAD

    lineno = report.lines
    try:
        for data in blocks:
            if data is None:  # one over-long line, not held in memory
                lineno += 1
                invalid.add(lineno)
                continue
            try:
                lines: List[Any] = data.decode("utf-8").split("\n")
            except UnicodeDecodeError:
                lines = []
                for raw in data.split(b"\n"):
                    try:
                        lines.append(raw.decode("utf-8"))
                    except UnicodeDecodeError:
                        lines.append(None)
            rows: List[int] = []
            groups: List[Any] = []
            times: List[Any] = []
            ins: List[Any] = []
            add_row, add_group, add_time, add_input = rows.append, groups.append, times.append, ins.append
            for line in lines:
                lineno += 1
                try:
                    obj, end = scan(line, 0)
                    if end != len(line) and not line[end:].isspace():
                        obj = _BAD
                except (StopIteration, ValueError, RecursionError):
                    obj = slow(line)
                    if obj is _SKIP_LINE:
                        continue
                except TypeError:  # undecodable line (None)
                    obj = _BAD
                if type(obj) is not dict:
                    if obj is _BAD:
                        invalid.add(lineno)
                    else:
                        not_object.add(lineno)
                    continue
                add_row(lineno)
                if gk is not None:
                    add_group(obj.get(gk))
                if tk is not None:
                    add_time(obj.get(tk))
                if single_input is not None:
                    add_input(obj.get(single_input))
                elif multi_inputs is not None:
                    add_input(tuple([obj.get(name) for name in multi_inputs]))
                else:
                    value = obj.get("prompt")
                    add_input(value if value is not None else default_get(obj))
            report.rows += len(rows)
            yield rows, groups, times, ins
    finally:
        report.lines = lineno


# --------------------------------------------------------------------------
# CSV


def _csv_unit_batches(path: Path, gz: bool, fields: Fields, report: FileReport, unit: tuple, layout: CsvLayout | None) -> Iterator[Batch]:
    if unit[0] == "file":
        handle = io.TextIOWrapper(_opener(path, gz), encoding="utf-8-sig", errors="replace", newline="")
        with handle:
            reader = csv.reader(handle, strict=True)
            try:
                header = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                raise ValueError(f"malformed CSV header: {error}") from None
            layout = CsvLayout(header, fields)
            report.absent_columns = list(layout.absent)
            report.input_field = layout.input_field
            yield from _csv_records(reader, layout, fields, report)
        return
    assert layout is not None
    if unit[0] == "range":
        handle, read = _range_reader(path, unit[1], unit[2])
        with handle:
            data = read(unit[2] - unit[1])
    else:
        data = unit[1]
    # the same decoding and line splitting as for the whole file (io.StringIO
    # would hold the piece as 4 bytes per character)
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline="")
    del data
    with text:
        yield from _csv_records(csv.reader(text, strict=True), layout, fields, report)


def _csv_records(reader, layout: CsvLayout, fields: Fields, report: FileReport) -> Iterator[Batch]:
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, MAX_FIELD_CHARS))
    try:
        gi, ti, input_cols, width = layout.group, layout.time, layout.inputs, layout.width
        want_group, want_time = fields.group_key is not None, fields.time_key is not None
        single = input_cols[0] if len(input_cols) == 1 else None
        rowno = report.lines
        done = False
        while not done:
            rows: List[int] = []
            groups: List[Any] = []
            times: List[Any] = []
            ins: List[Any] = []
            try:
                for record in reader:
                    rowno += 1
                    if not rowno & 4095:
                        check_deadline()
                    if not record:
                        continue  # blank line
                    if len(record) < width:
                        record = record + [""] * (width - len(record))
                    rows.append(rowno)
                    if want_group:
                        groups.append(record[gi] if gi >= 0 else None)
                    if want_time:
                        times.append(record[ti] if ti >= 0 else None)
                    if single is not None:
                        ins.append(record[single])
                    elif input_cols:
                        ins.append(tuple([record[i] if i >= 0 else None for i in input_cols]))
                    else:
                        ins.append(None)
                    if len(rows) >= BATCH_ROWS:
                        break
                else:
                    done = True
            except csv.Error as error:
                rowno += 1
                report.invalid.add(rowno)
                if str(error).startswith("unexpected end of data"):
                    report.ended_in_quotes = True
            report.rows += len(rows)
            report.lines = rowno
            yield rows, groups, times, ins
    finally:
        csv.field_size_limit(old_limit)


# --------------------------------------------------------------------------
# Parquet


def _parquet_batches(path: Path, fields: Fields, report: FileReport) -> Iterator[Batch]:
    try:
        import pyarrow.parquet as pq  # optional extra: planlint[parquet]
    except ImportError as error:
        raise MissingExtra(str(error)) from None
    # Page-at-a-time reads (buffer_size) and no read-ahead or decoding threads:
    # memory stays bounded by one record batch plus pyarrow's own footprint,
    # whatever the row-group size.
    parquet = pq.ParquetFile(str(path), pre_buffer=False, buffer_size=1 << 20)
    try:
        names = set(parquet.schema_arrow.names)

        def present(name: str | None) -> Optional[str]:
            if name is None:
                return None
            if name not in names:
                report.absent_columns.append(name)
                return None
            return name

        gcol = present(fields.group_key)
        tcol = present(fields.time_key)
        icols: list[Optional[str]] = []
        if fields.inputs is None:
            for name in DEFAULT_INPUT_FIELDS:
                if name in names:
                    report.input_field = name
                    icols = [name]
                    break
        else:
            icols = [present(name) for name in fields.inputs]
            if all(name is None for name in icols):
                icols = []
        wanted = sorted({name for name in (gcol, tcol, *icols) if name is not None})
        want_group, want_time = fields.group_key is not None, fields.time_key is not None
        rowno = 0
        if not wanted:
            total = parquet.metadata.num_rows
            while rowno < total:
                count = min(PARQUET_BATCH_ROWS, total - rowno)
                rows = list(range(rowno + 1, rowno + count + 1))
                none = [None] * count
                rowno += count
                report.rows += count
                report.lines = rowno
                yield rows, (none if want_group else []), (none if want_time else []), none
            return
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted, use_threads=False):
            check_deadline()
            count = batch.num_rows
            columns = {name: batch.column(batch.schema.get_field_index(name)).to_pylist() for name in wanted}
            none = [None] * count
            rows = list(range(rowno + 1, rowno + count + 1))
            rowno += count
            groups = (columns[gcol] if gcol else none) if want_group else []
            times = (columns[tcol] if tcol else none) if want_time else []
            if not icols:
                ins: List[Any] = none
            elif len(icols) == 1:
                ins = columns[icols[0]]  # type: ignore[index]
            else:
                ins = list(zip(*[columns[name] if name else none for name in icols]))
            report.rows += count
            report.lines = rowno
            yield rows, groups, times, ins
    finally:
        close = getattr(parquet, "close", None)
        if close is not None:
            close()
