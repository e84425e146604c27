"""The index of the smaller split, and what the larger split's reading finds against it.

`SmallIndex`: each distinct group value with its first row and row count
(packed in one int), one 64-bit digest per distinct normalized input with
its first row (a dict, or an `InputTable` for a large split). `SmallPart`:
what one unit (a file, a piece, an object) gives for an index. `BigResult`:
the leaks one unit of the larger split holds. And the digests the inputs are
compared by.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, repeat
from operator import add, and_, rshift
from typing import Any, Callable

from planlint.services.split_data._base import FileReport

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

    def hits(self, codes: Sequence[int]) -> list[int]:
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

    def input_hits(self, codes: Sequence[int]) -> Iterable[int]:
        """The positions in `codes` of the digests the smaller split has, in order."""
        hashes = self.hashes
        if isinstance(hashes, dict):
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
        keys, rows = self.group_keys, self.group_rows
        if not keys or rows is None:
            return {}
        firsts = dict(zip(reversed(keys), reversed(rows)))
        counts = Counter(keys)
        return dict(zip(firsts, map(add, firsts.values(), map(ROWS_UNIT.__mul__, map(counts.__getitem__, firsts)))))
