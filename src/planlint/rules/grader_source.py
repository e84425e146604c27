"""The grader's code as recorded in the plan: PL311 (its hash matches the file).

A grader may record `source:` (a file of the repository: a code grader's
verifier, a judge's rubric) and `sha256:` of it. The version is the promise
that scoring did not change; the hash is how that promise is checked: in a
plain lint the file's SHA-256 must be the recorded one (PL311), and in diff
mode a source that changed while the version did not is PL710
(`rules/preregistration.py`, which reads both sides through `read_source`).

Paths are relative to the repository root (as run configs are) and must stay
in it: an absolute path, `..` out of it or a symbolic link out of it is
refused and never opened; so is anything but a regular file, or one larger
than MAX_SOURCE_BYTES. These rules have scope "files": the result cache
lists every source file with its state (`inputs`), so editing only the
grader's code is seen on the next run.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.rules.base import ERROR, PlanContext, Problem, rule
from planlint.rules.run.files import display_path, inside, plan_repository

MAX_SOURCE_BYTES = 64 * 1024 * 1024
_SHA256 = re.compile(r"^(?:sha256:)?([0-9a-fA-F]{64})$")
_MEMO = "_grader_sources"


@dataclass(frozen=True)
class SourceFile:
    """One grader's recorded source, as found in the working tree."""

    index: int
    value: str  # as written in the plan
    path: Path | None  # the file, when it could be used
    problem: str | None  # why not, as a message continues "graders[i].source 'x' ..."
    digest: str | None = None  # its SHA-256 (lower-case hex), when it was read


def recorded_hash(value: object) -> str | None:
    """The lower-case hex of a `sha256:` value (`sha256:` prefix optional), else None."""
    match = _SHA256.match(value.strip()) if isinstance(value, str) else None
    return match.group(1).lower() if match else None


def resolve_source(value: str, root: Path) -> tuple[Path | None, str | None]:
    """(the file, None) for a grader's `source`, or (None, why it cannot be used). Nothing is opened."""
    if not value.strip():
        return None, "is empty"
    if os.path.isabs(value) or value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        return None, "is an absolute path; name the file relative to the repository root"
    path = root / value
    if not inside(path, root):
        return None, "is outside the repository (or a link out of it): planlint reads grader sources only from the checkout, and did not open it"
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None, "does not exist in the repository"
    except OSError as error:
        return None, f"cannot be read ({error.strerror or error})"
    if not stat.S_ISREG(status.st_mode):
        return None, "is not a regular file"
    if status.st_size > MAX_SOURCE_BYTES:
        return None, f"is larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB: not hashed"
    return path, None


def file_digest(path: Path) -> tuple[str | None, str | None]:
    """(SHA-256 hex, None) of a regular file, read in chunks, or (None, why not).

    Opened without blocking and checked again on the open descriptor: a file swapped for a
    named pipe after `resolve_source` looked is refused, not waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as error:
        return None, f"cannot be read ({error.strerror or error})"
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            return None, "is not a regular file"
        digest = hashlib.sha256()
        read = 0
        while chunk := handle.read(1 << 20):
            read += len(chunk)
            if read > MAX_SOURCE_BYTES:
                return None, f"is larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB: not hashed"
            digest.update(chunk)
    return digest.hexdigest(), None


def source_files(ctx: PlanContext) -> list[SourceFile]:
    """Every grader's recorded source, resolved (and hashed when a hash is recorded) once per plan."""
    found = ctx.memo.get(_MEMO)
    if found is not None:
        return found
    found = []
    root = None
    for index, grader in ctx.graders():
        value = grader.get("source")
        if not isinstance(value, str):
            continue  # absent, or the wrong type (PL003)
        root = root or plan_repository(ctx)
        path, problem = resolve_source(value, root)
        digest = None
        if path is not None and recorded_hash(grader.get("sha256")) is not None:
            digest, problem = file_digest(path)
            path = path if problem is None else None
        found.append(SourceFile(index, value, path, problem, digest))
    ctx.memo[_MEMO] = found
    return found


def inputs(ctx: PlanContext) -> list[Path]:
    """The grader sources this plan names, existing or not: what a cached result also depends on."""
    graders = [grader for _, grader in ctx.graders() if isinstance(grader.get("source"), str) and grader["source"].strip()]
    if not graders:
        return []
    root = plan_repository(ctx)
    return [root / grader["source"] for grader in graders if not os.path.isabs(grader["source"])]


def named_sources(data: Any) -> set[str]:
    """The grader sources a plan's data names, as repository paths (`/`, normalized): for diff mode,
    which lints an unchanged plan again when one of them changed (PL710)."""
    graders = data.get("graders") if isinstance(data, dict) else None
    if not isinstance(graders, list):
        return set()
    values = (grader.get("source") for grader in graders if isinstance(grader, dict))
    return {posixpath.normpath(value.replace("\\", "/")) for value in values if isinstance(value, str) and value.strip()}


def _label(index: int, grader: dict) -> str:
    ident = grader.get("id")
    return f"grader {show(ident)}" if isinstance(ident, str) and ident else f"graders[{index}]"


@rule("PL311", "grader-source-mismatch", ERROR, scope="files")
def grader_source_mismatch(ctx: PlanContext) -> Iterator[Problem]:
    """A grader's recorded `sha256` is not the hash of its `source` file, or that file cannot be read.

    A grader's version promises that scoring did not change, but the code
    behind it is a file anyone can edit: a fixed edge case in the verifier
    silently moves every score while the plan still says 1.4.2, and the
    baseline and the trained model are then scored by different code. When
    a grader records `source:` (its file in the repository) and `sha256:`
    (of that file), planlint hashes the file and compares. A mismatch means
    the code changed since the hash was recorded: give the grader a new
    version (and re-measure the baseline, PL706), or restore the code. A
    `source` that does not exist, leaves the repository (also through a
    symbolic link) or is not a regular file is reported too, and never
    opened; a `sha256` without a `source` names no file.

    Example (fails):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
            source: graders/db_state.py
            sha256: 99b9c21c483c3b454dd1b61b27a69f850f70b455de82ec2d76f705c89c795602
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
        --- graders/db_state.py
        def score(state, expected):
            return 1.0 if state.items() >= expected.items() else 0.0
    Example (passes):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
            source: graders/db_state.py
            sha256: 99b9c21c483c3b454dd1b61b27a69f850f70b455de82ec2d76f705c89c795602
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
        --- graders/db_state.py
        def score(state, expected):
            return 1.0 if state == expected else 0.0
    """
    graders = dict(ctx.graders())
    for found in source_files(ctx):
        grader = graders[found.index]
        label = _label(found.index, grader)
        route = ("graders", found.index)
        if found.problem is not None:
            yield Problem(route + ("source",), f"{label} source {show(found.value)} {found.problem}")
            continue
        recorded = recorded_hash(grader.get("sha256"))
        if recorded is None or found.digest is None or found.digest == recorded:
            continue
        shown = display_path(found.path) if found.path is not None else found.value
        yield Problem(route + ("sha256",), f"{label} sha256 {show(grader['sha256'], 80)} is not the SHA-256 of {show(shown, 120)} "
                                           f"(it is {found.digest}): its code changed since the hash was recorded; give the grader a new "
                                           f"version and re-measure the baseline, or restore the code")
    for index, grader in graders.items():
        if "sha256" in grader and "source" not in grader:
            yield Problem(("graders", index, "sha256"), f"{_label(index, grader)} records a sha256 but no source: name the file it is "
                                                        f"the hash of (source: a path in the repository)")
