"""What a pull request changed in a plan's split files, told from git (PL701, PL709, the change card).

A split path that a plan keeps word for word can still name other data: the
file was rewritten in place, a glob matches other shards, a link points
elsewhere. This module resolves a split's local path at the base revision
(in its git tree, links followed inside it) and in the working tree (links
resolved inside the repository), and says whether the data differ:
another set of files, or a file among them that git lists as changed
between the base and the working tree. Nothing is hashed or read for that;
only the rows of a changed text file are counted, for the card.

A relative path is looked for where the data checks look for it: under the
current directory, the project root (the config's directory), then the
plan's own directory; the first that holds it wins, on each side. Paths
with a scheme (`s3://`, `gs://`, `hf://`, `https://`) are not files here:
their pinned version is part of the path (`?versionId=`, `#generation`,
`@revision`), so a change of it is a change of the plan's value. Files git
does not know on either side (ignored data, fetched by the workflow) cannot
be compared and are left out.

Rows are counted as the non-empty lines of JSON Lines, JSON, CSV and TSV
files of at most 64 MiB (a CSV's or TSV's first line is its header, not a
row); other files (compressed, Parquet) change without a count.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from planlint.core.config import Config
from planlint.core.loader import decode
from planlint.core.urls import is_uri
from planlint.modes.diff_git import tree_blob
from planlint.rules.base import lookup
from planlint.rules.diff import SplitChange, same

SPLITS = ("eval", "train")
COUNTED_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv")
_HEADER_SUFFIXES = (".csv", ".tsv")
MAX_COUNTED = 64 << 20
MAX_MATCHES = 10_000


def split_changes(
    base: Any, head: Any, *, plan_file: Path, base_rel: str, config: Config, root: str, base_tree, changed: set[str],
) -> tuple[SplitChange, ...]:
    """The splits whose data changed while their path stayed: one SplitChange per split (eval, train).

    `plan_file`: the plan in the working tree; `base_rel`: its repository path at the base;
    `changed`: the repository paths git lists as differing between the base and the working tree.
    """
    found = []
    for split in SPLITS:
        route = ("splits", split, "path")
        value = lookup(head, route)
        if not isinstance(value, str) or not value.strip() or is_uri(value.strip()) or not same(value, lookup(base, route)):
            continue  # another path is a change of the plan's own value (PL701 for eval)
        dirs = _search_dirs(config, root, plan_file.parent)
        head_files = _head_files(value, dirs, root)
        base_dirs = _search_dirs(config, root, Path(root, *posixpath.dirname(base_rel).split("/")) if posixpath.dirname(base_rel) else Path(root))
        base_files = _base_files(value, base_dirs, root, base_tree)
        # Only files git knows on some side can be compared: an ignored file is neither in the base tree nor a change.
        head_files = {rel for rel in head_files if rel in changed or tree_blob(base_tree, rel) is not None}
        if head_files == base_files and not (head_files & changed):
            continue
        if not head_files and not base_files:
            continue
        found.append(_counted(split, value, base_files, head_files, changed, base_tree, root))
    return tuple(found)


# --------------------------------------------------------------------------- where a split path leads


def _search_dirs(config: Config, root: str, plan_dir: Path) -> list[str]:
    """The repository-relative directories a relative split path is looked up under, in the data checks' order."""
    dirs = []
    for directory in (os.getcwd(), config.root, plan_dir):
        if directory is None:
            continue
        rel = os.path.relpath(os.path.abspath(directory), root)
        if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
            continue  # outside the repository: git knows nothing of it
        rel = "" if rel == "." else Path(rel).as_posix()
        if rel not in dirs:
            dirs.append(rel)
    return dirs


def _joined(directory: str, value: str) -> str | None:
    """`value` under the repository directory `directory`, normalised; None when it leaves the repository."""
    if value.startswith("/") or os.path.isabs(value):
        return None
    rel = posixpath.normpath(posixpath.join(directory, value.replace("\\", "/")))
    return None if rel == ".." or rel.startswith("../") or rel == "." else rel


def _has_magic(value: str) -> bool:
    return any(char in value for char in "*?[")


def _head_files(value: str, dirs: list[str], root: str) -> set[str]:
    """Repository paths (links resolved) of the working tree's files the split path names, at the first directory that has any."""
    for directory in dirs:
        if _has_magic(value):
            matches = set()
            for rel in _glob(value, directory, _disk_lister(root)):
                real = os.path.realpath(os.path.join(root, *rel.split("/")))
                inner = _inside(real, root)
                if inner is not None:
                    matches.add(inner)
            if matches:
                return matches
            continue
        joined = _joined(directory, value)
        if joined is None:
            continue
        path = os.path.join(root, *joined.split("/"))
        if os.path.isfile(path):
            inner = _inside(os.path.realpath(path), root)
            return {inner} if inner is not None else set()
    return set()


