"""The data checks' facts as findings and notes: what each fact means for PL207-PL211, in words.

`services/split_data` reads the splits and returns typed facts (facts.py);
here they become findings (a code, the split or boundary key they point at,
the message) and notes (what the user should know that is no finding: rows
skipped, a check that could not run). rules/leakage.py turns these into the
rules' problems at their routes. Loaded with the data services, only for a
plan whose split files are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from planlint.core.messages import sanitize
from planlint.services.split_data import DEFAULT_INPUT_FIELDS
from planlint.services.split_data.facts import CheckResult, DataFacts, Location, Overlap, Rows, SameData, SplitFacts, Stopped, size_text

#: Longest shown excerpt of a value, in characters (before escaping): the facts keep one more.
SHOW_CHARS = 40


@dataclass(frozen=True)
class DataFinding:
    """PL207, PL208 or PL209 at the `path` of `split`; PL210 or PL211 at the boundary `key`."""

    code: str
    split: str  # "train" or "eval": the split it is about
    message: str
    key: Optional[str] = None  # "group_key" | "time_key": the finding points at that boundary key instead


@dataclass(frozen=True)
class DataNote:
    """Not a finding: something the user should know about the data checks."""

    split: Optional[str]
    message: str
    # The checks gave no whole answer: a limit cut them short (data.time_budget,
    # data.max_bytes, the size of one record) or a split could not be read at all.
    # PL006 with --require-data: planlint never passes a split it could not read.
    incomplete: bool = False


def findings(result: CheckResult) -> tuple[list[DataFinding], list[DataNote]]:
    """What `check_split_data`'s result means: the findings, in the order they are reported, and the notes."""
    if isinstance(result, SameData):
        return [], [DataNote("eval", f"{result.shown}: train and eval are the same {result.what} (see PL202); data-aware checks skipped")]
    if isinstance(result, Stopped):
        return [], [DataNote(error.split, error.message + "; data-aware checks skipped", incomplete=True) for error in result.errors]
    facts = result
    found: list[DataFinding] = []
    splits = (facts.train, facts.eval)
    for split in splits:  # a declared boundary that rows do not carry is never checked silently
        if facts.group_key is not None and split.no_group.count:
            found.append(_missing_key(split, "group_key", facts.group_key, split.no_group, "group leakage (PL207)"))
        if facts.time_key is not None and split.no_time.count:
            found.append(_missing_key(split, "time_key", facts.time_key, split.no_time, "time leakage (PL208)"))
        if facts.time_key is not None and split.bad_time.count:
            found.append(_unreadable_time(split, facts.time_key))
    if facts.group_key is not None and facts.shared_groups is not None:
        found.append(_shared_groups(facts.group_key, facts.shared_groups, facts))
    if facts.time_key is not None and facts.cutoff is not None:
        for split in splits:
            if split.time_leaks.count:
                found.append(_time_leaks(split, facts.time_key, facts.cutoff))
    if facts.shared_inputs is not None:
        found.append(_shared_inputs(facts.shared_inputs, facts))
    notes = [note for note in (_read_note(split, facts) for split in splits) if note is not None]
    return found, notes


# --------------------------------------------------------------------------
# words


def show_value(text: str, limit: int = SHOW_CHARS) -> str:
    """An excerpt for a message: at most `limit` characters (then an ellipsis), control and
    format characters escaped, in single quotes."""
    cut = len(text) > limit
    text = text[:limit]
    if not (text.isascii() and text.isprintable() and "\\" not in text and "'" not in text):
        text = sanitize(text.replace("\\", "\\\\").replace("'", "\\'"))
    return "'" + text + ("…'" if cut else "'")


