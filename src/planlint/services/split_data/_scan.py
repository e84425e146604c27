"""The two passes of the data-aware split checks, over one unit of a split at a time.

1. The smaller split is read whole, in this process, into a `SmallIndex`
   (`read_small`, `index_unit`).
2. The larger split is compared against the index as it is read
   (`scan_unit`): in this process, by byte ranges in worker processes when it
   is one large file (_file_workers), or object by object (_index_parts,
   _workers).
"""

from __future__ import annotations

import datetime as _dt
from array import array
from collections.abc import Iterable
from itertools import compress, repeat
from operator import ge as _at_or_after, not_
from typing import Any, Callable

from planlint.services.split_data._base import FILE, Fields, FileReport
from planlint.services.split_data._csv import CsvLayout
from planlint.services.split_data._formats import iter_batches
from planlint.services.split_data._index import ROWS_UNIT, BigResult, SmallIndex, SmallPart, count_hits, digest
from planlint.services.split_data._values import (
    Cutoff,
    group_text,
    input_excerpt,
    make_time_test,
    normalize_text,
    normalize_value,
)
from planlint.services.split_data.budget import Budget

_fromisoformat = _dt.datetime.fromisoformat


def input_key(value: Any, fields: tuple[str, ...] | None) -> str:
    """The normalized text compared by PL209 ('' when the row has none)."""
    if type(value) is tuple:
        names = fields or (None,) * len(value)
        parts = [normalize_value(item, name) for item, name in zip(value, names)]
        return "\x01".join(parts) if any(parts) else ""
    if fields is not None and len(fields) == 1:
        return normalize_value(value, fields[0])
    return normalize_value(value)


class SideSpec:
    """One split and how to check it, within `budget` (inherited by forked workers): `path` is
    what the readers read (a local file, a _sources.Source, or one object of one).

    `trace` records how the check read it (see check_split_data's `trace`)."""

    def __init__(self, split: str, path: Any, fmt: str, gz: bool, fields: Fields, cut: Cutoff | None, budget: Budget,
                 trace: dict[str, Any] | None = None) -> None:
        self.split, self.path, self.fmt, self.gz = split, path, fmt, gz
        self.fields = fields
        self.cut = cut
        self.budget = budget
        self.trace: dict[str, Any] = {} if trace is None else trace
        self.layout: CsvLayout | None = None
        # (report, batches) of an object read ahead by a _prefetch.Prefetch: the
        # batches come from there, and its reader fills that report
        self.prefetched: tuple[FileReport, Iterable] | None = None

    def of(self, path: Any) -> "SideSpec":
        """This spec for one object (`path`) of its split."""
        return SideSpec(self.split, path, self.fmt, self.gz, self.fields, self.cut, self.budget, self.trace)


def _batches(spec: SideSpec, report: FileReport, unit: tuple):
    """The batches of one unit of `spec`'s file: read here, or handed over by a Prefetch."""
    if spec.prefetched is not None:
        return spec.prefetched[1]
    return iter_batches(spec.path, spec.fmt, spec.gz, spec.fields, report, spec.budget, unit, spec.layout)


# --------------------------------------------------------------------------
# per-batch loops
#
# Each loop first tries the common case for a whole batch at C speed (map,
# compress, list comprehensions: every value a non-empty string, every time an
# ISO string of one kind, every input ASCII) and otherwise falls back to the
# row-by-row loop, which decides every case; both give the same result.


def _time_loop(spec: SideSpec, report: FileReport, rows, times, at_or_after) -> None:
    leaks = report.time_leaks
    offending = spec.split == "train"  # train offends when at/after; eval when before
    cutoff = spec.cut
    assert cutoff is not None  # the time check runs with a cutoff only
    try:
        moments = list(map(_fromisoformat, times))  # TypeError: not a string; ValueError: not ISO
        cut = cutoff.aware if moments and moments[0].tzinfo is not None else cutoff.naive
        late = list(map(_at_or_after, moments, repeat(cut, len(moments))))  # TypeError: naive and aware mixed
    except (TypeError, ValueError):
        _time_rows(spec, report, rows, times, at_or_after)
        return
    for position in compress(range(len(late)), late if offending else map(not_, late)):
        leaks.add(rows[position], times[position])


