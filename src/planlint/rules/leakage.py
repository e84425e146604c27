"""Data-aware split checks: PL207-PL211, over the split files (local, or behind a URI).

The rules share one pass over the files (split_data.check_split_data,
cached by content hash, or by each remote object's version or ETag); each
reports its own code. Relative split paths are looked up against the current
directory, then the project root (the directory of the config file), then
the plan's own directory; a path with wildcards (`data/train-*.parquet`) is
a glob whose sorted matches are one split, all inside the checkout. A path
with a scheme (`s3://`, `gs://`, `hf://`, `https://`) is read where it lives
(services/split_data/_sources). When a file is not there the checks are
skipped with a note, not a finding; with `--require-data` (or `data:
{require: true}`) a missing file is a PL006 finding at its `path` value, as
is a remote split that could not be read.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from planlint.core.messages import show
from planlint.core.paths import repository_root
from planlint.core.urls import is_uri
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, Note, PlanContext, Problem, rule
from planlint.rules.splits import predefined_only

_RESULT = "_split_data"


@lru_cache(maxsize=1024)
def _as_path(value: str) -> tuple[str, bool]:
    """`value` as pathlib writes it (`data//x/` is `data/x`), and whether it is absolute.

    Plans repeat their split paths; each is parsed once, not twice per base.
    """
    path = Path(value)
    return str(path), path.is_absolute()


def _join(base: str, name: str) -> str:
    """`str(Path(base) / name)` for a `base` and a relative `name` already in pathlib's form."""
    if os.sep != "/" or os.altsep:
        return str(Path(base) / name)
    if name == ".":
        return base
    if base == ".":
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"


def _candidates(value: str, ctx: PlanContext) -> list[str]:
    """Where a split path is looked for, in order; the first regular file wins.

    Strings in pathlib's form: the lookups themselves need no Path objects.
    """
    path, absolute = _as_path(value)
    if absolute:
        return [path]
    return [_join(base, path) for base in _base_dirs(ctx)]


def _bases(ctx: PlanContext) -> list[Path]:
    """The directories a relative split path is looked up against, in order."""
    return [Path(base) for base in _base_dirs(ctx)]


def _base_dirs(ctx: PlanContext) -> list[str]:
    """`_bases` as strings: the working directory, the project root, the plan's own directory."""
    bases = [os.getcwd()]
    root = getattr(ctx.config, "root", None)
    if root is not None:
        bases.append(_as_path(os.fspath(root))[0])
    plan_file = ctx.file
    if plan_file is not None:
        # Path(plan_file).parent, through the directory's text (a plan's directory repeats: parsed once)
        bases.append(_as_path(os.path.dirname(os.fspath(plan_file)) or ".")[0])
    return bases


def _is_file(path: str) -> bool:
    """Is `path` a regular file (links followed)? A path the system cannot look up
    (too long, not readable, a NUL byte) is not one: it is not there to read."""
    return os.path.isfile(path)


def _resolve(value: str, ctx: PlanContext) -> Path | None:
    tried = None
    for path in _candidates(value, ctx):
        if path == tried:  # the project root is the working directory: the same file, looked up once
            continue
        if _is_file(path):
            return Path(path)
        tried = path
    return None


def _has_magic(value: str) -> bool:
    return any(char in value for char in "*?[")


def _resolve_glob(value: str, ctx: PlanContext) -> list[tuple[str, Path]] | None:
    """The matches of a split path with wildcards, under the first base where it matches any file."""
    # Deliberately lazy, as below: the split-data services load only for plans that need them.
    from planlint.services.split_data import local_glob

    bases = [Path("/")] if Path(value).is_absolute() else _bases(ctx)
    for base in bases:
        matches = local_glob(base, value)
        if matches:
            return matches
    return None


def remote_or_glob(ctx: PlanContext) -> bool:
    """Does a split path of this plan name a URI or a glob? Its result then depends on more than
    the files `inputs` lists (objects elsewhere, files a glob may match later): not to be cached by the engine."""
    paths = _local_paths(ctx)
    if paths is None:
        return False
    return any(is_uri(value.strip()) or (_has_magic(value) and _resolve(value, ctx) is None) for value in paths.values())