def _plural(count: int, word: str, plural: Optional[str] = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _at(location: Location) -> str:
    """"row 12", or "row 12 of part-00003.parquet" in a split of several objects."""
    return f"row {location.row}" if location.shard is None else f"row {location.shard_row} of {location.shard}"


def _rows_text(rows: Rows, split: SplitFacts) -> str:
    """"row 4" or "rows 4, 9, 12, …" (the first few); in a sharded split "row 4 of a.jsonl, row 9 of b.jsonl"."""
    more = ", …" if rows.count > len(rows.first) else ""
    if split.sharded:
        return ", ".join(_at(location) for location in rows.first) + more
    return ("row " if rows.count == 1 else "rows ") + ", ".join(str(location.row) for location in rows.first) + more


def _hints(*splits: SplitFacts) -> str:
    """How to read the row numbers, e.g. "(row N is line N of each file)"."""
    by_hint: dict[str, list[str]] = {}
    for split in splits:
        by_hint.setdefault(("shards:" if split.sharded else "") + split.fmt, []).append(split.split)
    if len(by_hint) == 1:
        return f"({_row_hint(next(iter(by_hint)), plural=len(splits) > 1)})"
    return "(" + "; ".join(f"{' and '.join(names)}: {_row_hint(kind)}" for kind, names in by_hint.items()) + ")"


def _row_hint(kind: str, plural: bool = False) -> str:
    """What "row N" means for a format ("jsonl") or a format's shards ("shards:jsonl")."""
    if kind.startswith("shards:"):
        fmt = kind[len("shards:"):]
        if fmt == "jsonl":
            return "row N of a shard is line N of that object"
        if fmt == "csv":
            return "row 1 of a shard is the first row after its header"
        return "row 1 of a shard is its first row"
    if kind == "jsonl":
        return "row N is line N of each file" if plural else "row N is line N of the file"
    if kind == "csv":
        return "row 1 is the first row after the header"
    return "row 1 is the first row"


def _more(total: int, shown: int) -> str:
    return f", and {total - shown} more" if total > shown else ""


def _examples(overlap: Overlap, shown: Iterable[str]) -> str:
    texts = [f"{text} (train {_at(shared.train)}, eval {_at(shared.eval)})" for text, shared in zip(shown, overlap.first)]
    return f"{'; '.join(texts)}{_more(overlap.count, len(texts))}"


# --------------------------------------------------------------------------
# the findings


def _shared_groups(group_key: str, overlap: Overlap, facts: DataFacts) -> DataFinding:
    count = overlap.count
    values = [show_value(shared.value or "") for shared in overlap.first]
    return DataFinding(
        "PL207",
        "eval",
        f"{_plural(count, group_key + ' value')} {'occurs' if count == 1 else 'occur'} in both train and eval "
        f"({_plural(overlap.train_rows, 'train row')}, {_plural(overlap.eval_rows, 'eval row')}): "
        f"{_examples(overlap, values)}. "
        f"Each {group_key} must sit wholly in one split: move all rows of "
        f"{'this value' if count == 1 else 'these values'} to train or to eval "
        f"{_hints(facts.train, facts.eval)}",
    )


def _time_leaks(split: SplitFacts, time_key: str, cutoff: str) -> DataFinding:
    leaks = split.time_leaks
    shown = [f"{_at(location)} {show_value(value)}" for location, value in zip(leaks.first, leaks.values)]
    rows = _plural(leaks.count, f"{split.split} row")
    verb = "is" if leaks.count == 1 else "are"
    if split.split == "train":
        what = f"{rows} {verb} dated at or after the cutoff {cutoff}"
        fix = "train rows must be strictly before the cutoff: move them to eval, drop them, or move the cutoff"
    else:
        what = f"{rows} {verb} dated before the cutoff {cutoff}"
        fix = "eval rows must be at or after the cutoff: move them to train, drop them, or move the cutoff"
    return DataFinding("PL208", split.split, f"{what} ({time_key}): {', '.join(shown)}{_more(leaks.count, len(shown))}; {fix} {_hints(split)}")


def _missing_key(split: SplitFacts, key: str, name: str, rows: Rows, check: str) -> DataFinding:
    total = split.rows
    if name in split.absent_columns:
        what = f"the {split.split} file has no {show_value(name)} column"
    elif rows.count == total:
        what = f"no {split.split} row has {show_value(name)} (all {_plural(total, 'row')} lack it, or it is null or empty; first: {_at(rows.first[0])})"
    else:
        what = f"{_plural(rows.count, split.split + ' row')} of {total} lack {show_value(name)} or have it null or empty (first: {_at(rows.first[0])})"
    return DataFinding(
        "PL210", split.split,
        f"splits.boundary.{key} {show_value(name)} is missing from the data: {what}, so those rows were not checked for {check}: "
        f"fix the key's name in the plan, or fill it in every row {_hints(split)}",
        key=key,
    )


def _unreadable_time(split: SplitFacts, time_key: str) -> DataFinding:
    bad = split.bad_time
    shown = ", ".join(f"{_at(location)} {show_value(value)}" for location, value in zip(bad.first, bad.values))
    return DataFinding(
        "PL211", split.split,
        f"{_plural(bad.count, split.split + ' row')} {'has' if bad.count == 1 else 'have'} a {show_value(time_key)} that is no time planlint can read "
        f"({shown}{_more(bad.count, len(bad.first))}), so {'it was' if bad.count == 1 else 'they were'} not checked for time leakage (PL208): "
        f"write ISO 8601 dates or date-times (2026-08-01, 2026-08-01T12:00:00Z) or epoch seconds or milliseconds as numbers {_hints(split)}",
        key="time_key",
    )


def _fields_text(facts: DataFacts) -> str:
    """What PL209 compared on."""
    if facts.input_fields:
        return "field" + ("s " if len(facts.input_fields) > 1 else " ") + ", ".join(facts.input_fields)
    splits = (facts.train, facts.eval)
    used = {split.input_field for split in splits if split.input_field}
    if len(used) == 1 and all(split.fmt != "jsonl" for split in splits):
        return f"field {used.pop()}"
    return "the first of " + ", ".join(DEFAULT_INPUT_FIELDS) + " present"


def _shared_inputs(overlap: Overlap, facts: DataFacts) -> DataFinding:
    count = overlap.count
    # an input found only from cached index parts may have no text at hand
    texts = [show_value(shared.value) if shared.value is not None else "an input" for shared in overlap.first]
    return DataFinding(
        "PL209",
        "eval",
        f"{_plural(count, 'input')} {'occurs' if count == 1 else 'occur'} in both train and eval "
        f"({_plural(overlap.train_rows, 'train row')}, {_plural(overlap.eval_rows, 'eval row')}; compared on "
        f"{_fields_text(facts)} after NFKC, case-folding and whitespace collapsing): "
        f"{_examples(overlap, texts)}. "
        f"An eval input seen in training does not measure generalisation: remove "
        f"{'it' if count == 1 else 'them'} from train (or from eval) {_hints(facts.train, facts.eval)}",
    )


# --------------------------------------------------------------------------
# the note on what could not be read


def _read_note(split: SplitFacts, facts: DataFacts) -> Optional[DataNote]:
    """Rows skipped unread, and rows with no input (rows without a key, or with an unreadable time,
    are PL210/PL211 findings, not notes)."""
    parts: list[str] = []
    bad_kind = "not valid JSON" if split.fmt == "jsonl" else ("malformed CSV" if split.fmt == "csv" else "unreadable")
    if split.invalid.count:
        parts.append(f"{_plural(split.invalid.count, 'row')} skipped as {bad_kind} ({_rows_text(split.invalid, split)})")
    if split.oversized.count:
        parts.append(
            f"{_plural(split.oversized.count, 'row')} longer than {size_text(facts.record_limit)} (the limit on one record) "
            f"skipped unread ({_rows_text(split.oversized, split)})"
        )
    if split.not_object.count:
        parts.append(f"{_plural(split.not_object.count, 'row')} skipped as not a JSON object ({_rows_text(split.not_object, split)})")
    total = split.rows
    if split.no_input.count:
        if facts.input_fields:
            name = " / ".join(facts.input_fields)
        elif split.input_field:
            name = split.input_field
        else:
            name = "an input field (" + ", ".join(DEFAULT_INPUT_FIELDS) + ")"
        if split.no_input.count == total:
            parts.append(f"no row has {name}, so duplicates across splits were not checked")
        else:
            parts.append(f"{_plural(split.no_input.count, 'row')} with no or an empty {name} ({_rows_text(split.no_input, split)}) not checked for duplicates")
    if total == 0 and not split.invalid.count and not split.oversized.count and not split.not_object.count:
        parts.append("no data rows")
    if not parts:
        return None
    # rows skipped unread by a limit: the split was not read whole
    return DataNote(split.split, f"{split.shown}: " + "; ".join(parts) + f" {_hints(split)}", incomplete=bool(split.oversized.count))
