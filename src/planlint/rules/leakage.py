"""Data-aware split checks: PL207-PL211, over the split files (local, or behind a URI).

The rules share one pass over the files (split_data.check_split_data,
cached by content hash, or by each remote object's version or ETag); each
reports its own code. Relative split paths are looked up against the current
directory, then the project root (the directory of the config file), then
the plan's own directory; a path with wildcards (`data/train-*.parquet`) is
a glob whose sorted matches are one split, all inside the checkout. A path
with a scheme (`s3://`, `gs://`, `hf://`, `https://`) is read where it lives
(services/split_data/resolve resolves each path once, for the check and for
the engine's cache). When a file is not there the checks are
skipped with a note, not a finding; with `--require-data` (or `data:
{require: true}`) a missing file is a PL006 finding at its `path` value, as
is a remote split that could not be read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, Note, PlanContext, Problem, rule
from planlint.rules.splits import predefined_only
from planlint.services.split_data.resolve import Absent, LocalFile, LocalGlob, Lookup, Remote, Resolved, Unlisted, has_magic
from planlint.services.split_data.resolve import inside_checkout, resolve_split

_RESULT = "_split_data"
_RESOLVED = "_split_paths"


def _lookup(ctx: PlanContext) -> Lookup:
    root = getattr(ctx.config, "root", None)
    return Lookup(os.getcwd(), None if root is None else os.fspath(root), None if ctx.file is None else os.fspath(ctx.file))


def _resolved(ctx: PlanContext) -> dict[str, Resolved] | None:
    """Where each split path leads (once per plan context: kept in ctx.memo, with the Lookup that
    found it); None for splits given by selector or task list (nothing to read)."""
    if _RESOLVED not in ctx.memo:
        paths = {split: ctx.get("splits", split, "path") for split in ("train", "eval")}
        if not all(isinstance(p, str) and p.strip() for p in paths.values()):
            ctx.memo[_RESOLVED] = None, None
        else:
            lookup = _lookup(ctx)
            ctx.memo[_RESOLVED] = {split: resolve_split(value, lookup) for split, value in paths.items()}, lookup
    return ctx.memo[_RESOLVED][0]


def remote_or_glob(ctx: PlanContext) -> bool:
    """Does a split path of this plan name a URI or a glob? Its result then depends on more than
    the files `inputs` lists (objects elsewhere, files a glob may match later): not to be cached by the engine."""
    resolved = _resolved(ctx)
    if resolved is None:
        return False
    return any(isinstance(found, Remote) or (has_magic(found.value) and not isinstance(found, LocalFile)) for found in resolved.values())


def inputs(ctx: PlanContext) -> list[Path]:
    """Every path the data checks look at for this plan, in the order they do
    (up to the first regular file for each split, and a glob's matches): what
    a cached result of this plan also depends on (planlint.engine.parallel)."""
    resolved = _resolved(ctx)
    if resolved is None:
        return []
    return [path for found in resolved.values() for path in found.looked]


def _cannot_read(ctx: PlanContext, split: str, message: str, problems: list[Problem], notes: list[Note], require: bool) -> None:
    if require:
        problems.append(Problem(("splits", split, "path"), f"{message}, and data checks are required (--require-data)", code="PL006"))
    else:
        notes.append(Note(f"{ctx.path}: {message}; data checks skipped"))


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
    resolved = _resolved(ctx)
    if resolved is None:
        return problems, notes
    settings = getattr(ctx.config, "data", None) or {}
    require = bool(settings.get("require"))
    for split, found in resolved.items():
        if isinstance(found, Unlisted):  # more matches than a split may have
            _cannot_read(ctx, split, f"splits.{split}.path {show(found.value)}: {found.reason}", problems, notes, require)
            return problems, notes
    lookup = ctx.memo[_RESOLVED][1]
    outside = [split for split, found in resolved.items() if isinstance(found, (LocalFile, LocalGlob)) and not inside_checkout(found, lookup)]
    if outside:  # a pull request must not make planlint read (and quote) files elsewhere on the machine
        for split in outside:
            what = "is outside the repository (or a link out of it)" if isinstance(resolved[split], LocalFile) else \
                "matches a file outside the repository (or a link out of it)"
            message = f"splits.{split}.path {show(resolved[split].value)} {what}: planlint reads split files only from the checkout"
            _cannot_read(ctx, split, message, problems, notes, require)
        return problems, notes
    absent = [split for split, found in resolved.items() if isinstance(found, Absent)]
    if absent:
        if require:
            for split in absent:
                problems.append(Problem(("splits", split, "path"), f"splits.{split}.path {show(resolved[split].value)} does not exist locally, and data checks are required (--require-data): add the file or fix the path", code="PL006"))
        else:  # one note for the whole run, made by the engine
            notes.extend(Note(resolved[split].value, skipped=True) for split in absent)
        return problems, notes
    boundary = ctx.mapping("splits", "boundary") or {}
    # Deliberately lazy: the split-file readers load only for plans whose split files are here.
    from planlint.rules.leakage_findings import findings
    from planlint.services.split_data import check_split_data

    def text(value):
        return scalar_text(value) if value is not None and not isinstance(value, (dict, list)) else None

    cache_dir = ctx.services.cache_dir
    readable = {split: found.read_as for split, found in resolved.items() if isinstance(found, (Remote, LocalFile, LocalGlob))}
    issues, data_notes = findings(check_split_data(
        readable["train"], readable["eval"],
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
def boundary_key_missing(ctx: PlanContext) -> Iterator[Problem | Note]:
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
def time_value_unreadable(ctx: PlanContext) -> Iterator[Problem | Note]:
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
