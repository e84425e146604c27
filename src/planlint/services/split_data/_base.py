"""The shared base of the split-file readers (one module per format: _jsonl, _csv,
_parquet; the dispatch over them is _formats).

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

Here: the limits, format detection, what a reader reports (Sample,
FileReport), which fields it extracts (Fields), and reading a file or a byte
range of it as blocks of whole lines. Every reader is handed the check's
`budget.Budget` and calls its `check()` as it goes.
"""

from __future__ import annotations

import gzip
import io
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Tuple

from planlint.services.split_data.errors import OverCap
from planlint.services.split_data.facts import EXAMPLES, size_text

if TYPE_CHECKING:
    from planlint.services.split_data.budget import Budget



#: How much of a JSON Lines file is read, decoded and parsed at a time.
CHUNK_BYTES = 4 << 20


#: The size of one record, in every format: a JSON Lines line, a CSV record
#: (all its fields, and all the lines a quoted field spans), the checked
#: columns of one Parquet row. A gzip file of 734 KB held a CSV record of
#: 12 fields of 60 MiB each, which took 1.7 GiB to parse whole.
MAX_RECORD_BYTES = 16 << 20


#: A JSON Lines line longer than this is skipped without being held in
#: memory, and counted (a note; PL006 with --require-data).
MAX_LINE_BYTES = MAX_RECORD_BYTES


#: How many row numbers (and values) of each kind are kept for messages.
SAMPLE = EXAMPLES


@contextmanager
def rows_from(offset: int):
    """A limit met while one object of a split is read (a record too large) names its row of the
    whole split: the readers number rows within the object, which starts after `offset` rows."""
    try:
        yield
    except OverCap as limit:
        if limit.row is not None:
            limit.row += offset
        raise


def record_limit_text(size: Optional[int] = None) -> str:
    """The limit on one record (MAX_RECORD_BYTES unless `size`), in words ("16 MiB")."""
    return size_text(MAX_RECORD_BYTES if size is None else size)


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


class Unsplittable(Exception):
    """The file cannot be cut into independent pieces; read it whole. (Not an error of the check:
    the caller reads the file in one process instead.)"""


#: The formats planlint reads, for messages.
FORMATS_READ = ".jsonl, .ndjson, .csv, .parquet, .jsonl.gz, .csv.gz"


def detect_format(path: Path) -> Optional[tuple[str, bool]]:
    """(format, gzipped) from the file name: `.jsonl` `.ndjson` `.json-lines`
    `.csv` `.parquet`, the first two optionally followed by `.gz`; None for another name."""
    name = path.name.lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    for suffix, fmt in SUFFIXES.items():
        if name.endswith(suffix):
            if gz and fmt == "parquet":
                break
            return fmt, gz
    return None


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


KINDS = ("invalid", "oversized", "not_object", "no_group", "no_time", "bad_time", "no_input", "time_leaks")


class FileReport:
    """What was read from one split file (or one piece of it)."""

    def __init__(self) -> None:
        self.lines = 0  # rows consumed: JSONL lines, CSV records, Parquet rows
        self.rows = 0  # well-formed data rows
        self.invalid = Sample()  # not valid JSON / not UTF-8 / malformed CSV record
        self.oversized = Sample()  # a JSON Lines line over MAX_LINE_BYTES, skipped unread
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


def open_split(path: Path, gz: bool):
    """A binary stream of a split file, or of a remote object (anything with `open_binary()`, see _sources)."""
    opener = getattr(path, "open_binary", None)
    if opener is None:
        return gzip.open(path, "rb") if gz else open(path, "rb")
    raw = opener()
    if gz:
        return _OwningGzipFile(fileobj=raw, mode="rb")
    return io.BufferedReader(raw, buffer_size=1 << 16)


class _OwningGzipFile(gzip.GzipFile):
    """A GzipFile that also closes the stream it reads (GzipFile leaves a given fileobj open)."""

    def close(self) -> None:
        raw: Any = self.fileobj
        try:
            super().close()
        finally:
            if raw is not None:
                raw.close()


def range_reader(path: Path, start: int, end: int) -> Tuple[Any, Callable[[int], bytes]]:
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


def line_blocks(handle, budget: "Budget", read: Callable[[int], bytes] | None = None, strip_bom: bool = True) -> Iterator[Optional[bytes]]:
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
            budget.check()
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