def _time_rows(spec: SideSpec, report: FileReport, rows, times, at_or_after) -> None:
    leaks, missing, bad = report.time_leaks, report.no_time, report.bad_time
    offending = spec.split == "train"  # train offends when at/after; eval when before
    cutoff = spec.cut
    assert cutoff is not None  # the time check runs with a cutoff only
    fromiso, naive, aware = _fromisoformat, cutoff.naive, cutoff.aware
    for row, value in zip(rows, times):
        if type(value) is str:
            try:  # fast path for the common case: an ISO string
                moment = fromiso(value)
                late = moment >= naive if moment.tzinfo is None else moment >= aware
            except ValueError:
                if not value.strip():
                    missing.add(row)
                    continue
                late = at_or_after(value)
        elif value is None:
            missing.add(row)
            continue
        else:
            late = at_or_after(value)
        if late is None:
            bad.add(row, value)
        elif late is offending:
            leaks.add(row, value)


def _all_nonempty_strings(values) -> bool:
    try:
        return all(map(str.__len__, values))  # TypeError: a value that is not a string
    except TypeError:
        return False


def _input_text(value: Any, inputs: tuple[str, ...] | None) -> str:
    if type(value) is str:
        return normalize_text(value)
    if value is None:
        return ""
    return input_key(value, inputs)


def _input_texts(values, inputs: tuple[str, ...] | None) -> list[str]:
    """The text PL209 compares for each value ('' when there is none)."""
    try:
        if all(map(str.isascii, values)):  # TypeError: a value that is not a string
            # normalize_text() of ASCII: lower case, whitespace collapsed; a
            # printable text (no whitespace but spaces) without two spaces in a
            # row or one at either end is already collapsed
            return [
                text if "  " not in (text := value.lower()) and text.isprintable() and text[:1] != " " and text[-1:] != " "
                else " ".join(text.split())
                for value in values
            ]
    except TypeError:
        pass
    return [_input_text(value, inputs) for value in values]


def _note_empty(sample, rows, values) -> None:
    """Add the rows whose value is None or '' to `sample`."""
    if None in values or "" in values:
        for row, value in zip(rows, values):
            if value is None or value == "":
                sample.add(row)


def index_unit(spec: SideSpec, unit: tuple = FILE, digest_: Callable[[str], int] = digest, keep_own: bool = False,
               into: SmallPart | None = None, offset: int = 0, own_digest: Callable[[str], int] | None = None) -> SmallPart:
    """Read one unit of the smaller split for its index, its inputs digested with `digest_`.

    With `into`, the unit's group values, digests and rows (shifted by
    `offset`) are added to that part (the split's whole index so far), and
    the part returned holds the unit's report; with `keep_own` too, it also
    holds the unit's own group values, digests and rows (rows local to the
    unit: what the cache keeps of an object, _index_parts), its inputs digested
    with `own_digest` when that is another digest than `digest_`."""
    part = SmallPart()
    if spec.prefetched is not None:
        part.report = spec.prefetched[0]
    target = into if into is not None else part
    report, groups, codes, code_rows = part.report, target.groups, target.codes, target.rows
    # the unit's own group values, digests and their rows, when kept besides `into`'s (all four or none)
    own_keys: Any = None
    own_key_rows: Any = None
    own_codes: Any = None
    own_rows: Any = None
    if into is not None and keep_own:
        own_keys, own_key_rows = part.group_keys, part.group_rows = [], array("q")
        own_codes, own_rows = part.codes, part.rows
    unit_rows = ROWS_UNIT
    first_base = unit_rows + (offset if into is not None else 0)
    no_group, no_input = report.no_group, report.no_input
    fields = spec.fields
    inputs = fields.inputs
    at_or_after = make_time_test(spec.cut) if spec.cut is not None else None
    if spec.layout is not None:
        report.absent_columns = list(spec.layout.absent)
        report.input_field = spec.layout.input_field
    for rows, group_values, times, input_values in _batches(spec, report, unit):
        if fields.group_key is not None:
            for row, value in zip(rows, group_values):
                if value is None or value == "":
                    no_group.add(row)
                    continue
                key = value if type(value) is str else group_text(value)
                entry = groups.get(key)
                groups[key] = row + first_base if entry is None else entry + unit_rows
                if own_keys is not None:
                    own_keys.append(key)
                    own_key_rows.append(row)
        if at_or_after is not None:
            _time_loop(spec, report, rows, times, at_or_after)
        texts = _input_texts(input_values, inputs)
        if "" in texts:
            _note_empty(no_input, rows, texts)
            rows = [row for row, text in zip(rows, texts) if text]
            texts = [text for text in texts if text]
        batch = array("q", map(digest_, texts))
        codes.extend(batch)
        code_rows.extend(map(offset.__add__, rows) if into is not None and offset else rows)
        if own_codes is not None:
            own_codes.extend(batch if own_digest is None or own_digest is digest_ else map(own_digest, texts))
            own_rows.extend(rows)
    if into is None:
        part.group_keys = None
    return part


