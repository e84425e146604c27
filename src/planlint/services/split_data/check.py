"""One data check: two splits read and compared, what was found returned as facts (facts.py).

    facts = check_split_data(train, eval_, group_key="customer_id",
                             time_key="created_at", cutoff="2026-08-01",
                             input_fields=None, cache_dir=Path(".planlint_cache"))

The steps, the caches and the memory bound: docs/ARCHITECTURE.md ("The data
path") and docs/data-checks.md. Every way a check can stop without an answer
is a DataError (errors.py), caught here, once.
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from pathlib import Path
from typing import Any, Callable, Optional

from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import machine_key, read_sealed, seal
from planlint.services.split_data import _base, _file_workers, _index, _index_parts, _scan, _sources, _workers
from planlint.services.split_data._base import Fields, FileReport, Sample
from planlint.services.split_data._parquet import PARQUET_EXTRA
from planlint.services.split_data._sources import DEFAULT_MAX_BYTES, Source, limit_text, local_source
from planlint.services.split_data._values import Cutoff, excerpt, parse_cutoff
from planlint.services.split_data.budget import Budget
from planlint.services.split_data.errors import DataError, MissingExtra, OverBudget, OverCap, Unreadable
from planlint.services.split_data.resolve import GlobMatches, SplitPath
from planlint.services.split_data.facts import (
    EXAMPLES,
    CheckResult,
    DataFacts,
    Location,
    Overlap,
    Rows,
    SameData,
    Shared,
    SplitFacts,
    Stopped,
    from_json,
    to_json,
)
from planlint.services.split_data.schemes import content_sha256

#: Seconds the data checks of one plan may take (`data.time_budget`): about
#: 20 million rows here; a gzip bomb or a file of empty lines stops there.
DEFAULT_TIME_BUDGET = 60.0

#: Bump when what is checked, or what the cache holds, changes: old cache entries then stop matching.
CACHE_VERSION = 5


def check_split_data(
    train_path: SplitPath,
    eval_path: SplitPath,
    *,
    group_key: Optional[str],
    time_key: Optional[str],
    cutoff: Optional[str],
    input_fields: Optional[list[str]],
    cache_dir: Optional[Path],
    time_budget: Optional[float] = DEFAULT_TIME_BUDGET,
    max_bytes: Optional[int] = DEFAULT_MAX_BYTES,
    project_root: Optional[Path] = None,
    clock: Callable[[], float] = time.monotonic,
    trace: Optional[dict] = None,
) -> CheckResult:
    """Read two splits and compare them: DataFacts, or why there are none (Stopped, SameData).

    Each split is a local file (a Path), a local glob's matches
    (GlobMatches) or a URI (`s3://...`, `gs://...`, `hf://...`,
    `https://...`, possibly with wildcards), whose objects are listed here,
    within the time budget, and read as one split. `max_bytes` caps what one
    split reads (local files: their size on disk; remote objects: the bytes
    read from them).

    The facts hold, per split, what was read and what could not be used, and
    across the splits the `group_key` values and the normalized inputs found
    in both; the time check runs only with both `time_key` and a valid
    `cutoff` (PL204 reports a bad one). Never raises for bad data.
    Results are cached in `cache_dir` only when sealed with this machine's
    key (`planlint.core.cache_seal`; a key inside `project_root` is refused).
    `clock` is what `time_budget` is measured on (time.monotonic; tests inject one).
    `trace`, when given, is emptied and filled with how the check read the
    splits (in this process or by workers, which fell back, how many
    objects came from their cached index parts): what tests look at, never
    what planlint decides on.
    """
    train_given, eval_given = _as_input(train_path), _as_input(eval_path)
    group_key = str(group_key) if group_key is not None and str(group_key) != "" else None
    time_key = str(time_key) if time_key is not None and str(time_key) != "" else None
    inputs = tuple(str(name) for name in input_fields) if input_fields else None
    cut = parse_cutoff(cutoff) if (time_key is not None and cutoff is not None) else None
    if cut is None:
        time_key = None
    same = _same_data(train_given, eval_given)
    if same is not None:
        return same

    budget = Budget(time_budget, clock)
    if trace is None:
        trace = {}
    trace.clear()
    # Worker processes for the larger split's remote objects are forked now, while this process
    # runs no other thread (listing the objects starts the clients' IO thread): see _workers.
    pool = None
    try:
        pool = _workers.Pool.start((train_given, eval_given), budget, trace)
        splits = _open(train_given, eval_given, max_bytes, budget)
        return _check_cached(splits, Fields(group_key, time_key, inputs), cut, cache_dir, project_root, budget, trace, pool)
    except DataError as error:  # the one place: every way the checks can stop without an answer
        if isinstance(error, OverBudget):
            # Where it stopped, not why: a stalled server and a large split look alike here.
            error.message = f"the data checks stopped after {time_budget:g}s (limit data.time_budget)" + \
                (f" while reading the {error.split} split" if error.split else "")
        return Stopped((error,))
    except _Unopened as unopened:
        return Stopped(unopened.errors)
    finally:
        if pool is not None:
            pool.kill()  # idle ones would leave at the closed pipe; one still reading is stopped


def _as_input(value: Any) -> SplitPath:
    if isinstance(value, GlobMatches):
        return value
    if isinstance(value, str) and _sources.scheme(value) is not None:
        return value
    return Path(value)


def _same_data(train: SplitPath, eval_: SplitPath) -> Optional[SameData]:
    try:
        if isinstance(train, Path) and isinstance(eval_, Path) and train.resolve() == eval_.resolve():
            return SameData(str(eval_), "file")
    except OSError:
        return None
    if isinstance(train, str) and train == eval_:
        return SameData(_sources.show_uri(eval_), "object")
    return None


class _Unopened(Exception):
    """Splits that could not be listed: each one's error, so that a user fixing one learns of the
    other in the same run (an extra missing for each of two schemes, say)."""

    def __init__(self, errors: tuple[DataError, ...]) -> None:
        super().__init__(errors)
        self.errors = errors


def _open(train: SplitPath, eval_: SplitPath, max_bytes: Optional[int], budget: Budget) -> dict[str, Source]:
    """Each split as a Source, its format known and readable, within data.max_bytes on disk."""
    opened: dict[str, Source] = {}
    problems: list[DataError] = []
    for split, given in (("train", train), ("eval", eval_)):
        try:
            if isinstance(given, GlobMatches):
                opened[split] = local_source(given.pattern, given.matches)
            elif isinstance(given, str):
                opened[split] = _sources.remote_source(given, split, max_bytes=max_bytes, budget=budget)
        except DataError as problem:
            problem.split = split
            if isinstance(problem, OverBudget):
                raise
            problems.append(problem)
    if problems:
        raise _Unopened(tuple(problems))
    for split, given in (("train", train), ("eval", eval_)):
        if isinstance(given, Path):  # a local file of no split format: said once the objects are listed
            try:
                opened[split] = Source.of_file(given)
            except DataError as problem:
                problem.split = split
                raise
    opened = {split: opened[split] for split in ("train", "eval")}
    for split, source in opened.items():
        if source.fmt == "parquet" and not _have_pyarrow():
            raise MissingExtra(f"{source}: {PARQUET_EXTRA}", split=split)
    if max_bytes is not None:
        for split, source in opened.items():
            size = sum(_sources.local_size(item) for item in source.objects if isinstance(item, Path))
            if size > max_bytes:
                raise OverCap(f"{source}: {size:,} bytes on disk, more than {limit_text(max_bytes)} (limit data.max_bytes)", split=split)
    return opened


def _have_pyarrow() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("pyarrow") is not None
    except (ImportError, ValueError):
        return False


def _os_error(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return _sources.safe_text(error.strerror)
    text = str(error) or type(error).__name__
    return _sources.safe_text(text[:200])


# --------------------------------------------------------------------------
# the caches


def _check_cached(splits: dict[str, Source], fields: Fields, cut: Optional[Cutoff], cache_dir: Optional[Path],
                  project_root: Optional[Path], budget: Budget, trace: dict, pool: Optional[_workers.Pool]) -> DataFacts:
    """The facts from the result cache, or read, and kept there (and each object's index part) when complete."""
    train, eval_ = splits["train"], splits["eval"]
    params = {
        "version": CACHE_VERSION,
        "train": str(train),
        "eval": str(eval_),
        "group_key": fields.group_key,
        "time_key": fields.time_key,
        "cutoff": cut.aware.isoformat() if cut else None,
        "cutoff_text": cut.text if cut else None,
        "input_fields": list(fields.inputs) if fields.inputs else None,
    }
    seal_key = machine_key(project_root) if cache_dir is not None else None
    if cache_dir is None or seal_key is None:
        return _read(splits, fields, cut, budget, trace, None, pool)
    try:
        ids = {"train": _content_ids(train), "eval": _content_ids(eval_)}
    except OSError as error:
        raise Unreadable(f"could not read the split files ({_os_error(error)})") from None
    key = _cache_key(params, ids["train"], ids["eval"])
    cache_file = None
    if key is not None:  # None: an object without a version or ETag, not cached
        cache_file = Path(cache_dir) / "split-data" / f"{key}.json"
        cached = _cache_read(cache_file, seal_key, key)
        if cached is not None:
            return cached
    parts = _PartCaches(Path(cache_dir), seal_key, params, ids)
    facts = _read(splits, fields, cut, budget, trace, parts, pool)
    if facts.complete:  # a result a limit cut short is not kept: it is not the answer
        if cache_file is not None:
            _cache_write(cache_file, facts, seal_key, cache_file.stem)
        parts.write()
    return facts


def _content_ids(source: Source) -> Any:
    """What names a split's content: the SHA-256 of a one-file split, or each object's version, ETag or hash (None: unknown)."""
    return content_sha256(source.file) if source.file is not None else source.identities()


def _cache_key(params: dict, train_ids: Any, eval_ids: Any) -> Optional[str]:
    """The cache key of a check (given each split's content ids), or None when a split's content has no name (an https:// object without an ETag)."""
    if train_ids is None or eval_ids is None:
        return None
    material = json.dumps({**params, "train_sha256": train_ids, "eval_sha256": eval_ids}, sort_keys=True)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _cache_read(path: Path, seal_key: bytes, key: str) -> Optional[DataFacts]:
    """The facts stored under `key`, if this machine sealed them (a committed entry is not trusted)."""
    data = read_sealed(path, seal_key, "split-data", key, 4 << 20)
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return None
    return from_json(data.get("facts"))


def _cache_write(path: Path, facts: DataFacts, seal_key: bytes, key: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, seal(seal_key, "split-data", key, {"version": CACHE_VERSION, "facts": to_json(facts)}))
    except OSError:
        pass  # a cache that cannot be written is only a slower next run


class _PartCaches:
    """What the per-object caches of a check are made from (see _index_parts)."""

    def __init__(self, directory: Path, seal_key: bytes, params: dict, ids: dict) -> None:
        self.directory, self.seal_key, self.params, self.ids = directory, seal_key, params, ids
        self.made: list[_index_parts.IndexPartCache] = []

    def make_parts(self, side: "_Side") -> _index_parts.IndexPartCache:
        """The cache of the index parts of one split's objects: keyed by what reading one object depends on
        (not by the other split, nor by the paths as written: a path may name a revision, and a new
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


# --------------------------------------------------------------------------
# the check


class _Side:
    """A split being read, and what reading it found."""

    def __init__(self, split: str, source: Source) -> None:
        self.split, self.source = split, source
        self.fmt, self.gz = source.fmt, source.gz
        self.report = FileReport()

    def __str__(self) -> str:
        return str(self.source)

    def location(self, row: int) -> Location:
        if not self.source.sharded:
            return Location(row)
        name, local = self.source.locate(row)
        return Location(row, name, local)

    def rows(self, sample: Sample, values: bool = False) -> Rows:
        return Rows(sample.count, tuple(map(self.location, sample.rows)), tuple(map(excerpt, sample.values)) if values else ())

    def facts(self) -> SplitFacts:
        report = self.report
        return SplitFacts(
            self.split, str(self.source), self.fmt, self.source.sharded, report.rows, report.input_field, tuple(report.absent_columns),
            invalid=self.rows(report.invalid), oversized=self.rows(report.oversized), not_object=self.rows(report.not_object),
            no_group=self.rows(report.no_group), no_time=self.rows(report.no_time), bad_time=self.rows(report.bad_time, values=True),
            no_input=self.rows(report.no_input), time_leaks=self.rows(report.time_leaks, values=True),
        )


def _read(splits: dict[str, Source], fields: Fields, cut: Optional[Cutoff], budget: Budget, trace: dict,
          parts: Optional[_PartCaches], pool: Optional[_workers.Pool]) -> DataFacts:
    train, held_out = _Side("train", splits["train"]), _Side("eval", splits["eval"])
    try:
        train_size, eval_size = train.source.size(), held_out.source.size()
    except OSError as error:
        raise Unreadable(f"{train}: could not be read ({_os_error(error)})", split="train") from None
    small, big = (held_out, train) if eval_size <= train_size else (train, held_out)
    if pool is not None:
        pool.prepare(big.source, min(train_size, eval_size))  # the workers get ready to read it while this process reads the smaller split

    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived dicts; nothing here makes cycles
    side = small
    try:
        # a split of objects: one index part per object, cached parts not read again (_index_parts); the
        # inputs are then digested with the parts' keyed digest, on both sides
        small_parts = parts.make_parts(small) if parts is not None and small.source.file is None else None
        big_parts = parts.make_parts(big) if parts is not None and big.source.file is None else None
        keyed = small_parts or big_parts
        small_spec = _scan.SideSpec(small.split, small.source.readable, small.fmt, small.gz, fields, cut, budget, trace)
        if small_parts is not None:
            index, small.report = _index_parts.read_small_objects(small_spec, small.source, small_parts, keyed=big_parts is not None)
        else:
            index, small.report = _scan.read_small(small_spec, keyed.digest if keyed is not None else _index.digest)
            index.digest_key = keyed.digest_key if keyed is not None else None  # what a worker process rebuilds the digest from (_workers)
        side = big
        big_spec = _scan.SideSpec(big.split, big.source.readable, big.fmt, big.gz, fields, cut, budget, trace)
        if big_parts is not None or (pool is not None and pool.usable(big.source)):
            # several objects: one index part each, cached parts not read again, remote ones by worker processes
            result = _index_parts.read_big_objects(big_spec, index, big.source, big_parts, pool)
            if big_parts is not None:
                _index_parts.fill_texts(result, index, small_spec, small.source, small_parts, big.source, big_parts)
        else:
            result = _file_workers.read_big(big_spec, index)
        big.report = result.report
    except OverBudget as over:
        over.split = side.split  # the split being read when the budget ran out
        raise
    except OverCap as limit:  # one record too large, or the split's bytes (data.max_bytes)
        where = str(side)
        if limit.row is not None and side.source.sharded:
            name, limit.row = side.source.locate(limit.row)
            where = f"{side} ({name})"
        raise type(limit)(f"{where}: {limit.message or 'a record is too large'}: the data checks stopped there", split=side.split) from None
    except MissingExtra:
        raise
    except DataError as error:  # a remote object that could not be opened or read
        error.split = side.split
        raise
    except Exception as error:  # OSError, gzip/zlib errors, EOFError, pyarrow errors, ...: what the readers do not type
        raise Unreadable(f"{side}: could not be read ({_os_error(error)})", split=side.split) from None
    finally:
        if gc_was_enabled:
            gc.enable()

    sides = {"train": train, "eval": held_out}
    shared_groups = shared_inputs = None
    if fields.group_key is not None and result.leaked:
        # first row and row count of each value, per split
        groups: dict[str, dict[Any, Any]] = {small.split: {key: index.groups[key] for key in result.leaked}, big.split: result.leaked}
        shared_groups = _overlap(groups, sides, excerpt)
    if result.dups:
        dups = result.dups
        inputs: dict[str, dict[Any, Any]] = {small.split: {code: (index.hashes[code], index.hash_counts.get(code, 1)) for code in dups},
                                             big.split: {code: (entry[0], entry[1]) for code, entry in dups.items()}}
        shared_inputs = _overlap(inputs, sides, lambda code: dups[code][2])
    return DataFacts(fields.group_key, fields.time_key, cut.text if cut is not None else None, fields.inputs, _base.MAX_LINE_BYTES,
                     train.facts(), held_out.facts(), shared_groups, shared_inputs)


def _overlap(per_split: dict[str, dict[Any, Any]], sides: dict[str, _Side], text: Callable[[Any], Optional[str]]) -> Overlap:
    """The values in both splits (value -> its first row and row count, per split), the first few by eval row."""
    train, eval_ = per_split["train"], per_split["eval"]
    order = sorted(eval_, key=lambda value: eval_[value][0])
    first = tuple(Shared(text(value), sides["train"].location(train[value][0]), sides["eval"].location(eval_[value][0]))
                  for value in order[:EXAMPLES])
    return Overlap(len(eval_), sum(entry[1] for entry in train.values()), sum(entry[1] for entry in eval_.values()), first)