def _inside_the_checkout(path, ctx: PlanContext) -> bool:
    """Is `path`, links resolved, inside the working directory, the config's directory or the plan's repository?
    A glob's matches (GlobMatches): is every one of them?"""
    matches = getattr(path, "matches", None)
    if matches is not None:
        return all(_inside_the_checkout(file, ctx) for _, file in matches)
    real = os.path.realpath(path)
    roots = {os.path.realpath(os.getcwd())}
    root = getattr(ctx.config, "root", None)
    if root is not None:
        roots.add(os.path.realpath(root))
    plan_file = ctx.file
    if plan_file is not None:
        roots.add(os.path.realpath(repository_root(os.path.dirname(os.path.abspath(plan_file)))))
    for base in roots:
        try:
            if os.path.commonpath([real, base]) == base:
                return True
        except ValueError:  # another drive
            continue
    return False


def _local_paths(ctx: PlanContext) -> dict | None:
    paths = {split: ctx.get("splits", split, "path") for split in ("train", "eval")}
    if not all(isinstance(p, str) and p.strip() for p in paths.values()):
        return None  # splits by selector or task list: nothing local to read
    return paths


def inputs(ctx: PlanContext) -> list[Path]:
    """Every path the data checks look at for this plan, in the order they do
    (up to the first regular file for each split): what a cached result of
    this plan also depends on (planlint.engine.parallel)."""
    paths = _local_paths(ctx)
    if paths is None:
        return []
    looked: list[Path] = []
    for value in paths.values():
        if is_uri(value.strip()):
            continue  # not a file: such a plan's result is not cached (remote_or_glob)
        found = False
        for path in _candidates(value, ctx):
            looked.append(Path(path))
            if _is_file(path):
                found = True
                break
        if not found and _has_magic(value):  # a glob: its matches (diff mode re-lints a plan whose shard changed)
            from planlint.services.split_data.errors import DataError  # lazy, as below

            try:
                looked.extend(file for _, file in _resolve_glob(value, ctx) or [])
            except DataError:  # more matches than a split may have: the check says so
                pass
    return looked


