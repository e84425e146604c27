"""JSON Lines (and gzip-compressed JSON Lines): blocks of whole lines parsed with the
json module's C scanner; pieces for worker processes end on a newline."""

from __future__ import annotations

import json
import json.scanner
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, List, Optional

from planlint.services.split_data._base import (
    Batch,
    Fields,
    FileReport,
    line_blocks,
    open_split,
    range_reader,
)
from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS

if TYPE_CHECKING:
    from planlint.services.split_data.budget import Budget


#: Within a chunk, a batch is yielded after about this many rows.
BATCH_ROWS = 65536


def _jsonl_ranges(path: Path, unit_bytes: int, budget: "Budget") -> Iterator[tuple]:
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
                budget.check()
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


def _jsonl_blocks(path: Path, gz: bool, unit: tuple, budget: "Budget") -> Iterator[Optional[bytes]]:
    kind = unit[0]
    if kind == "file":
        yield from line_blocks(open_split(path, gz), budget)
    elif kind == "range":
        handle, read = range_reader(path, unit[1], unit[2])
        with handle:
            yield from line_blocks(None, budget, read=read, strip_bom=unit[1] == 0)
    elif kind == "bytes":  # a block of line_blocks(): whole lines, no final newline
        yield unit[1]
    else:
        raise ValueError(kind)


def _jsonl_batches(blocks: Iterable[Optional[bytes]], fields: Fields, report: FileReport, budget: "Budget") -> Iterator[Batch]:
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
                report.oversized.add(lineno)
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
                if not lineno & 4095:  # a 4 MiB chunk can hold 4 million lines: bound the batch and the time
                    budget.check()
                    if len(rows) >= BATCH_ROWS:
                        report.rows += len(rows)
                        yield rows, groups, times, ins
                        rows, groups, times, ins = [], [], [], []
                        add_row, add_group, add_time, add_input = rows.append, groups.append, times.append, ins.append
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
