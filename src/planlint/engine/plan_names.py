"""A plan's `metadata.name`, read cheaply: for PL005 against plans a run does not lint.

The pre-commit hook lints one file but must know every other plan's name.
Parsing each plan costs about a millisecond; a repository of thousands of
plans would make the hook slow. Plans are written in block style, so the
name is nearly always a line `  name: VALUE` right under a top-level
`metadata:` line, and the plan markers are two top-level lines. `read_name`
takes the name from those lines when they are that plain, and parses the
file as `lint_file` would whenever they are not (flow style, anchors, tags,
escapes, a value YAML would read as a number, ...), so the answer is always
the one the full parse gives: the name when the file is a plan whose
`metadata.name` is a string, else None.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

from planlint.core.config import Config
from planlint.core.loader import bom_encoding, load_file, read_text
from planlint.core.model import PLAN_API_VERSION, PLAN_KIND, is_plan
from planlint.engine.discovery import walk_yaml
from planlint.rules.budget import committed

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)


def plan_paths(directory: str, config: Config) -> Iterator[str]:
    """The path of every YAML file under `directory`, as discovery finds them: one string join each
    (a repository has thousands; the few a rule reports get their display path from shown_path)."""
    join = os.path.join
    for dirpath, names in walk_yaml(Path(directory), config):
        for name in names:
            yield join(dirpath, name)


def shown_path(directory: str, path: str) -> str:
    """How a file `plan_paths(directory)` found is shown: under `directory` as written, with `/`."""
    dirpath, name = os.path.split(path)
    prefix = os.path.normpath(os.path.join(directory, os.path.relpath(dirpath, directory)))
    return os.path.join(prefix, name).replace(os.sep, "/")


def mentions(path: str, needles: list[bytes] | None, max_size: int) -> bool:
    """Might the file hold one of the names `needles`? True when its bytes contain one, or a backslash
    (an escape could spell it), or it starts with a UTF-16/32 byte order mark (the loader reads such a
    file, whose bytes spell nothing in UTF-8); `read_name` then settles it. None: every file might.
    Unreadable: no."""
    if needles is None:
        return True
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return False
    try:
        raw = os.read(fd, 1 << 16)  # a plan fits; asking for max_size would allocate that much per file
        if len(raw) == 1 << 16:
            parts = [raw]
            while sum(map(len, parts)) <= max_size and (chunk := os.read(fd, 1 << 20)):
                parts.append(chunk)
            raw = b"".join(parts)
    except OSError:
        return False
    finally:
        os.close(fd)
    return any(needle in raw for needle in needles) or b"\\" in raw or bom_encoding(raw) is not None

# A plain scalar YAML's core schema reads as a string, with no character that
# starts or ends anything special; anything else goes to the full parse.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*")
_NOT_STRINGS = {"true", "false", "null", "True", "False", "Null", "TRUE", "FALSE", "NULL", "yes", "no", "on", "off"}


def _plain_value(raw: str) -> str | None:
    """The string a value's source text stands for, when that is certain; None to parse instead."""
    value = raw.split(" #", 1)[0].split("\t#", 1)[0].strip()
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        inner = value[1:-1]
        return inner if re.fullmatch(r"[^\"\\\x00-\x1f\x7f]*", inner) else None
    if value.startswith("'") and value.endswith("'") and len(value) >= 2:
        inner = value[1:-1]
        return inner if "'" not in inner and re.fullmatch(r"[^\x00-\x1f\x7f]*", inner) else None
    if _PLAIN.fullmatch(value) and value not in _NOT_STRINGS:
        return value
    return None


def _top_value(text: str, key: str) -> str | None:
    """The rest of the one top-level line `key:...`, or None when there is not exactly one."""
    marker = f"\n{key}:"
    if text.count(marker) != 1:
        return None
    start = text.index(marker) + len(marker)
    stop = text.find("\n", start)
    return text[start:] if stop == -1 else text[start:stop]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _scan(text: str) -> tuple[bool, str | None] | None:
    """(is a plan, name) from the text alone, or None when only a parse can tell.

    String methods only (str.count/find/split run at C speed; a MULTILINE
    regular expression costs ten times as much per file).
    """
    if text.startswith("\ufeff") or "\r" in text or "\t" in text:
        return None  # a BOM, CR line ends or tabs: parse
    text = "\n" + text
    if "\n---" in text or "\n..." in text or "\n%" in text:
        return None  # several documents, or directives
    api, kind, metadata = _top_value(text, "apiVersion"), _top_value(text, "kind"), _top_value(text, "metadata")
    if api is None or kind is None or metadata is None:
        return None
    if _plain_value(api) != PLAN_API_VERSION or _plain_value(kind) != PLAN_KIND:
        return None
    if metadata.strip() and not metadata.lstrip().startswith("#"):
        return None  # flow style or a value on the same line
    start = text.index("\nmetadata:") + 1
    lines = text[start:].split("\n")[1:]
    indent = None
    name_at = None
    block: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            block.append("")
            continue
        if not line.startswith(" "):
            break  # the next top-level key (or a comment at column 0): the block ends
        if indent is None:
            indent = _indent(line)
        if _indent(line) == indent and stripped.startswith("name:"):
            if name_at is not None:
                return None  # a repeated key: the parser decides
            name_at = len(block)
        block.append(line)
    if name_at is None:
        return None
    raw = block[name_at].strip()[len("name:"):]
    if raw and raw[0] not in " ":
        return None
    following = next((line for line in block[name_at + 1:] if line), None)
    if following is not None and _indent(following) > indent:
        return None  # the value continues on the next line
    name = _plain_value(raw) if raw.strip() else None
    return None if name is None else (True, name)


COMMITTED_WORDS = [b"approved", b"running"]


def commitment(path: str, config: Config) -> tuple[str, float] | None:
    """(currency, max_spend) the plan at `path` commits (PL507), or None: not approved or running,
    no countable cap, not a plan, unreadable. A file whose bytes say neither `approved` nor
    `running` (`mentions`) is not parsed."""
    if not mentions(path, COMMITTED_WORDS, config.max_file_size):
        return None
    loaded = load_file(Path(path), config.parser_limits())
    return committed(loaded.data) if not loaded.fatal and is_plan(loaded.data) else None


def read_name(path: Path, config: Config) -> str | None:
    """metadata.name of the plan at `path`, or None (not a plan, no string name, unreadable)."""
    limits = config.parser_limits()
    text, problem = read_text(path, limits.max_file_size)
    if problem is not None or text is None or PLAN_KIND not in text:
        return None
    scanned = _scan(text)
    if scanned is not None:
        return scanned[1]
    loaded = load_file(path, limits)
    if loaded.fatal or not is_plan(loaded.data):
        return None
    meta = loaded.data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None
