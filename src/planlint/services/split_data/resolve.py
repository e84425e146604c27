"""Where a plan's split path leads, resolved once to a typed value.

`Remote` (a path with a scheme), `LocalFile` (the first regular file against
the working directory, the project root, the plan's directory), `LocalGlob`
(a glob's sorted matches), `Unlisted` (too many) or `Absent`; each keeps the
local paths looked at, in order (what a cached lint result depends on).
Standard library only: every lint of a plan with split paths asks this.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Optional, Union

from planlint.core.paths import repository_root
from planlint.core.urls import is_uri

#: At most this many objects (or local files) in one split's glob.
MAX_OBJECTS = 10_000


@dataclass
class GlobMatches:
    """A local split path with wildcards and its matches: (path as the pattern spells it, file), sorted."""

    pattern: str
    matches: list


#: What the data checks read a split from: one local file, a local glob's matches, or a URI (text with a scheme).
SplitPath = Union[Path, GlobMatches, str]


@dataclass(frozen=True)
class Remote:
    """A split path with a scheme: read where it lives."""

    value: str
    uri: str
    looked: tuple[Path, ...] = ()

    @property
    def read_as(self) -> SplitPath:
        return self.uri


@dataclass(frozen=True)
class LocalFile:
    """A local split path that is a regular file."""

    value: str
    path: Path
    looked: tuple[Path, ...]

    @property
    def read_as(self) -> SplitPath:
        return self.path


@dataclass(frozen=True)
class LocalGlob:
    """A local split path with wildcards and the files it matches."""

    value: str
    glob: GlobMatches = field(compare=False)
    looked: tuple[Path, ...]

    @property
    def read_as(self) -> SplitPath:
        return self.glob


@dataclass(frozen=True)
class Unlisted:
    """A local glob that cannot be one split (`reason`: it matches more files than a split may have)."""

    value: str
    reason: str
    looked: tuple[Path, ...]


@dataclass(frozen=True)
class Absent:
    """A local split path that leads to no file."""

    value: str
    looked: tuple[Path, ...]


Resolved = Union[Remote, LocalFile, LocalGlob, Unlisted, Absent]


class Lookup:
    """Where one plan's relative split paths are looked for, and which directories count as its checkout."""

    def __init__(self, cwd: str, project_root: Optional[str], plan_file: Optional[str]) -> None:
        self.cwd, self.project_root, self.plan_file = cwd, project_root, plan_file
        bases = [cwd]
        if project_root is not None:
            bases.append(_as_path(project_root)[0])
        if plan_file is not None:
            # Path(plan_file).parent, through the directory's text (a plan's directory repeats: parsed once)
            bases.append(_as_path(os.path.dirname(plan_file) or ".")[0])
        self.bases = bases  # the working directory, the project root, the plan's own directory

    @cached_property
    def roots(self) -> set[str]:
        """The working directory, the config's directory and the plan's repository, links resolved."""
        roots = {os.path.realpath(self.cwd)}
        if self.project_root is not None:
            roots.add(os.path.realpath(self.project_root))
        if self.plan_file is not None:
            roots.add(os.path.realpath(repository_root(os.path.dirname(os.path.abspath(self.plan_file)))))
        return roots


def resolve_split(value: str, lookup: Lookup) -> Resolved:
    """Where the split path `value` (as the plan writes it) leads."""
    if is_uri(value.strip()):
        return Remote(value, value.strip())
    looked: list[Path] = []
    tried = None
    for candidate in _candidates(value, lookup):
        looked.append(Path(candidate))
        if candidate != tried and os.path.isfile(candidate):  # the project root is the working directory: looked up once
            return LocalFile(value, Path(candidate), tuple(looked))
        tried = candidate
    if not has_magic(value):
        return Absent(value, tuple(looked))
    from planlint.services.split_data.errors import OverCap  # (a glob's own error; small)

    try:
        matches = _glob_matches(value, lookup)
    except OverCap as error:  # more matches than a split may have
        return Unlisted(value, error.message, tuple(looked))
    if not matches:
        return Absent(value, tuple(looked))
    return LocalGlob(value, GlobMatches(value, matches), tuple(looked) + tuple(file for _, file in matches))


