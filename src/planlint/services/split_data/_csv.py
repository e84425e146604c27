"""CSV (and gzip-compressed CSV) with the csv module, strict; pieces for worker
processes end at a newline preceded by an even number of quote characters."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, List

from planlint.services.split_data import _base  # its limits are read when used: tests set them
from planlint.services.split_data._base import (
    Batch,
    Fields,
    FileReport,
    Unsplittable,
    open_split,
    range_reader,
    record_limit_text,
)
from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS
from planlint.services.split_data.errors import OverCap

if TYPE_CHECKING:
    from planlint.services.split_data.budget import Budget


#: Largest CSV field (the csv module's limit is raised to this while reading).
MAX_FIELD_CHARS = _base.MAX_RECORD_BYTES


#: Rows per yielded batch for CSV. A batch holds three values per row until it
#: is checked: 65,536 rows cost ~25 MB in each process, and took the 1M + 1M
#: row CSV case with two workers from 198 to 304 MB (summed PSS).
BATCH_ROWS = 16384


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


def _csv_pieces(handle, head: bytes, data_start: int, unit_bytes: int, budget: "Budget", keep: bool) -> Iterator[tuple]:
    """Pieces of about `unit_bytes` of CSV records after the header: byte
    ranges, or the bytes themselves when `keep` (gzip). Reads 1 MiB at a time;
    holds at most one piece (when `keep`)."""
    if keep:
        unit_bytes = min(unit_bytes, _base.CHUNK_BYTES)
    limit = max(unit_bytes * 4, _base.MAX_LINE_BYTES)
    with handle:
        pending: list[bytes] = []
        pending_len = 0
        quotes = 0  # quote characters in the pending bytes
        start = data_start
        block = head[data_start:]
        while True:
            if not block:
                budget.check()
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


class _Consumed:
    """Characters handed to csv.reader so far (`total`) and when the record being parsed began (`start`)."""

    __slots__ = ("total", "start")

    def __init__(self) -> None:
        self.total = 0
        self.start = 0


def _capped_lines(handle, consumed: _Consumed, budget: "Budget") -> Iterator[str]:
    """The text's lines for csv.reader, none read past MAX_RECORD_BYTES characters of one record.

    csv.reader would otherwise take a line of any length whole (and its field
    buffer holds 4 bytes per character). Raises OverCap once the record
    being parsed (consumed.start is set by the caller at each record's end)
    passes the limit, and checks the deadline every CHUNK_BYTES characters.
    """
    readline = handle.readline
    cap = _base.MAX_RECORD_BYTES
    total = 0
    next_check = _base.CHUNK_BYTES
    while True:
        line = readline(cap + 1 - (total - consumed.start))
        if not line:
            return
        total += len(line)
        consumed.total = total
        if total - consumed.start > cap:
            raise OverCap()
        if total > next_check:
            budget.check()
            next_check = total + _base.CHUNK_BYTES
        yield line


def _csv_unit_batches(path: Path, gz: bool, fields: Fields, report: FileReport, unit: tuple, layout: CsvLayout | None,
                      budget: "Budget") -> Iterator[Batch]:
    consumed = _Consumed()
    if unit[0] == "file":
        handle = io.TextIOWrapper(open_split(path, gz), encoding="utf-8-sig", errors="replace", newline="")
        with handle:
            reader = csv.reader(_capped_lines(handle, consumed, budget), strict=True)
            try:
                header = next(reader)
            except StopIteration:
                return
            except OverCap:
                raise OverCap(f"the CSV header is longer than {record_limit_text()} (the limit on one record)") from None
            except csv.Error as error:
                raise ValueError(f"malformed CSV header: {error}") from None
            consumed.start = consumed.total
            layout = CsvLayout(header, fields)
            report.absent_columns = list(layout.absent)
            report.input_field = layout.input_field
            yield from _csv_records(reader, layout, fields, report, consumed)
        return
    assert layout is not None
    if unit[0] == "range":
        handle, read = range_reader(path, unit[1], unit[2])
        with handle:
            data = read(unit[2] - unit[1])
    else:
        data = unit[1]
    # the same decoding and line splitting as for the whole file (io.StringIO
    # would hold the piece as 4 bytes per character)
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline="")
    del data
    with text:
        yield from _csv_records(csv.reader(_capped_lines(text, consumed, budget), strict=True), layout, fields, report, consumed)


def _csv_records(reader, layout: CsvLayout, fields: Fields, report: FileReport, consumed: _Consumed) -> Iterator[Batch]:
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
                for record in reader:  # the deadline is checked by _capped_lines, every CHUNK_BYTES of text
                    consumed.start = consumed.total  # the next record starts here
                    rowno += 1
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
                consumed.start = consumed.total
                rowno += 1
                report.invalid.add(rowno)
                if str(error).startswith("unexpected end of data"):
                    report.ended_in_quotes = True
            except OverCap:
                # No way to tell where the record ends without reading it: the file's checks stop here.
                raise OverCap(f"is longer than {record_limit_text()} (the limit on one record)", row=rowno + 1, noun="record") from None
            report.rows += len(rows)
            report.lines = rowno
            yield rows, groups, times, ins
    finally:
        csv.field_size_limit(old_limit)
