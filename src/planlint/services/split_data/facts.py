"""What the data checks found, as typed facts.

`check_split_data` returns `DataFacts` (both splits read: per split what was
read and what could not be used, across them the values found in both),
`Stopped` (why there is no answer) or `SameData`. The rules word them
(rules/leakage_findings); values are excerpts. `to_json` and `from_json` are
the result cache's form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

from planlint.services.split_data.errors import DataError

#: How many rows (and values) of each kind, and values found in both splits, the facts keep.
EXAMPLES = 5


def size_text(size: int) -> str:
    """A limit on one record in words: "16 MiB", "300 bytes"."""
    return f"{size >> 20} MiB" if size >= 1 << 20 and not size & ((1 << 20) - 1) else f"{size} bytes"


@dataclass(frozen=True)
class Location:
    """A row of a split: its number in the whole split (from 1) and, in a split of several objects
    read as one, the object that holds it and its number there."""

    row: int
    shard: Optional[str] = None
    shard_row: Optional[int] = None


@dataclass(frozen=True)
class Rows:
    """How many rows of a kind, and the first few (with their values, for the kinds that keep them)."""

    count: int = 0
    first: tuple[Location, ...] = ()
    values: tuple[str, ...] = ()


#: The kinds of rows a split's facts count, in the order FileReport keeps them.
ROW_KINDS = ("invalid", "oversized", "not_object", "no_group", "no_time", "bad_time", "no_input", "time_leaks")


@dataclass(frozen=True)
class SplitFacts:
    """One split as read."""

    split: str  # "train" or "eval"
    shown: str  # the split path, secrets masked
    fmt: str  # "jsonl", "csv" or "parquet"
    sharded: bool  # several objects read as one (a glob): rows are located in their shard
    rows: int  # well-formed data rows
    input_field: Optional[str]  # the input column found (CSV, Parquet), when none is configured
    absent_columns: tuple[str, ...]  # configured keys no object of the split has as a column
    # rows skipped unread:
    invalid: Rows = Rows()  # not valid JSON, not UTF-8, a malformed CSV record
    oversized: Rows = Rows()  # longer than the limit on one record
    not_object: Rows = Rows()  # valid JSON, but not an object
    # rows the checks could not use:
    no_group: Rows = Rows()  # no group_key value (absent, null or empty)
    no_time: Rows = Rows()  # no time_key value
    bad_time: Rows = Rows()  # a time_key value that is no time (values kept)
    no_input: Rows = Rows()  # no input to compare
    # and what they found in this split alone:
    time_leaks: Rows = Rows()  # train: at or after the cutoff; eval: before it (values kept)


@dataclass(frozen=True)
class Shared:
    """A value found in both splits, with the first row of it in each."""

    value: Optional[str]  # an excerpt; None: no text of it was at hand (found from cached index parts)
    train: Location
    eval: Location


@dataclass(frozen=True)
class Overlap:
    """The values found in both splits: how many, in how many rows of each, and the first few by eval row."""

    count: int
    train_rows: int
    eval_rows: int
    first: tuple[Shared, ...]


@dataclass(frozen=True)
class DataFacts:
    """Both splits read and compared."""

    group_key: Optional[str]
    time_key: Optional[str]  # None when the time check was off (no time_key, or no valid cutoff)
    cutoff: Optional[str]  # the cutoff as the plan writes it
    input_fields: Optional[tuple[str, ...]]  # None: the default fields, the first present in a row
    record_limit: int  # the limit on one record (bytes): what an oversized row was longer than
    train: SplitFacts
    eval: SplitFacts
    shared_groups: Optional[Overlap] = None  # group_key values in both
    shared_inputs: Optional[Overlap] = None  # normalized inputs in both

    @property
    def complete(self) -> bool:
        """False when a limit skipped rows unread: the answer is not the whole one (never cached)."""
        return not (self.train.oversized.count or self.eval.oversized.count)


@dataclass(frozen=True)
class Stopped:
    """The checks gave no answer: what stopped them (one error per split that could not be listed, or the one met)."""

    errors: tuple[DataError, ...]


@dataclass(frozen=True)
class SameData:
    """Train and eval are the same file or object (`what`): there is nothing to compare."""

    shown: str
    what: str  # "file" or "object"


CheckResult = Union[DataFacts, Stopped, SameData]


# --------------------------------------------------------------------------
# as JSON, for the result cache


def _location(data: Any) -> Location:
    row, shard, shard_row = data
    return Location(_int(row), None if shard is None else _str(shard), None if shard_row is None else _int(shard_row))


def _rows(data: Any) -> Rows:
    count, first, values = data
    return Rows(_int(count), tuple(_location(item) for item in first), tuple(_str(value) for value in values))


def _overlap(data: Any) -> Optional[Overlap]:
    if data is None:
        return None
    count, train_rows, eval_rows, first = data
    shared = tuple(Shared(None if value is None else _str(value), _location(train), _location(eval_)) for value, train, eval_ in first)
    return Overlap(_int(count), _int(train_rows), _int(eval_rows), shared)


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("not an integer")
    return value


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def _optional_str(value: Any) -> Optional[str]:
    return None if value is None else _str(value)


def _dump_location(location: Location) -> list:
    return [location.row, location.shard, location.shard_row]


def _dump_rows(rows: Rows) -> list:
    return [rows.count, [_dump_location(item) for item in rows.first], list(rows.values)]


def _dump_overlap(overlap: Optional[Overlap]) -> Optional[list]:
    if overlap is None:
        return None
    return [overlap.count, overlap.train_rows, overlap.eval_rows,
            [[shared.value, _dump_location(shared.train), _dump_location(shared.eval)] for shared in overlap.first]]


def _dump_split(split: SplitFacts) -> dict:
    data: dict[str, Any] = {"split": split.split, "shown": split.shown, "fmt": split.fmt, "sharded": split.sharded, "rows": split.rows,
                            "input_field": split.input_field, "absent_columns": list(split.absent_columns)}
    data.update((kind, _dump_rows(getattr(split, kind))) for kind in ROW_KINDS)
    return data


def _split(data: dict) -> SplitFacts:
    if type(data["sharded"]) is not bool:
        raise TypeError("not a boolean")
    return SplitFacts(_str(data["split"]), _str(data["shown"]), _str(data["fmt"]), data["sharded"], _int(data["rows"]),
                      _optional_str(data["input_field"]), tuple(_str(name) for name in data["absent_columns"]),
                      **{kind: _rows(data[kind]) for kind in ROW_KINDS})


def to_json(facts: DataFacts) -> dict:
    """`facts` as plain JSON values."""
    return {
        "group_key": facts.group_key, "time_key": facts.time_key, "cutoff": facts.cutoff,
        "input_fields": None if facts.input_fields is None else list(facts.input_fields), "record_limit": facts.record_limit,
        "train": _dump_split(facts.train), "eval": _dump_split(facts.eval),
        "shared_groups": _dump_overlap(facts.shared_groups), "shared_inputs": _dump_overlap(facts.shared_inputs),
    }


def from_json(data: Any) -> Optional[DataFacts]:
    """The facts `to_json` gave, or None when `data` is not such facts (another version, a damaged entry)."""
    try:
        inputs = data["input_fields"]
        return DataFacts(
            _optional_str(data["group_key"]), _optional_str(data["time_key"]), _optional_str(data["cutoff"]),
            None if inputs is None else tuple(_str(name) for name in inputs), _int(data["record_limit"]),
            _split(data["train"]), _split(data["eval"]), _overlap(data["shared_groups"]), _overlap(data["shared_inputs"]),
        )
    except (KeyError, TypeError, ValueError, IndexError):
        return None