def inside_checkout(resolved: Union[LocalFile, LocalGlob], lookup: Lookup) -> bool:
    """Is the file (every file a glob matches), links resolved, inside the working directory,
    the config's directory or the plan's repository?"""
    files = [resolved.path] if isinstance(resolved, LocalFile) else [file for _, file in resolved.glob.matches]
    return all(_inside(file, lookup.roots) for file in files)


def _inside(path: Path, roots: set[str]) -> bool:
    real = os.path.realpath(path)
    for base in roots:
        try:
            if os.path.commonpath([real, base]) == base:
                return True
        except ValueError:  # another drive
            continue
    return False


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


def _candidates(value: str, lookup: Lookup) -> list[str]:
    """Where a split path is looked for, in order; the first regular file wins.

    Strings in pathlib's form: the lookups themselves need no Path objects.
    """
    path, absolute = _as_path(value)
    if absolute:
        return [path]
    return [_join(base, path) for base in lookup.bases]


def has_magic(value: str) -> bool:
    """Does `value` hold a glob wildcard (`*`, `?`, `[`)?"""
    return any(char in value for char in "*?[")


def _glob_matches(value: str, lookup: Lookup) -> list[tuple[str, Path]]:
    """The matches of a split path with wildcards, under the first base where it matches any file."""
    bases = [Path("/")] if Path(value).is_absolute() else [Path(base) for base in lookup.bases]
    for base in bases:
        matches = local_glob(base, value)
        if matches:
            return matches
    return []


# --------------------------------------------------------------------------
# local globs


def local_glob(base: Path, pattern: str) -> list[tuple[str, Path]]:
    """The regular files under `base` that `pattern` matches, sorted by name.

    Components are matched with fnmatch (case-sensitive); `**` matches any
    number of directories, without following links to directories (a link
    loop cannot make the walk endless); names starting with a dot match only
    a component that starts with one. At most MAX_OBJECTS matches (OverCap).
    Whether a match is inside the checkout is `inside_checkout`'s question.
    """
    parts = [part for part in pattern.replace("\\", "/").split("/") if part not in ("", ".")]
    if pattern.startswith("/"):
        base = Path("/")
    found: list[tuple[str, Path]] = []
    stack: list[tuple[Path, str, int]] = [(base, "", 0)]
    seen: set[tuple[str, int]] = set()
    while stack:
        directory, shown, index = stack.pop()
        if (shown, index) in seen:
            continue
        seen.add((shown, index))
        if index == len(parts):
            continue
        part = parts[index]
        last = index == len(parts) - 1
        if part == "**":
            stack.append((directory, shown, index + 1))  # zero directories
            for entry in _entries(directory):
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                    stack.append((directory / entry.name, _joined(shown, entry.name), index))
            continue
        if not has_magic(part):
            target = directory / part
            if last:
                if target.is_file():
                    found.append((_joined(shown, part), target))
            else:
                stack.append((target, _joined(shown, part), index + 1))
            continue
        for entry in _entries(directory):
            name = entry.name
            if name.startswith(".") and not part.startswith("."):
                continue
            if not fnmatch.fnmatchcase(name, part):
                continue
            if last:
                try:
                    regular = stat.S_ISREG(os.stat(entry.path).st_mode)
                except OSError:
                    regular = False
                if regular:
                    found.append((_joined(shown, name), directory / name))
                    if len(found) > MAX_OBJECTS:
                        from planlint.services.split_data.errors import OverCap

                        raise OverCap(f"{pattern}: matches more than {MAX_OBJECTS:,} files")
            elif entry.is_dir():
                stack.append((directory / name, _joined(shown, name), index + 1))
    return sorted(dict(found).items())


def _joined(shown: str, name: str) -> str:
    return f"{shown}/{name}" if shown else name


def _entries(directory: Path) -> list:
    try:
        with os.scandir(directory) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return []
