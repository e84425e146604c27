"""The two passes of the data-aware split checks.

1. The smaller split is read whole, in this process, into a `SmallIndex`:
   each distinct group value with its first row and row count, and one
   64-bit hash per distinct normalized input with its first row.
2. The larger split is streamed and compared against the index. A large
   JSON Lines or CSV file is cut into pieces that start on a row boundary and
   read by worker processes (fork, Linux only, when this process runs no other
   thread); each returns the leaks of its piece with row numbers local to
   the piece, and the pieces are merged in file order. Any trouble with the
   workers (a CSV piece cut inside a quoted field, a dead worker) and the file
   is simply read again in this process: the result never depends on how the
   file was cut.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import sys
import threading
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import compress, repeat
from functools import partial
from operator import add, and_, ge as _at_or_after, not_, rshift
from pathlib import Path
from typing import Any, Callable

from planlint.services.split_data._base import FILE, Fields, FileReport, Unsplittable
from planlint.services.split_data.budget import Budget
from planlint.services.split_data._csv import CsvLayout
from planlint.services.split_data._formats import iter_batches, plan_units
from planlint.services.split_data._values import (
    Cutoff,
    group_text,
    input_excerpt,
    make_time_test,
    normalize_text,
    normalize_value,
)

#: Below this size (on disk) the larger split is read in this process.
PARALLEL_MIN_BYTES = 32 << 20
#: Size of one piece handed to a worker (plain files; gzip pieces follow
#: the reader's chunks).
UNIT_BYTES = 16 << 20
#: Upper bound on worker processes.
MAX_WORKERS = 4

_fromisoformat = _dt.datetime.fromisoformat

def _blake_digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little", signed=True)


#: 64-bit digest of a normalized input, for two files that are not cached
#: object by object. Python's own string hash is 64-bit SipHash on 64-bit
#: builds and costs a tenth of a blake2b call; it differs between runs, which
#: does not matter there: digests never leave the process and its forked
#: workers (the cache stores finished messages). 32-bit builds use blake2b.
digest: Callable[[str], int] = hash if sys.hash_info.width >= 64 else _blake_digest


def keyed_digest(key: bytes) -> Callable[[str], int]:
    """A 64-bit digest of a normalized input that is the same in every run
    with this `key` (keyed BLAKE2b; ~5x the cost of `digest`, ~0.45 us a
    row): what the cached index parts of a split of objects hold (_index_parts),
    so that a later run can compare new rows against them; such a split's
    rows are digested with it on both sides. The key is this machine's, so
    the digests mean nothing elsewhere and collisions cannot be aimed."""
    template = hashlib.blake2b(digest_size=8, key=key[:64])
    from_bytes = int.from_bytes

    def code(text: str) -> int:
        state = template.copy()
        state.update(text.encode("utf-8", "surrogatepass"))
        return from_bytes(state.digest(), "little", signed=True)

    return code


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
    """One split file and how to check it, within `budget` (inherited by forked workers).

    `trace` records how the check read it (see check_split_data's `trace`)."""

    def __init__(self, split: str, path: Path, fmt: str, gz: bool, fields: Fields, cut: Cutoff | None, budget: Budget,
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


#: A group's first row and row count, packed in one int: first + rows * ROWS_UNIT.
ROWS_SHIFT = 48
ROWS_UNIT = 1 << ROWS_SHIFT
FIRST_MASK = ROWS_UNIT - 1


class PackedGroups(Mapping):
    """group text -> [first row, rows], read from the packed dict (few lookups, for messages)."""

    def __init__(self, packed: dict[str, int]) -> None:
        self.packed = packed

    def __getitem__(self, key: str) -> list[int]:
        value = self.packed[key]
        return [value & FIRST_MASK, value >> ROWS_SHIFT]

    def __iter__(self):
        return iter(self.packed)

    def __len__(self) -> int:
        return len(self.packed)


class InputTable:
    """The smaller split's distinct input digests, each with its first row.

    An open-addressing table (linear probing, at most half full) in two flat
    arrays of 64-bit integers, and a byte filter (16 bytes per entry, another
    part of the digest) that turns away most digests that are absent with one
    index. About 50 bytes per input, in three buffers, instead of ~110 bytes
    in three Python objects per input for a dict of ints: a 1M-row smaller
    split costs ~50 MB less, and the heap the forked workers share is not
    strewn with long-lived small objects (which pins freed memory and turns
    the workers' allocations into copy-on-write copies).
    `code in table` and `table[code]` (the first row) as for a dict.
    """

    __slots__ = ("keys", "firsts", "mask", "filter", "filter_mask", "size")

    #: The filter is indexed by these bits of the digest (the table by the lowest).
    FILTER_SHIFT = 32

    def __init__(self, entries: int = 0) -> None:
        slots = 8
        while slots < 2 * entries:
            slots *= 2
        self.size = 0
        self.mask = slots - 1
        self.keys = array("q", bytes(8 * slots))
        self.firsts = array("q", bytes(8 * slots))  # 0: an empty slot (rows count from 1)
        self.filter = bytearray(8 * slots)
        self.filter_mask = 8 * slots - 1

    @classmethod
    def build(cls, codes: array, rows: array, counts: dict[int, int]) -> "InputTable":
        """The table of `codes` (in row order, repeats allowed), each with the
        first of its `rows`; `counts` gets the row count of each repeated code.
        Built once at its final size: growing it would re-insert every entry."""
        table = cls(len(codes))
        keys, firsts, mask, filt, filter_mask, shift = table.keys, table.firsts, table.mask, table.filter, table.filter_mask, cls.FILTER_SHIFT
        size = 0
        for code, row in zip(codes, rows):
            slot = code & mask
            while True:
                if not firsts[slot]:
                    keys[slot] = code
                    firsts[slot] = row
                    filt[(code >> shift) & filter_mask] = 1
                    size += 1
                    break
                if keys[slot] == code:
                    counts[code] = counts.get(code, 1) + 1
                    break
                slot = (slot + 1) & mask
        table.size = size
        return table

    def hits(self, codes: list[int]) -> list[int]:
        """The positions in `codes` of the digests in the table, in order
        (the filter's test at C speed, then the table for those it lets by)."""
        filt, shift, count = self.filter, self.FILTER_SHIFT, len(codes)
        maybe = map(filt.__getitem__, map(and_, map(rshift, codes, repeat(shift, count)), repeat(self.filter_mask, count)))
        return [position for position in compress(range(count), maybe) if self._slot(codes[position]) >= 0]

    def _slot(self, code: int) -> int:
        keys, firsts, mask = self.keys, self.firsts, self.mask
        slot = code & mask
        while firsts[slot]:
            if keys[slot] == code:
                return slot
            slot = (slot + 1) & mask
        return -1

    def __contains__(self, code: int) -> bool:
        return bool(self.filter[(code >> self.FILTER_SHIFT) & self.filter_mask]) and self._slot(code) >= 0

    def __getitem__(self, code: int) -> int:
        slot = self._slot(code)
        if slot < 0:
            raise KeyError(code)
        return self.firsts[slot]

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0


#: From this many input rows in the smaller split on, its digests are kept in
#: an InputTable rather than a dict (a dict is quicker to build and to ask,
#: the table takes half the memory: ~50 instead of ~110 bytes per input).
TABLE_FROM_ROWS = 1 << 18


class SmallIndex:
    def __init__(self) -> None:
        self.packed_groups: dict[str, int] = {}  # group text -> first row + rows * ROWS_UNIT
        self.groups = PackedGroups(self.packed_groups)  # group text -> [first row, rows]
        self.hashes: dict[int, int] | InputTable = {}  # input digest -> first row
        self.hash_counts: dict[int, int] = {}  # input digest -> rows, only when > 1
        self.digest: Callable[[str], int] = digest  # what made the digests; the larger split is digested alike
        self.digest_key: bytes | None = None  # the key of `digest` when it is keyed_digest(key); None: Python's hash

    def set_inputs(self, codes: array, rows: array) -> None:
        """Index the smaller split's input digests (`codes`, in row order, with their `rows`)."""
        if len(codes) >= TABLE_FROM_ROWS:
            self.hashes = InputTable.build(codes, rows, self.hash_counts)
            return
        # the first row of each: the last assignment wins, so assign in reverse
        self.hashes = dict(zip(reversed(codes), reversed(rows)))
        if len(self.hashes) < len(codes):  # some input repeats
            counts = Counter(codes)
            self.hash_counts = {code: count for code, count in counts.items() if count > 1}

    def input_hits(self, codes: list[int]) -> Iterable[int]:
        """The positions in `codes` of the digests the smaller split has, in order."""
        hashes = self.hashes
        if type(hashes) is dict:
            return compress(range(len(codes)), map(hashes.__contains__, codes))
        return hashes.hits(codes)


class BigResult:
    """Leaks found in the larger split (or one piece of it)."""

    def __init__(self) -> None:
        self.report = FileReport()
        self.leaked: dict[str, list[int]] = {}  # group text -> [first row, rows]
        self.dups: dict[int, list[Any]] = {}  # input digest -> [first row, rows, its excerpt or None (not read in this run)]
        self.own: SmallPart | None = None  # the unit's own part, when scan_unit was asked to keep it (for the cache)

    def merge(self, part: "BigResult", offset: int) -> None:
        self.report.merge(part.report, offset)
        for key, (first, count) in part.leaked.items():
            entry = self.leaked.get(key)
            if entry is None:
                self.leaked[key] = [first + offset, count]
            else:
                entry[1] += count
        for code, (first, count, shown) in part.dups.items():
            entry = self.dups.get(code)
            if entry is None:
                self.dups[code] = [first + offset, count, shown]
            else:
                entry[1] += count
                if entry[2] is None:  # an earlier object's entry had no text of it
                    entry[2] = shown


def count_hits(found: dict, positions: Iterable[int], keys, rows, *more) -> None:
    """Count the values at `positions` of `keys` in `found` (value -> [first row, count, *more]),
    the first row of a value new to `found` taken from `rows`."""
    for position in positions:
        key = keys[position]
        entry = found.get(key)
        if entry is None:
            found[key] = [rows[position], 1, *more]
        else:
            entry[1] += 1


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
    try:
        moments = list(map(_fromisoformat, times))  # TypeError: not a string; ValueError: not ISO
        cut = spec.cut.aware if moments and moments[0].tzinfo is not None else spec.cut.naive
        late = list(map(_at_or_after, moments, repeat(cut, len(moments))))  # TypeError: naive and aware mixed
    except (TypeError, ValueError):
        _time_rows(spec, report, rows, times, at_or_after)
        return
    for position in compress(range(len(late)), late if offending else map(not_, late)):
        leaks.add(rows[position], times[position])


def _time_rows(spec: SideSpec, report: FileReport, rows, times, at_or_after) -> None:
    leaks, missing, bad = report.time_leaks, report.no_time, report.bad_time
    offending = spec.split == "train"  # train offends when at/after; eval when before
    fromiso, naive, aware = _fromisoformat, spec.cut.naive, spec.cut.aware
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


class SmallPart:
    """What one unit of a split gives for an index (rows local to the unit).

    `groups` is the packed form (group text -> first row + rows * ROWS_UNIT)
    the index uses; an object's own part kept for the cache (_index_parts) holds
    its group values in row order instead (`group_keys`, `group_rows`,
    packed only when used: `packed_groups`), which costs a fraction of
    packing every object of a split that is read."""

    def __init__(self) -> None:
        self.report = FileReport()
        self.groups: dict[str, int] = {}  # group text -> first row + rows * ROWS_UNIT
        self.codes = array("q")  # every input digest, in row order
        self.rows = array("q")  # and its row
        self.group_keys: list[str] | None = None  # the unit's own group values in row order (a part for the cache)
        self.group_rows: list[int] | array | None = None  # and their rows

    def packed_groups(self) -> dict[str, int]:
        """The own group values packed as in `groups` (first row and count of each, at C speed)."""
        keys = self.group_keys
        if not keys:
            return {}
        firsts = dict(zip(reversed(keys), reversed(self.group_rows)))
        counts = Counter(keys)
        return dict(zip(firsts, map(add, firsts.values(), map(ROWS_UNIT.__mul__, map(counts.__getitem__, firsts)))))


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
    own_keys: list | None = None  # the unit's own group values and their rows, when kept besides `into`'s
    own_key_rows: list | None = None
    own_codes: array | None = None
    own_rows: array | None = None
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
    own_keys: list | None = None
    own_key_rows: list | None = None
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


# --------------------------------------------------------------------------
# the larger split, in this process or in workers


def worker_count() -> int:
    """PLANLINT_DATA_WORKERS if set (1 turns workers off), else the usable
    CPUs, at most MAX_WORKERS."""
    configured = os.environ.get("PLANLINT_DATA_WORKERS", "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


def _can_fork() -> bool:
    if not sys.platform.startswith("linux"):
        return False  # fork is unsafe on macOS, absent on Windows
    if threading.active_count() > 1:
        return False  # forking a process that runs other threads can deadlock
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _size(spec: SideSpec) -> int:
    try:
        return spec.path.stat().st_size
    except OSError:
        return 0


def _use_workers(spec: SideSpec, min_bytes: int) -> bool:
    if spec.fmt not in ("jsonl", "csv") or not isinstance(spec.path, Path) or worker_count() < 2:
        return False
    return _size(spec) >= (min_bytes // 4 if spec.gz else min_bytes) and _can_fork()


def read_big(spec: SideSpec, index: SmallIndex) -> BigResult:
    workers = worker_count()
    spec.trace.update(mode="sequential", workers=1, worker_peak_kb=[], fallback=None)
    if _use_workers(spec, PARALLEL_MIN_BYTES):
        total = BigResult()
        try:
            _read_parallel(spec, partial(scan_unit, spec, index), total, workers, UNIT_BYTES)
            return total
        except (Unsplittable, _WorkersFailed) as reason:
            spec.trace.update(mode="sequential", workers=1, worker_peak_kb=[], fallback=str(reason))
    spec.layout = None
    return scan_unit(spec, index, FILE)


class _WorkersFailed(Exception):
    pass


def _own_peak_kb() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _worker(conn, task: Callable[[tuple], Any]) -> None:  # runs in a forked child
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            number, unit = message
            try:
                part = task(unit)
            except BaseException as error:  # reported to the parent, which reads the file itself
                conn.send(("error", number, f"{type(error).__name__}: {error}"[:300], None))
                break
            conn.send(("ok", number, part, _own_peak_kb()))
    except (EOFError, OSError, KeyboardInterrupt):
        pass
    finally:
        conn.close()


def _read_parallel(spec: SideSpec, task: Callable[[tuple], Any], total: Any, workers: int, unit_bytes: int) -> None:
    """Cut the file into units, have `workers` forked processes run `task` on
    them, and `total.merge` the parts in file order (row numbers shifted)."""
    import multiprocessing
    from multiprocessing.connection import wait

    layout, units = plan_units(spec.path, spec.fmt, spec.gz, spec.fields, unit_bytes, spec.budget)
    spec.layout = layout
    context = multiprocessing.get_context("fork")
    processes, connections = [], []
    peaks: dict[int, int] = {}
    if layout is not None:
        total.report.absent_columns = list(layout.absent)
        total.report.input_field = layout.input_field
    try:
        for _ in range(workers):
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_worker, args=(child_end, task), daemon=True)
            process.start()
            child_end.close()
            processes.append(process)
            connections.append(parent_end)
        busy: dict[Any, bool] = {conn: False for conn in connections}
        finished: dict[int, BigResult] = {}
        sent = merged = offset = 0
        exhausted = False
        last_ended_in_quotes = False

        def feed(conn) -> None:
            nonlocal sent, exhausted
            if exhausted:
                return
            unit = next(units, None)  # may raise Unsplittable (CSV)
            if unit is None:
                exhausted = True
                return
            conn.send((sent, unit))
            sent += 1
            busy[conn] = True

        for conn in connections:
            feed(conn)
        while True:
            waiting = [conn for conn in connections if busy[conn]]
            if not waiting:
                break
            for conn in wait(waiting):
                try:
                    status, number, part, peak = conn.recv()
                except (EOFError, OSError):
                    raise _WorkersFailed("a worker process ended unexpectedly") from None
                busy[conn] = False
                if status != "ok":
                    raise _WorkersFailed(f"a worker failed: {part}")
                if peak is not None:
                    peaks[id(conn)] = peak
                finished[number] = part
                while merged in finished:
                    piece = finished.pop(merged)
                    if last_ended_in_quotes:  # the previous piece was cut inside a quoted field
                        raise Unsplittable("a CSV piece ended inside a quoted field")
                    last_ended_in_quotes = piece.report.ended_in_quotes
                    total.merge(piece, offset)
                    offset += piece.report.lines
                    merged += 1
                feed(conn)
        spec.trace.update(mode="parallel", workers=workers, worker_peak_kb=sorted(peaks.values()))
    finally:
        close = getattr(units, "close", None)
        if close is not None:
            close()
        for conn in connections:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
        for conn in connections:
            conn.close()
