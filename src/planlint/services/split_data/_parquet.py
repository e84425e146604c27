"""Parquet through pyarrow (the optional `parquet` extra, imported when a Parquet split is read)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, List, Optional

from planlint.services.split_data._base import Batch, Fields, FileReport, MissingExtra, check_deadline
from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS


#: Rows per Parquet record batch: pyarrow's decoding buffers grow with it
#: (65536 rows cost ~70 MB more peak memory than 8192, for no speed gain).
PARQUET_BATCH_ROWS = 8192


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
