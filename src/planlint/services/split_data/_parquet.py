"""Parquet through pyarrow (the optional `parquet` extra, imported when a Parquet split is read)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, List, Optional

from planlint.services.split_data import _base  # its limits are read when used: tests set them
from planlint.services.split_data._base import Batch, Fields, FileReport, record_limit_text
from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS
from planlint.services.split_data.errors import MissingExtra, OverCap

if TYPE_CHECKING:
    from planlint.services.split_data.budget import Budget


#: What reading Parquet needs and lacks when pyarrow is not installed.
PARQUET_EXTRA = "reading Parquet needs the optional extra: pip install 'planlint[parquet]' (pyarrow)"

#: Rows per Parquet record batch: pyarrow's decoding buffers grow with it
#: (65536 rows cost ~70 MB more peak memory than 8192, for no speed gain).
PARQUET_BATCH_ROWS = 8192


def _parquet_batches(path: Path, fields: Fields, report: FileReport, budget: "Budget") -> Iterator[Batch]:
    try:
        import pyarrow.parquet as pq  # optional extra: planlint[parquet]
    except ImportError:
        raise MissingExtra(PARQUET_EXTRA) from None
    # Page-at-a-time reads (buffer_size) and no read-ahead or decoding threads:
    # memory stays bounded by one record batch plus pyarrow's own footprint,
    # whatever the row-group size.
    # A remote object (see _sources) is read through its own file object:
    # pyarrow then asks for the footer and the needed column chunks only.
    opener = getattr(path, "open_binary", None)
    source: Any = opener(random_access=True) if opener is not None else str(path)
    try:
        parquet = pq.ParquetFile(source, pre_buffer=False, buffer_size=1 << 20)
    except BaseException:
        if opener is not None:
            source.close()
        raise
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
            # Only the row count is used, and it comes from the footer, which
            # the file's author wrote: 2^60 rows in a 400-byte file is possible.
            total = parquet.metadata.num_rows
            while rowno < total:
                budget.check()
                count = min(PARQUET_BATCH_ROWS, total - rowno)
                rows = list(range(rowno + 1, rowno + count + 1))
                none = [None] * count
                rowno += count
                report.rows += count
                report.lines = rowno
                yield rows, (none if want_group else []), (none if want_time else []), none
            return
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted, use_threads=False):
            budget.check()
            _check_parquet_record_size(batch, rowno)
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
        if opener is not None:
            source.close()


def _check_parquet_record_size(batch, rows_before: int) -> None:
    """OverCap when the checked columns of one row hold more than MAX_RECORD_BYTES.

    Counted before the batch becomes Python objects (a 60 MiB string would
    become a 60 MiB `str`, then be normalized): the byte length of every
    string and binary value, nested ones (a chat's `messages` as
    list<struct<role, content>>) included, summed per row. A batch whose
    buffers are smaller than the limit cannot hold such a row and is not
    looked at.
    """
    if not batch.num_rows or batch.nbytes <= _base.MAX_RECORD_BYTES:
        return
    import pyarrow as pa
    import pyarrow.compute as pc

    rows_parts: list = []
    size_parts: list = []
    own_rows = pa.array(range(batch.num_rows), pa.int64())
    for column in batch.columns:
        _value_sizes(column, own_rows, rows_parts, size_parts, pa, pc)
    if not size_parts:
        return
    table = pa.table({"row": pa.concat_arrays(rows_parts), "size": pa.concat_arrays(size_parts)})
    sums = table.group_by("row").aggregate([("size", "sum")])
    largest = pc.max(sums["size_sum"]).as_py() or 0
    if largest > _base.MAX_RECORD_BYTES:
        at = pc.index(sums["size_sum"], largest).as_py()
        row = rows_before + 1 + sums["row"][at].as_py()
        raise OverCap(f"is longer than {record_limit_text()} (the limit on one record)", row=row)


def _value_sizes(array, rows, rows_parts: list, size_parts: list, pa, pc) -> None:
    """Append (row of each value, its byte length) for the string and binary values in `array`."""
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        rows_parts.append(rows)
        size_parts.append(pc.fill_null(pc.binary_length(array), 0).cast(pa.int64()))
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        parents = pc.list_parent_indices(array)
        _value_sizes(pc.list_flatten(array), pc.take(rows, parents), rows_parts, size_parts, pa, pc)
    elif pa.types.is_struct(kind):
        for index in range(kind.num_fields):
            _value_sizes(pc.struct_field(array, [index]), rows, rows_parts, size_parts, pa, pc)
    elif pa.types.is_map(kind):
        parents = pc.list_parent_indices(array)
        for part in (array.keys, array.items):
            _value_sizes(part, pc.take(rows, parents), rows_parts, size_parts, pa, pc)