def read_small(spec: SideSpec, digest_: Callable[[str], int] = digest) -> tuple[SmallIndex, FileReport]:
    """Read the smaller split into its index, in this process. (Reading it
    in worker processes too cost ~0.3 s more CPU for 100k rows, in pickled
    pieces and forks, for no wall time that could be measured on 2 shared cores.)"""
    spec.layout = None
    part = index_unit(spec, FILE, digest_)
    index = SmallIndex()
    index.digest = digest_
    index.packed_groups.update(part.groups)
    index.set_inputs(part.codes, part.rows)
    return index, part.report


def scan_unit(spec: SideSpec, index: SmallIndex, unit: tuple = FILE, keep_own: bool = False) -> BigResult:
    """Compare one unit of the larger split against the smaller split's index.

    With `keep_own`, the unit's own part is also kept, as `result.own` (as
    index_unit keeps it: group values and every input's digest with their
    rows, rows local to the unit; its report is the result's): what the
    cache keeps of an object, to be compared with another smaller split in a
    later run without reading the object again (_index_parts)."""
    result = BigResult()
    own = result.own = SmallPart() if keep_own else None
    if spec.prefetched is not None:
        result.report = spec.prefetched[0]
    report, leaked, dups = result.report, result.leaked, result.dups
    own_keys: Any = None  # the unit's own group values and their rows, when kept (both or neither)
    own_key_rows: Any = None
    if own is not None:
        own.report = report
        own_keys, own_key_rows = own.group_keys, own.group_rows = [], array("q")
    groups, input_hits = index.packed_groups, index.input_hits
    no_group, no_input = report.no_group, report.no_input
    fields = spec.fields
    inputs = fields.inputs
    at_or_after = make_time_test(spec.cut) if spec.cut is not None else None
    digest_ = index.digest
    check_groups = fields.group_key is not None and bool(groups)
    check_inputs = bool(index.hashes)
    if spec.layout is not None:
        report.absent_columns = list(spec.layout.absent)
        report.input_field = spec.layout.input_field
    for rows, group_values, times, input_values in _batches(spec, report, unit):
        if fields.group_key is not None:
            if _all_nonempty_strings(group_values):
                if own_keys is not None:
                    own_keys.extend(group_values)
                    own_key_rows.extend(rows)
                if check_groups:
                    count_hits(leaked, compress(range(len(group_values)), map(groups.__contains__, group_values)), group_values, rows)
            else:
                for row, value in zip(rows, group_values):
                    if value is None or value == "":
                        no_group.add(row)
                        continue
                    if not check_groups and own_keys is None:
                        continue
                    key = value if type(value) is str else group_text(value)
                    if own_keys is not None:
                        own_keys.append(key)
                        own_key_rows.append(row)
                    if check_groups and key in groups:
                        entry = leaked.get(key)
                        if entry is None:
                            leaked[key] = [row, 1]
                        else:
                            entry[1] += 1
        if at_or_after is not None:
            _time_loop(spec, report, rows, times, at_or_after)
        texts = _input_texts(input_values, inputs)
        empty = "" in texts
        if empty:
            _note_empty(no_input, rows, texts)
        if not check_inputs and own is None:
            continue
        codes = list(map(digest_, texts))
        if own is not None:
            own.codes.extend(compress(codes, texts) if empty else codes)
            own.rows.extend(compress(rows, texts) if empty else rows)
            if not check_inputs:
                continue
        for position in input_hits(codes):
            if not texts[position]:
                continue
            code = codes[position]
            entry = dups.get(code)
            if entry is None:
                dups[code] = [rows[position], 1, input_excerpt(input_values[position])]
            else:
                entry[1] += 1
    return result
