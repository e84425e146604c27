"""The split-file readers, chosen by format: JSON Lines (_jsonl), CSV (_csv),
Parquet (_parquet), over their shared base (_base)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from planlint.services.split_data import _base  # its limits are read when used: tests set them
from planlint.services.split_data._base import FILE, SKIP, Batch, Fields, FileReport, Unsplittable, line_blocks, open_split
from planlint.services.split_data._csv import CsvLayout, _csv_pieces, _csv_unit_batches, _even_newline
from planlint.services.split_data._jsonl import _jsonl_batches, _jsonl_blocks, _jsonl_ranges
from planlint.services.split_data._parquet import _parquet_batches

if TYPE_CHECKING:
    from planlint.services.split_data.budget import Budget


def iter_batches(path: Path, fmt: str, gz: bool, fields: Fields, report: FileReport, budget: "Budget", unit: tuple = FILE,
                 layout: CsvLayout | None = None) -> Iterator[Batch]:
    """Batches of one unit of a file; `report` counts what was read, `budget` bounds the time.

    `path` may also be a split of several objects (a `_sources.Source`): its
    own `batches` reads them one after the other."""
    chain = getattr(path, "batches", None)
    if chain is not None:
        return chain(fields, report, budget)
    if unit == SKIP:
        report.lines += 1
        report.oversized.add(report.lines)
        return iter(())
    if fmt == "jsonl":
        return _jsonl_batches(_jsonl_blocks(path, gz, unit, budget), fields, report, budget)
    if fmt == "csv":
        return _csv_unit_batches(path, gz, fields, report, unit, layout, budget)
    return _parquet_batches(path, fields, report, budget)


def plan_units(path: Path, fmt: str, gz: bool, fields: Fields, unit_bytes: int, budget: "Budget") -> tuple[CsvLayout | None, Iterator[tuple]]:
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
            return None, ((SKIP if block is None else ("bytes", block)) for block in line_blocks(open_split(path, True), budget))
        return None, _jsonl_ranges(path, unit_bytes, budget)
    handle = open_split(path, gz)
    try:
        head = handle.read(_base.CHUNK_BYTES)
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
    return layout, _csv_pieces(handle, head, end + 1, unit_bytes, budget, keep=gz)