def _base_files(value: str, dirs: list[str], root: str, tree) -> set[str]:
    """Repository paths (links followed inside the tree) of the base revision's files the split path names."""
    for directory in dirs:
        if _has_magic(value):
            matches = {blob.path for blob in (tree_blob(tree, rel) for rel in _glob(value, directory, _tree_lister(tree))) if blob is not None}
            if matches:
                return matches
            continue
        rel = _joined(directory, value)
        blob = tree_blob(tree, rel) if rel is not None else None
        if blob is not None:
            return {blob.path}
    return set()


def _inside(real: str, root: str) -> str | None:
    rel = os.path.relpath(real, root)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return None
    return Path(rel).as_posix()


Lister = Callable[[str], Iterator[tuple[str, bool]]]  # repository directory -> (name, is a directory)


def _disk_lister(root: str) -> Lister:
    def entries(directory: str) -> Iterator[tuple[str, bool]]:
        try:
            with os.scandir(os.path.join(root, *directory.split("/")) if directory else root) as scan:
                for entry in scan:
                    try:
                        yield entry.name, entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
        except OSError:
            return

    return entries


def _tree_lister(tree) -> Lister:
    def entries(directory: str) -> Iterator[tuple[str, bool]]:
        try:
            node = tree / directory if directory else tree
        except (KeyError, TypeError, ValueError, AttributeError):
            return
        if getattr(node, "type", None) != "tree":
            return
        for item in node:
            yield item.name, item.type == "tree"

    return entries


def _glob(pattern: str, directory: str, entries: Lister) -> list[str]:
    """Repository paths under `directory` that `pattern` matches, as the data checks match a split glob:
    components with fnmatch (case-sensitive), `**` any number of directories (links to directories
    not followed), a leading dot matched only by a component that has one. Files only, at most 10,000."""
    parts = [part for part in pattern.replace("\\", "/").split("/") if part not in ("", ".")]
    if pattern.startswith("/") or ".." in parts:
        return []
    found: list[str] = []
    stack: list[tuple[str, int]] = [(directory, 0)]
    seen: set[tuple[str, int]] = set()
    while stack and len(found) <= MAX_MATCHES:
        where, index = stack.pop()
        if (where, index) in seen or index >= len(parts):
            continue
        seen.add((where, index))
        part, last = parts[index], index == len(parts) - 1
        if part == "**":
            stack.append((where, index + 1))
            stack.extend((posixpath.join(where, name) if where else name, index) for name, is_dir in entries(where) if is_dir and not name.startswith("."))
            continue
        for name, is_dir in entries(where):
            if (name.startswith(".") and not part.startswith(".")) or not fnmatch.fnmatchcase(name, part):
                continue
            rel = posixpath.join(where, name) if where else name
            if last and not is_dir:
                found.append(rel)
            elif not last and is_dir:
                stack.append((rel, index + 1))
    return sorted(found)


# --------------------------------------------------------------------------- rows


def _counted(split: str, value: str, base_files: set[str], head_files: set[str], changed: set[str], tree, root: str) -> SplitChange:
    """The change of one split, with the rows added and removed counted where every changed file is
    a text file that git (base) and the disk (head) hold."""
    added = removed = 0
    for rel in sorted(base_files | head_files):
        if rel in base_files and rel in head_files and rel not in changed:
            continue  # the same file on both sides: its rows cancel out
        old = _base_rows(tree, rel) if rel in base_files else Counter()
        new = _head_rows(root, rel) if rel in head_files else Counter()
        if old is None or new is None:
            return SplitChange(split, value, len(base_files), len(head_files))
        added += sum((new - old).values())
        removed += sum((old - new).values())
    return SplitChange(split, value, len(base_files), len(head_files), added, removed)


def _rows(data: bytes, rel: str) -> Counter | None:
    text, problem = decode(data)
    if problem is not None or text is None:
        return None
    lines = [line for line in text.splitlines() if line.strip()]
    if rel.lower().endswith(_HEADER_SUFFIXES):
        lines = lines[1:]
    return Counter(lines)


def _base_rows(tree, rel: str) -> Counter | None:
    blob = tree_blob(tree, rel)
    if blob is None or not rel.lower().endswith(COUNTED_SUFFIXES) or blob.size > MAX_COUNTED:
        return None
    return _rows(blob.data_stream.read(), rel)


def _head_rows(root: str, rel: str) -> Counter | None:
    path = os.path.join(root, *rel.split("/"))
    try:
        if not rel.lower().endswith(COUNTED_SUFFIXES) or os.path.getsize(path) > MAX_COUNTED:
            return None
        with open(path, "rb") as handle:
            return _rows(handle.read(MAX_COUNTED + 1), rel)
    except OSError:
        return None