def split_data_problems(ctx: PlanContext) -> tuple[list[Problem], list[Note]]:
    """Run (once per plan: the result is kept in ctx.memo) the data checks: their problems and notes."""
    if _RESULT in ctx.memo:
        return ctx.memo[_RESULT]
    problems: list[Problem] = []
    notes: list[Note] = []
    ctx.memo[_RESULT] = (problems, notes)
    if predefined_only(ctx.get("splits", "boundary")):
        # A benchmark's own split: no group or time key to check, and the rules
        # do not guess one. Said in a note, so the skipped checks are not silent.
        notes.append(Note(
            f"{ctx.path}: splits.boundary.predefined {show(ctx.get('splits', 'boundary', 'predefined'))} is a benchmark's own split: "
            "the data-aware leakage checks (PL207-PL211) need a group_key or time_key and did not run"
        ))
        return problems, notes
    paths = _local_paths(ctx)
    if paths is None:
        return problems, notes
    settings = getattr(ctx.config, "data", None) or {}
    resolved: dict = {}
    for split, value in paths.items():
        if is_uri(value.strip()):
            resolved[split] = value.strip()  # read where it lives
            continue
        found = _resolve(value, ctx)
        if found is None and _has_magic(value):
            from planlint.services.split_data import GlobMatches  # lazy, as below
            from planlint.services.split_data.errors import DataError

            try:
                matches = _resolve_glob(value, ctx)
            except DataError as error:  # more matches than a split may have
                message = f"splits.{split}.path {show(value)}: {error.message}"
                if settings.get("require"):
                    problems.append(Problem(("splits", split, "path"), f"{message}, and data checks are required (--require-data)", code="PL006"))
                else:
                    notes.append(Note(f"{ctx.path}: {message}; data checks skipped"))
                return problems, notes
            if matches:
                found = GlobMatches(value, matches)
        resolved[split] = found
    outside = [split for split, found in resolved.items() if found is not None and not isinstance(found, str) and not _inside_the_checkout(found, ctx)]
    if outside:  # a pull request must not make planlint read (and quote) files elsewhere on the machine
        for split in outside:
            what = "matches a file outside the repository (or a link out of it)" if not isinstance(resolved[split], Path) else \
                "is outside the repository (or a link out of it)"
            message = (f"splits.{split}.path {show(paths[split])} {what}: "
                       "planlint reads split files only from the checkout")
            if settings.get("require"):
                problems.append(Problem(("splits", split, "path"), f"{message}, and data checks are required (--require-data)", code="PL006"))
            else:
                notes.append(Note(f"{ctx.path}: {message}; data checks skipped"))
        return problems, notes
    absent = [split for split, found in resolved.items() if found is None]
    if absent:
        if settings.get("require"):
            for split in absent:
                problems.append(Problem(("splits", split, "path"), f"splits.{split}.path {show(paths[split])} does not exist locally, and data checks are required (--require-data): add the file or fix the path", code="PL006"))
        else:  # one note for the whole run, made by the engine
            notes.extend(Note(paths[split], skipped=True) for split in absent)
        return problems, notes
    boundary = ctx.mapping("splits", "boundary") or {}
    # Deliberately lazy: the split-file readers load only for plans whose split files are here.
    from planlint.rules.leakage_findings import findings
    from planlint.services.split_data import check_split_data

    def text(value):
        return scalar_text(value) if value is not None and not isinstance(value, (dict, list)) else None

    cache_dir = ctx.services.cache_dir
    issues, data_notes = findings(check_split_data(
        resolved["train"], resolved["eval"],
        group_key=text(boundary.get("group_key")),
        time_key=text(boundary.get("time_key")),
        cutoff=text(boundary.get("cutoff")) if text(boundary.get("time_key")) else None,
        input_fields=settings.get("input_fields"),
        cache_dir=Path(cache_dir) if cache_dir else None,
        project_root=Path(ctx.config.root) if ctx.config is not None else None,
        **({"time_budget": settings["time_budget"]} if "time_budget" in settings else {}),
        **({"max_bytes": settings["max_bytes"]} if "max_bytes" in settings else {}),
    ))
    for issue in issues:
        if issue.key is not None:  # PL210/PL211: at the boundary key the data does not honour
            problems.append(Problem(("splits", "boundary", issue.key), issue.message, code=issue.code, at_key=True))
        else:
            problems.append(Problem(("splits", issue.split, "path"), issue.message, code=issue.code))
    for note in data_notes:
        where = f"splits.{note.split}.path" if note.split else "splits"
        if note.incomplete and settings.get("require"):  # a limit cut the checks short: not a pass
            route = ("splits", note.split, "path") if note.split else ("splits",)  # never a split it is not about
            problems.append(Problem(route, f"{note.message}, and data checks are required (--require-data)", code="PL006"))
            continue
        notes.append(Note(f"{ctx.path}: {where}: {note.message}"))
    return problems, notes


def _own(ctx: PlanContext, code: str) -> Iterator[Problem | Note]:
    problems, notes = split_data_problems(ctx)
    first = "notes given" not in ctx.memo
    if first:  # the first data rule to run (whichever are selected) returns the notes
        ctx.memo["notes given"] = True
        yield from notes
    for problem in problems:
        # A required check that could not run (PL006) is reported once, by the first data rule to run:
        # with PL207 ignored (--ignore PL207, --select PL208) it must not pass silently.
        if problem.code == code or (first and problem.code == "PL006"):
            yield problem


@rule("PL207", "group-leakage", ERROR, scope="data")
def group_leakage(ctx: PlanContext) -> Iterator[Problem | Note]:
    """A `group_key` value occurs in both local split files.

    Separate files are not separate data when the same customer (or
    conversation, or account) appears on both sides: the model is evaluated
    on people it was trained on. Runs when both split `path`s exist locally;
    the finding points at the eval `path` and names the first shared values
    with their row numbers in each file.

    Example (fails):
        # data data/retail/train.jsonl: {"customer_id": "c-17", "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"customer_id": "c-17", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    Example (passes):
        # data data/retail/train.jsonl: {"customer_id": "c-17", "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"customer_id": "c-90", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    """
    yield from _own(ctx, "PL207")


