"""Data-aware split checks (PL207 group-leakage, PL208 time-leakage,
PL209 duplicate-across-splits) over the local train and eval files.

    issues, notes = check_split_data(train, eval_, group_key="customer_id",
                                     time_key="created_at", cutoff="2026-08-01",
                                     input_fields=None, cache_dir=Path(".planlint_cache"))

The smaller file (by size on disk) is read first and only what the checks
need is kept from it: its distinct group values (with the first row and a
row count each), one 64-bit hash per distinct normalized input (with the
first row), never the rows themselves. The larger file is then streamed in
fixed-size chunks, by forked worker processes when it is large (see
_scan.py), and compared against that. Memory is therefore bounded by the
smaller split's distinct group values and inputs plus one chunk per process,
not by the size of either file. See docs/data-checks.md.

A split may also be several objects read as one (a local glob's matches,
or objects behind an `s3://`, `gs://`, `hf://` or `https://` URI, possibly a
glob): _sources lists and opens them (fsspec), counts what is read against
`data.max_bytes`, and turns a row number back into the shard that holds it.

Nothing heavy is imported at module import: pyarrow only when a Parquet
file is read, fsspec only when a split is remote.
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from planlint.services.split_data import _base, _index_parts, _scan, _sources, _workers
from planlint.services.split_data._base import FORMATS_READ, Fields, FileReport, Sample, detect_format, row_hint
from planlint.services.split_data._parquet import PARQUET_EXTRA
from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import machine_key, read_sealed, seal
from planlint.services.split_data._sources import DEFAULT_MAX_BYTES, Source, limit_text, local_glob, local_source
from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS, parse_cutoff, show_value
from planlint.services.split_data.budget import Budget
from planlint.services.split_data.errors import DataError, MissingExtra, OverBudget, OverCap, Unreadable
from planlint.services.split_data.schemes import content_sha256

#: Seconds the data checks of one plan may take (`data.time_budget`): about
#: 20 million rows here; a gzip bomb or a file of empty lines stops there.
DEFAULT_TIME_BUDGET = 60.0

__all__ = ["DataIssue", "DataNote", "GlobMatches", "check_split_data", "local_glob", "CACHE_VERSION", "DEFAULT_MAX_BYTES"]

#: Bump when what is checked or how results are worded changes: old cache
#: entries then stop matching.
CACHE_VERSION = 4

#: How many offending values / rows a message names before "and N more".
EXAMPLES = 5


@dataclass
class DataIssue:
    """A finding: PL207, PL208 or PL209 at the `path` of `split`; PL210 or PL211 at the boundary `key`."""

    code: str  # "PL207" | "PL208" | "PL209" | "PL210" | "PL211"
    split: str  # "train" or "eval": the split file it is about
    message: str
    key: str | None = None  # "group_key" | "time_key": the finding points at that boundary key instead


@dataclass
class DataNote:
    """Not a finding: something the user should know about the data check
    (skipped rows, a check that could not run)."""

    split: str | None
    message: str
    # The checks did not run to the end: a limit cut them short
    # (data.time_budget, data.max_bytes, the size of one record), or a split
    # could not be listed or read at all (no such object, access denied, the
    # extra its scheme or format needs is not installed, a format planlint
    # does not read, a file that cannot be decoded). Never cached; PL006 with
    # --require-data: planlint never passes a split it could not read.
    over_budget: bool = False


@dataclass
class GlobMatches:
    """A local split path with wildcards and its matches: (path as the pattern spells it, file), sorted."""

    pattern: str
    matches: list


#: What a split is given as: one local file, a local glob's matches, or a URI.
SplitInput = "Path | GlobMatches | str"


def check_split_data(
    train_path,
    eval_path,
    *,
    group_key: str | None,
    time_key: str | None,
    cutoff: str | None,
    input_fields: list[str] | None,
    cache_dir: Path | None,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    project_root: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
    trace: dict | None = None,
) -> tuple[list[DataIssue], list[DataNote]]:
    """Check two splits against each other.

    Each split is a local file (a Path), a local glob's matches
    (GlobMatches) or a URI (`s3://...`, `gs://...`, `hf://...`,
    `https://...`, possibly with wildcards), whose objects are listed here,
    within the time budget, and read as one split. `max_bytes` caps what one
    split reads (local files: their size on disk; remote objects: the bytes
    read from them).

    PL207 fires (at eval) when a `group_key` value occurs in both files;
    PL208 (at train, and separately at eval) when a train row's `time_key` is
    at or after `cutoff` or an eval row's is before it; PL209 (at eval) when
    the same normalized input occurs in both files. The time check runs only
    with both `time_key` and a valid `cutoff` (PL204 reports a bad one).
    Never raises for bad data: unreadable rows and files become notes.
    Results are cached in `cache_dir` only when sealed with this machine's
    key (`planlint.core.cache_seal`; a key inside `project_root` is refused).
    `clock` is what `time_budget` is measured on (time.monotonic; tests inject one).
    `trace`, when given, is emptied and filled with how the check read the
    splits (in this process or by workers, which fell back, how many
    objects came from their cached index parts): what tests look at, never
    what planlint decides on.
    """
    train_path, eval_path = _as_input(train_path), _as_input(eval_path)
    group_key = str(group_key) if group_key is not None and str(group_key) != "" else None
    time_key = str(time_key) if time_key is not None and str(time_key) != "" else None
    inputs = tuple(str(name) for name in input_fields) if input_fields else None
    cut = parse_cutoff(cutoff) if (time_key is not None and cutoff is not None) else None
    if cut is None:
        time_key = None

    try:
        if isinstance(train_path, Path) and isinstance(eval_path, Path) and train_path.resolve() == eval_path.resolve():
            return [], [DataNote("eval", f"{eval_path}: train and eval are the same file (see PL202); data-aware checks skipped")]
        if isinstance(train_path, str) and train_path == eval_path:
            return [], [DataNote("eval", f"{_sources.show_uri(eval_path)}: train and eval are the same object (see PL202); data-aware checks skipped")]
    except OSError:
        pass

    budget = Budget(time_budget, clock)
    if trace is None:
        trace = {}
    trace.clear()
    try:
        return _check_within_budget(train_path, eval_path, group_key, time_key, cut, inputs, cache_dir,
                                    max_bytes, project_root, budget, trace)
    except DataError as error:  # the one place: every way the checks can stop without an answer
        if isinstance(error, OverBudget):
            # Where it stopped, not why: a stalled server and a large split look alike here.
            error.message = f"the data checks stopped after {time_budget:g}s (limit data.time_budget)" + \
                (f" while reading the {error.split} split" if error.split else "")
        return _stopped([error])


def _stopped(errors: list[DataError]) -> tuple[list[DataIssue], list[DataNote]]:
    return [], [DataNote(error.split, error.message + "; data-aware checks skipped", over_budget=True) for error in errors]


def _as_input(value):
    if isinstance(value, (GlobMatches, Source)):
        return value
    if isinstance(value, str) and _sources.scheme(value) is not None:
        return value
    return Path(value)


def _open_sources(train_path, eval_path, max_bytes, budget: Budget):
    """Each split as a Path (one local file) or a Source (objects read one after another), and the
    problems of the splits that could not be listed (each split's, so that a user fixing one learns
    of the other in the same run: an extra missing for each of two schemes, say)."""
    opened: dict = {}
    problems: list[DataError] = []
    for split, given in (("train", train_path), ("eval", eval_path)):
        try:
            if isinstance(given, GlobMatches):
                opened[split] = local_source(given.pattern, given.matches)
            elif isinstance(given, str):
                opened[split] = _sources.remote_source(given, split, max_bytes=max_bytes, budget=budget)
            else:
                opened[split] = given
        except DataError as problem:
            problem.split = split
            if isinstance(problem, OverBudget):
                raise
            problems.append(problem)
    return opened, problems


def _check_within_budget(train_path, eval_path, group_key, time_key, cut, inputs, cache_dir, max_bytes, project_root, budget: Budget,
                         trace: dict):
    # Worker processes for the larger split's remote objects are forked now, while this process
    # runs no other thread (listing the objects starts the clients' IO thread): see _workers.
    pool = _workers.Pool.start((train_path, eval_path), budget, trace)
    try:
        return _check_sources(train_path, eval_path, group_key, time_key, cut, inputs, cache_dir, max_bytes, project_root, budget, trace,
                              pool=pool)
    finally:
        if pool is not None:
            pool.kill()  # idle ones would leave at the closed pipe; one still reading is stopped


def _check_sources(train_path, eval_path, group_key, time_key, cut, inputs, cache_dir, max_bytes, project_root, budget, trace, pool=None):
    opened, problems = _open_sources(train_path, eval_path, max_bytes, budget)
    if problems:
        return _stopped(problems)
    train_path, eval_path = opened["train"], opened["eval"]

    formats = {}
    for split, path in (("train", train_path), ("eval", eval_path)):
        found = (path.fmt, path.gz) if isinstance(path, Source) else detect_format(path)
        if found is None:
            raise Unreadable(f"{path}: not a supported split format ({FORMATS_READ})", split=split)
        formats[split] = found
    for split, path in (("train", train_path), ("eval", eval_path)):
        if formats[split][0] == "parquet" and not _have_pyarrow():
            raise MissingExtra(f"{path}: {PARQUET_EXTRA}", split=split)
    if max_bytes is not None:
        for split, path in (("train", train_path), ("eval", eval_path)):
            local = [path] if isinstance(path, Path) else [item for item in path.objects if isinstance(item, Path)]
            size = sum(_sources.local_size(item) for item in local)
            if size > max_bytes:
                raise OverCap(f"{path}: {size:,} bytes on disk, more than {limit_text(max_bytes)} (limit data.max_bytes)", split=split)

    params = {
        "version": CACHE_VERSION,
        "train": str(train_path),
        "eval": str(eval_path),
        "group_key": group_key,
        "time_key": time_key,
        "cutoff": cut.aware.isoformat() if cut else None,
        "cutoff_text": cut.text if cut else None,
        "input_fields": list(inputs) if inputs else None,
    }
    cache_file: Path | None = None
    seal_key = None
    if cache_dir is not None:
        seal_key = machine_key(project_root)
    pieces: _PieceCaches | None = None
    if seal_key is not None:
        try:
            ids = {"train": _content_ids(train_path), "eval": _content_ids(eval_path)}
        except OSError as error:
            raise Unreadable(f"could not read the split files ({_os_error(error)})") from None
        key = _cache_key(params, ids["train"], ids["eval"])
        pieces = _PieceCaches(Path(cache_dir), seal_key, params, ids)
        if key is not None:  # None: an object without a version or ETag, not cached
            cache_file = Path(cache_dir) / "split-data" / f"{key}.json"
            cached = _cache_read(cache_file, seal_key, key)
            if cached is not None:
                return cached

    issues, notes = _check(train_path, eval_path, formats, group_key, time_key, cut, inputs, budget, trace, pieces, pool)
    if not any(note.over_budget for note in notes):
        # a result a limit cut short is not kept: it is not the answer
        if cache_file is not None:
            _cache_write(cache_file, issues, notes, seal_key, cache_file.stem)
        if pieces is not None:
            pieces.write()
    return issues, notes


# --------------------------------------------------------------------------
# the check


def _shown(given) -> str:
    if isinstance(given, str):
        return _sources.show_uri(given)
    if isinstance(given, GlobMatches):
        return given.pattern
    return str(given)


def _os_error(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return _sources.safe_text(error.strerror)
    text = str(error) or type(error).__name__
    return _sources.safe_text(text[:200])


def _size_of(path) -> int:
    return path.size() if isinstance(path, Source) else path.stat().st_size


def _have_pyarrow() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("pyarrow") is not None
    except (ImportError, ValueError):
        return False


class _Side:
    """A split file and what was found in it, for messages."""

    def __init__(self, split: str, path: Path, fmt: str, gz: bool) -> None:
        self.split, self.path, self.fmt, self.gz = split, path, fmt, gz
        self.report = FileReport()

    @property
    def time_leaks(self) -> Sample:
        return self.report.time_leaks

    @property
    def sharded(self) -> bool:
        return isinstance(self.path, Source) and self.path.sharded

    def at(self, row: int) -> str:
        """"row 12", or "row 12 of part-00003.parquet" in a split of several objects."""
        if not self.sharded:
            return f"row {row}"
        name, local = self.path.locate(row)
        return f"row {local} of {name}"


class _PieceCaches:
    """What the per-object caches of a check are made from (see _index_parts)."""

    def __init__(self, directory: Path, seal_key: bytes, params: dict, ids: dict) -> None:
        self.directory, self.seal_key, self.params, self.ids = directory, seal_key, params, ids
        self.made: list["_index_parts._ObjectCache"] = []

    def make_parts(self, side: "_Side") -> "_index_parts.IndexPartCache":
        """The cache of the index parts of one split's objects: keyed by what reading one object depends on
        (not by the other split, nor by the paths as written: an hf:// path names its revision, and a new
        commit must not make unchanged files miss)."""
        base = {name: value for name, value in self.params.items() if name not in ("train", "eval")}
        base.update(split=side.split, fmt=side.fmt, gz=side.gz, kind="index-part")
        ids = self.ids[side.split]
        made = _index_parts.IndexPartCache(self.directory, self.seal_key, CACHE_VERSION, base, ids if isinstance(ids, list) else None)
        self.made.append(made)
        return made

    def write(self) -> None:
        for made in self.made:
            made.write()


def _check(train_path, eval_path, formats, group_key, time_key, cut, inputs, budget: Budget, trace: dict, pieces: "_PieceCaches | None" = None,
           pool: "_workers.Pool | None" = None):
    train = _Side("train", train_path, *formats["train"])
    held_out = _Side("eval", eval_path, *formats["eval"])
    try:
        train_size, eval_size = _size_of(train_path), _size_of(eval_path)
    except OSError as error:
        raise Unreadable(f"{train_path}: could not be read ({_os_error(error)})", split="train") from None
    small, big = (held_out, train) if eval_size <= train_size else (train, held_out)
    fields = Fields(group_key, time_key, inputs)
    if pool is not None:
        pool.prepare(big.path, min(train_size, eval_size))  # the workers get ready to read it while this process reads the smaller split

    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived dicts; nothing here makes cycles
    try:
        # a split of objects: one index part per object, cached parts not read again (_index_parts); the
        # inputs are then digested with the parts' keyed digest, on both sides
        small_parts = pieces.make_parts(small) if pieces is not None and isinstance(small.path, Source) else None
        big_parts = pieces.make_parts(big) if pieces is not None and isinstance(big.path, Source) else None
        keyed = small_parts or big_parts
        side = small
        small_spec = _scan.SideSpec(small.split, small.path, small.fmt, small.gz, fields, cut, budget, trace)
        if small_parts is not None:
            index, small.report = _index_parts.read_small_objects(small_spec, small.path, small_parts, keyed=big_parts is not None)
        else:
            index, small.report = _scan.read_small(small_spec, keyed.digest if keyed is not None else _scan.digest)
            index.digest_key = keyed.digest_key if keyed is not None else None  # what a worker process rebuilds the digest from (_workers)
        side = big
        big_spec = _scan.SideSpec(big.split, big.path, big.fmt, big.gz, fields, cut, budget, trace)
        if big_parts is not None or (pool is not None and pool.usable(big.path)):
            # several objects: one index part each, cached parts not read again, remote ones by worker processes
            result = _index_parts.read_big_objects(big_spec, index, big.path, big_parts, pool)
            if big_parts is not None:
                _index_parts.fill_texts(result, index, small_spec, small_parts, big.path, big_parts)
        else:
            result = _scan.read_big(big_spec, index)
        big.report = result.report
    except OverBudget as over:
        over.split = side.split  # the split being read when the budget ran out
        raise
    except OverCap as limit:  # one record too large, or the split's bytes (data.max_bytes)
        where = side.path
        if limit.row is not None and isinstance(side.path, Source) and side.path.sharded:
            name, limit.row = side.path.locate(limit.row)
            where = f"{side.path} ({name})"
        raise type(limit)(f"{where}: {limit.message or 'a record is too large'}: the data checks stopped there", split=side.split) from None
    except MissingExtra:
        raise
    except DataError as error:  # a remote object that could not be opened or read
        error.split = side.split
        raise
    except Exception as error:  # OSError, gzip/zlib errors, EOFError, pyarrow errors, ...: what the readers do not type
        raise Unreadable(f"{side.path}: could not be read ({_os_error(error)})", split=side.split) from None
    finally:
        if gc_was_enabled:
            gc.enable()

    issues: list[DataIssue] = []
    sides = {"train": train, "eval": held_out}
    for side in (train, held_out):  # a declared boundary that rows do not carry is never checked silently
        if group_key is not None and side.report.no_group.count:
            issues.append(_missing_key_issue(side, "group_key", group_key, side.report.no_group, "group leakage (PL207)"))
        if time_key is not None and side.report.no_time.count:
            issues.append(_missing_key_issue(side, "time_key", time_key, side.report.no_time, "time leakage (PL208)"))
        if time_key is not None and side.report.bad_time.count:
            issues.append(_unreadable_time_issue(side, time_key))
    if group_key is not None and result.leaked:
        issues.append(_group_issue(group_key, small, big, index.groups, result.leaked, sides))
    if cut is not None:
        for side in (train, held_out):
            if side.time_leaks.count:
                issues.append(_time_issue(side, time_key, cut))
    if result.dups:
        issues.append(_duplicate_issue(small, big, index.hashes, index.hash_counts, result.dups, inputs, sides))
    notes = [note for note in (_file_note(side, fields) for side in (train, held_out)) if note is not None]
    return issues, notes


# --------------------------------------------------------------------------
# messages


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _rows_text(rows: list[int], count: int, side: "_Side | None" = None) -> str:
    """"row 4" or "rows 4, 9, 12, …" (the first few of `count`); in a sharded split "row 4 of a.jsonl, row 9 of b.jsonl"."""
    if side is not None and side.sharded:
        return ", ".join(side.at(row) for row in rows) + (", …" if count > len(rows) else "")
    text = ", ".join(str(row) for row in rows)
    return ("row " if count == 1 else "rows ") + text + (", …" if count > len(rows) else "")


def _hints(*sides: _Side) -> str:
    """How to read the row numbers, e.g. "(row N is line N of each file)"."""
    by_hint: dict[str, list[str]] = {}
    for side in sides:
        by_hint.setdefault(("shards:" if side.sharded else "") + side.fmt, []).append(side.split)
    if len(by_hint) == 1:
        return f"({_row_hint(next(iter(by_hint)), plural=len(sides) > 1)})"
    return "(" + "; ".join(f"{' and '.join(splits)}: {_row_hint(fmt)}" for fmt, splits in by_hint.items()) + ")"


def _row_hint(kind: str, plural: bool = False) -> str:
    if not kind.startswith("shards:"):
        return row_hint(kind, plural)
    fmt = kind[len("shards:"):]
    if fmt == "jsonl":
        return "row N of a shard is line N of that object"
    if fmt == "csv":
        return "row 1 of a shard is the first row after its header"
    return "row 1 of a shard is its first row"


def _more(total: int, shown: int) -> str:
    return f", and {total - shown} more" if total > shown else ""


def _group_issue(group_key, small: _Side, big: _Side, groups, leaked, sides) -> DataIssue:
    # first row and row count of each leaked value, per split
    per_split: dict[str, dict[str, list[int]]] = {small.split: {key: groups[key] for key in leaked}, big.split: leaked}
    train_rows = sum(entry[1] for entry in per_split["train"].values())
    eval_rows = sum(entry[1] for entry in per_split["eval"].values())
    order = sorted(leaked, key=lambda key: per_split["eval"][key][0])
    shown = [
        f"{show_value(key)} (train {sides['train'].at(per_split['train'][key][0])}, eval {sides['eval'].at(per_split['eval'][key][0])})"
        for key in order[:EXAMPLES]
    ]
    count = len(leaked)
    are = "occurs" if count == 1 else "occur"
    return DataIssue(
        "PL207",
        "eval",
        f"{_plural(count, group_key + ' value')} {are} in both train and eval "
        f"({_plural(train_rows, 'train row')}, {_plural(eval_rows, 'eval row')}): "
        f"{'; '.join(shown)}{_more(count, len(shown))}. "
        f"Each {group_key} must sit wholly in one split: move all rows of "
        f"{'this value' if count == 1 else 'these values'} to train or to eval "
        f"{_hints(sides['train'], sides['eval'])}",
    )


def _time_issue(side: _Side, time_key: str, cut) -> DataIssue:
    leaks = side.time_leaks
    shown = [f"{side.at(row)} {show_value(value)}" for row, value in zip(leaks.rows, leaks.values)]
    rows = _plural(leaks.count, f"{side.split} row")
    verb = "is" if leaks.count == 1 else "are"
    if side.split == "train":
        what = f"{rows} {verb} dated at or after the cutoff {cut.text}"
        fix = "train rows must be strictly before the cutoff: move them to eval, drop them, or move the cutoff"
    else:
        what = f"{rows} {verb} dated before the cutoff {cut.text}"
        fix = "eval rows must be at or after the cutoff: move them to train, drop them, or move the cutoff"
    return DataIssue(
        "PL208",
        side.split,
        f"{what} ({time_key}): {', '.join(shown)}{_more(leaks.count, len(shown))}; {fix} {_hints(side)}",
    )


def _missing_key_issue(side: _Side, key: str, name: str, sample: Sample, check: str) -> DataIssue:
    report = side.report
    total = report.rows
    if name in report.absent_columns:
        what = f"the {side.split} file has no {show_value(name)} column"
    elif sample.count == total:
        what = f"no {side.split} row has {show_value(name)} (all {_plural(total, 'row')} lack it, or it is null or empty; first: {side.at(sample.rows[0])})"
    else:
        what = f"{_plural(sample.count, side.split + ' row')} of {total} lack {show_value(name)} or have it null or empty (first: {side.at(sample.rows[0])})"
    return DataIssue(
        "PL210", side.split,
        f"splits.boundary.{key} {show_value(name)} is missing from the data: {what}, so those rows were not checked for {check}: "
        f"fix the key's name in the plan, or fill it in every row {_hints(side)}",
        key=key,
    )


def _unreadable_time_issue(side: _Side, time_key: str) -> DataIssue:
    bad = side.report.bad_time
    shown = ", ".join(f"{side.at(row)} {show_value(value)}" for row, value in zip(bad.rows, bad.values))
    return DataIssue(
        "PL211", side.split,
        f"{_plural(bad.count, side.split + ' row')} {'has' if bad.count == 1 else 'have'} a {show_value(time_key)} that is no time planlint can read "
        f"({shown}{_more(bad.count, len(bad.rows))}), so {'it was' if bad.count == 1 else 'they were'} not checked for time leakage (PL208): "
        f"write ISO 8601 dates or date-times (2026-08-01, 2026-08-01T12:00:00Z) or epoch seconds or milliseconds as numbers {_hints(side)}",
        key="time_key",
    )


def _fields_text(inputs, sides) -> str:
    if inputs:
        return "field" + ("s " if len(inputs) > 1 else " ") + ", ".join(inputs)
    used = {side.report.input_field for side in sides if side.report.input_field}
    if len(used) == 1 and all(side.fmt != "jsonl" for side in sides):
        return f"field {used.pop()}"
    return "the first of " + ", ".join(DEFAULT_INPUT_FIELDS) + " present"


def _duplicate_issue(small: _Side, big: _Side, hashes, hash_counts, dups, inputs, sides) -> DataIssue:
    per_split: dict[str, dict[int, tuple[int, int]]] = {
        small.split: {code: (hashes[code], hash_counts.get(code, 1)) for code in dups},
        big.split: {code: (entry[0], entry[1]) for code, entry in dups.items()},
    }
    train_rows = sum(entry[1] for entry in per_split["train"].values())
    eval_rows = sum(entry[1] for entry in per_split["eval"].values())
    order = sorted(dups, key=lambda code: per_split["eval"][code][0])
    shown = [
        f"{dups[code][2]} (train {sides['train'].at(per_split['train'][code][0])}, eval {sides['eval'].at(per_split['eval'][code][0])})"
        for code in order[:EXAMPLES]
    ]
    count = len(dups)
    return DataIssue(
        "PL209",
        "eval",
        f"{_plural(count, 'input')} {'occurs' if count == 1 else 'occur'} in both train and eval "
        f"({_plural(train_rows, 'train row')}, {_plural(eval_rows, 'eval row')}; compared on "
        f"{_fields_text(inputs, (sides['train'], sides['eval']))} after NFKC, case-folding and whitespace collapsing): "
        f"{'; '.join(shown)}{_more(count, len(shown))}. "
        f"An eval input seen in training does not measure generalisation: remove "
        f"{'it' if count == 1 else 'them'} from train (or from eval) {_hints(sides['train'], sides['eval'])}",
    )


def _file_note(side: _Side, fields: Fields) -> DataNote | None:
    report = side.report
    parts: list[str] = []
    bad_kind = "not valid JSON" if side.fmt == "jsonl" else ("malformed CSV" if side.fmt == "csv" else "unreadable")
    if report.invalid.count:
        parts.append(f"{_plural(report.invalid.count, 'row')} skipped as {bad_kind} ({_rows_text(report.invalid.rows, report.invalid.count, side)})")
    if report.oversized.count:
        parts.append(
            f"{_plural(report.oversized.count, 'row')} longer than {_base.record_limit_text(_base.MAX_LINE_BYTES)} (the limit on one record) "
            f"skipped unread ({_rows_text(report.oversized.rows, report.oversized.count, side)})"
        )
    if report.not_object.count:
        parts.append(f"{_plural(report.not_object.count, 'row')} skipped as not a JSON object ({_rows_text(report.not_object.rows, report.not_object.count, side)})")
    total = report.rows

    # Rows without the group or time key, or with an unreadable time: PL210/PL211 findings, not notes.
    if report.no_input.count:
        if fields.inputs:
            name = " / ".join(fields.inputs)
        elif report.input_field:
            name = report.input_field
        else:
            name = "an input field (" + ", ".join(DEFAULT_INPUT_FIELDS) + ")"
        if report.no_input.count == total:
            parts.append(f"no row has {name}, so duplicates across splits were not checked")
        else:
            parts.append(f"{_plural(report.no_input.count, 'row')} with no or an empty {name} ({_rows_text(report.no_input.rows, report.no_input.count, side)}) not checked for duplicates")
    if total == 0 and not report.invalid.count and not report.oversized.count and not report.not_object.count:
        parts.append("no data rows")
    if not parts:
        return None
    return DataNote(side.split, f"{side.path}: " + "; ".join(parts) + f" {_hints(side)}", over_budget=bool(report.oversized.count))


# --------------------------------------------------------------------------
# cache


def _file_sha256(path: Path) -> str:
    return content_sha256(path)


def _content_ids(path):
    """What names a split's content: the SHA-256 of a local file, or each object's version, ETag or hash (None: unknown)."""
    if isinstance(path, Source):
        return path.identities()
    return _file_sha256(path)


def _cache_key(params: dict, train_ids, eval_ids) -> str | None:
    """The cache key of a check (given each split's content ids), or None when a split's content has no name (an https:// object without an ETag)."""
    if train_ids is None or eval_ids is None:
        return None
    material = json.dumps({**params, "train_sha256": train_ids, "eval_sha256": eval_ids}, sort_keys=True)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _cache_read(path: Path, seal_key: bytes, key: str) -> tuple[list[DataIssue], list[DataNote]] | None:
    """The entry stored under `key`, if this machine sealed it (a committed entry is not trusted)."""
    data = read_sealed(path, seal_key, "split-data", key, 4 << 20)
    try:
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return None
        issues = [DataIssue(str(code), str(split), str(message), None if key is None else str(key)) for code, split, message, key in data["issues"]]
        notes = [DataNote(None if split is None else str(split), str(message)) for split, message in data["notes"]]
        return issues, notes
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cache_write(path: Path, issues: list[DataIssue], notes: list[DataNote], seal_key: bytes, key: str) -> None:
    data = {
        "version": CACHE_VERSION,
        "issues": [[issue.code, issue.split, issue.message, issue.key] for issue in issues],
        "notes": [[note.split, note.message] for note in notes],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, seal(seal_key, "split-data", key, data))
    except OSError:
        pass  # a cache that cannot be written is only a slower next run