@rule("PL208", "time-leakage", ERROR, scope="data")
def time_leakage(ctx: PlanContext) -> Iterator[Problem | Note]:
    """A train row is at or after the `cutoff`, or an eval row is before it.

    A time boundary promises that the model is evaluated on a period it never
    saw. One late row in train (or early row in eval) breaks the promise. ISO
    dates, ISO datetimes and epoch numbers are understood: below 1e11 an epoch
    number is seconds, from 1e11 to 1e14 milliseconds (1e11 seconds would be
    the year 5138, 1e11 milliseconds is 1973); anything else is PL211. The
    finding points at the offending file's `path`.

    Example (fails):
        # data data/retail/train.jsonl: {"created_at": "2026-08-03", "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"created_at": "2026-08-05", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            time_key: created_at
            cutoff: 2026-08-01
    Example (passes):
        # data data/retail/train.jsonl: {"created_at": "2026-07-30", "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"created_at": "2026-08-05", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            time_key: created_at
            cutoff: 2026-08-01
    """
    yield from _own(ctx, "PL208")


@rule("PL209", "duplicate-across-splits", ERROR, scope="data")
def duplicate_across_splits(ctx: PlanContext) -> Iterator[Problem | Note]:
    """The same normalized input occurs in train and eval.

    A prompt that is in both splits is memorised, not generalised. Inputs are
    compared after Unicode NFKC normalisation, case folding and whitespace
    collapsing, over `data.input_fields` (default: the first of `prompt`,
    `input`, `question`, `messages` present; messages by their user turns).

    Example (fails):
        # data data/retail/train.jsonl: {"customer_id": "c-1", "prompt": "Refund  my ORDER 1"}
        # data data/retail/eval.jsonl: {"customer_id": "c-2", "prompt": "refund my order 1"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    Example (passes):
        # data data/retail/train.jsonl: {"customer_id": "c-1", "prompt": "Refund my order 1"}
        # data data/retail/eval.jsonl: {"customer_id": "c-2", "prompt": "Refund my order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    """
    yield from _own(ctx, "PL209")


@rule("PL210", "boundary-key-missing", ERROR, scope="data")
def boundary_key_missing(ctx: PlanContext) -> Iterator[Problem]:
    """The declared `group_key` or `time_key` is absent, null or empty in rows of a split file.

    A boundary the rows do not carry is never checked: with `group_key:
    acount_id` (a typo) no row has the key, and group leakage goes unseen
    while the plan looks guarded. Reported for each split file that was read
    and each key (the `time_key` only when the `cutoff` is valid), at the key
    in the plan, with the number of rows and the first row number.

    Example (fails):
        # data data/retail/train.jsonl: {"customer_id": "c-17", "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"customer_id": "c-90", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: acount_id
    Example (passes):
        # data data/retail/train.jsonl: {"customer_id": "c-17", "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"customer_id": "c-90", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    """
    yield from _own(ctx, "PL210")


@rule("PL211", "time-value-unreadable", ERROR, scope="data")
def time_value_unreadable(ctx: PlanContext) -> Iterator[Problem]:
    """`time_key` values that are neither ISO 8601 dates or date-times nor epoch seconds or milliseconds.

    A US-style date (`08/05/2026`) or a month name cannot be compared with the
    cutoff, so the time boundary goes unchecked for those rows. Understood:
    ISO 8601 dates and date-times (`2026-08-01`, `2026-08-01T12:00:00Z`,
    with or without an offset) and epoch numbers, as JSON numbers or decimal
    strings: below 1e11 they are seconds, from 1e11 to 1e14 milliseconds
    (beyond that, microseconds or nanoseconds, they are not read). One
    finding per split file, at `time_key` in the plan, with the count and
    the first rows and values.

    Example (fails):
        # data data/retail/train.jsonl: {"created_at": "07/30/2026", "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"created_at": "2026-08-05", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            time_key: created_at
            cutoff: 2026-08-01
    Example (passes):
        # data data/retail/train.jsonl: {"created_at": 1785369600000, "prompt": "Refund order 1"}
        # data data/retail/eval.jsonl: {"created_at": "2026-08-05", "prompt": "Refund order 2"}
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            time_key: created_at
            cutoff: 2026-08-01
    """
    yield from _own(ctx, "PL211")
