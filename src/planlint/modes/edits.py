"""The edit machinery of --fix, rule-agnostic: symbolic fixes become exact text edits at loader positions.

A rule attaches a `rules.base.Fix` to its problem: changes to the data
(`Replace` a scalar, `Insert` a key beside another), no positions.
`text_fix` turns one into `Edit`s at the spans the loader recorded. A document
is never re-dumped: an `Edit` replaces a span of the decoded text (one scalar)
or inserts one (one line, or one entry of a flow mapping). `apply_edits`
applies non-overlapping edits; `verified` parses the result again and accepts
it only when the data equals the original plus exactly the values each fix
intends (numbers compared by their source text) and nothing new is wrong.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planlint.core.atomic import write_atomically
from planlint.core.loader import load_text
from planlint.core.messages import sanitize
from planlint.core.positions import LINE_BREAK, Positions, Route
from planlint.core.yaml_values import resolve_plain, scalar_text
from planlint.rules.base import Fix, Insert, Replace, lookup


_BREAK = LINE_BREAK  # the loader's spans count lines as editors do
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_COMMENT_AFTER = re.compile(r"( +)#")


@dataclass(frozen=True)
class Edit:
    start: int  # offsets into the decoded text
    end: int
    text: str


@dataclass
class TextFix:
    """A rule's fix of the finding (code, route), as text edits."""

    code: str
    route: Route
    edits: list[Edit]
    expect: list[tuple[Route, Any]]  # the data after the fix: route -> value
    fix: Fix

    @property
    def summary(self) -> str:
        return self.fix.summary


def line_starts(text: str) -> list[int]:
    """Offsets where each line begins (\\n, \\r\\n and \\r end a line, as in the loader's spans)."""
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def offset(starts: list[int], line: int, column: int) -> int | None:
    if not 1 <= line <= len(starts):
        return None
    return starts[line - 1] + column - 1


@dataclass(frozen=True)
class Site:
    start: int
    end: int
    style: str  # plain | " | '


def scalar_site(text: str, starts: list[int], positions: Positions, route: Route, value: Any) -> Site | None:
    """Where the scalar at `route` is written, when it is one plain or quoted scalar on one line."""
    span = positions.values.get(route)
    if span is None or span.line != span.end_line:
        return None
    start, end = offset(starts, span.line, span.column), offset(starts, span.end_line, span.end_column)
    if start is None or end is None or not start < end <= len(text):
        return None
    source = text[start:end]
    if source[0] in "\"'":
        if len(source) < 2 or source[-1] != source[0]:
            return None
        return Site(start, end, source[0])
    if source[0] in "&!*|>" or source != scalar_text(value):  # anchors, tags, aliases, block scalars
        return None
    return Site(start, end, "plain")


def render_scalar(value: str, style: str) -> str:
    """`value` as a YAML scalar that reads back as this string, in the original's style where possible."""
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == "plain" and _PLAIN_SAFE.match(value) and isinstance(resolve_plain(value), str):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_value(value: Any, style: str) -> str:
    """A fix's new value as YAML text: a string by `render_scalar`, a number as its source text."""
    if isinstance(value, str):
        return render_scalar(value, style)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return scalar_text(value)
    raise TypeError(f"a fix writes a string or a number, not {type(value).__name__}")


def replacement(text: str, site: Site, new: str) -> Edit:
    """Replace the scalar at `site` with `new`, keeping a comment after it on its line in its column.

    The spaces before the comment take up the difference in length; at least
    one is left (two when there were two or more), so a longer value pushes
    the comment only as far as it must.
    """
    after = _COMMENT_AFTER.match(text, site.end)
    if after is None:
        return Edit(site.start, site.end, new)
    gap = len(after.group(1))
    keep = max(gap - (len(new) - (site.end - site.start)), 2 if gap >= 2 else 1)
    return Edit(site.start, site.end + gap, new + " " * keep)


def insert_edit(text: str, starts: list[int], positions: Positions, change: Insert) -> Edit | None:
    """`key: value` beside the entry `change.beside` of the mapping, in the mapping's own style.

    In a flow mapping the new entry goes just before that entry; in a block
    mapping on the line after it, at its indentation, when that entry is one
    simple `  key: value` line. None when neither fits.
    """
    mapping_route, key = change.route[:-1], change.route[-1]
    beside = (*mapping_route, change.beside)
    key_span = positions.keys.get(beside)
    value_span = positions.values.get(beside)
    mapping = positions.values.get(mapping_route)
    if key_span is None or value_span is None or mapping is None:
        return None
    map_start = offset(starts, mapping.line, mapping.column)
    key_start = offset(starts, key_span.line, key_span.column)
    if map_start is None or key_start is None:
        return None
    entry = f"{render_value(key, 'plain')}: {render_value(change.value, 'plain')}"
    if text[map_start] == "{":  # flow mapping: a new entry before the other one
        return Edit(key_start, key_start, f"{entry}, ")
    line_start = starts[key_span.line - 1]
    indent = text[line_start:key_start]
    if indent.strip(" ") or value_span.end_line != key_span.line:
        return None  # not a simple `  key: ...` line
    newline = newline_of(text)
    if value_span.end_line < len(starts):  # insert at the start of the next line
        at = starts[value_span.end_line]
        return Edit(at, at, f"{indent}{entry}{newline}")
    at = len(text)  # the last line has no line break: keep it that way
    return Edit(at, at, f"{newline}{indent}{entry}")


def text_fix(code: str, route: Route, fix: Fix, text: str, starts: list[int], positions: Positions, data: Any) -> TextFix | None:
    """The edits that make `fix`'s changes in `text`; None when one of them cannot be placed with certainty."""
    edits: list[Edit] = []
    expect: list[tuple[Route, Any]] = []
    for change in fix.changes:
        if isinstance(change, Replace):
            site = scalar_site(text, starts, positions, change.route, lookup(data, change.route))
            if site is None:
                return None
            style = '"' if change.quoted and site.style == "plain" else site.style
            edits.append(replacement(text, site, render_value(change.value, style)))
        elif isinstance(change, Insert):
            edit = insert_edit(text, starts, positions, change)
            if edit is None:
                return None
            edits.append(edit)
        else:
            raise TypeError(f"unknown fix change {change!r}")
        expect.append((change.route, change.value))
    return TextFix(code, route, edits, expect, fix)


def newline_of(text: str) -> str:
    match = re.search(r"\r\n|\r|\n", text)
    return match.group(0) if match else "\n"


def apply_edits(text: str, edits: list[Edit]) -> str:
    out, last = [], len(text)
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out.append(text[edit.end:last])
        out.append(edit.text)
        last = edit.start
    out.append(text[:last])
    return "".join(reversed(out))


def non_overlapping(fixes: list[TextFix]) -> list[TextFix]:
    kept: list[TextFix] = []
    taken: list[tuple[int, int]] = []
    for fix in fixes:
        spans = [(e.start, e.end) for e in fix.edits]
        if any(a < d and c < b or (a == b == c == d) for a, b in spans for c, d in taken):
            continue
        kept.append(fix)
        taken.extend(spans)
    return kept


def _copy(value: Any, memo: dict) -> Any:
    if isinstance(value, (dict, list)):
        if id(value) in memo:
            return memo[id(value)]
        if isinstance(value, dict):
            new: Any = {}
            memo[id(value)] = new
            for k, v in value.items():
                new[k] = _copy(v, memo)
        else:
            new = []
            memo[id(value)] = new
            new.extend(_copy(v, memo) for v in value)
        return new
    return value


def _set(data: Any, route: Route, value: Any) -> None:
    node = data
    for part in route[:-1]:
        node = node[part]
    node[route[-1]] = value


def _normal(value: Any) -> Any:
    """Data in a form where equal means "reads the same": numbers by their source text."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return (type(value).__name__, scalar_text(value))
    return ("str", value)


def verified(original, new_text: str, fixes: list[TextFix], limits) -> bool:
    """Does `new_text` read as the original data with exactly the fixes' changes?"""
    expected = _copy(original.data, {})
    for fix in fixes:
        for route, value in fix.expect:
            _set(expected, route, value)
    reloaded = load_text(new_text, limits)
    if reloaded.fatal or [p.code for p in reloaded.problems] != [p.code for p in original.problems]:
        return False
    return _normal(reloaded.data) == _normal(expected)


def write_file(path: Path, data: bytes) -> None:
    target = Path(os.path.realpath(path))  # write through a symlink, keep the link
    write_atomically(target, data, mode=stat.S_IMODE(target.stat().st_mode), prefix=f".{target.name}.", suffix=".planlint-fix")


def _lines(text: str) -> list[str]:
    """Lines split at LF only, so CRLF endings stay part of their line."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def unified_diff(old: str, new: str, display: str) -> str:
    """A `git apply`-able diff of one file (a/ and b/ prefixes, "\\ No newline" markers)."""
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), f"a/{display}", f"b/{display}"):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        plain = body.replace("\t", " ").replace("\ufeff", "", 1 if body[1:2] == "\ufeff" else 0)
        if sanitize(plain) != plain:
            body = sanitize(body)  # plan content must not reach a terminal as control characters
        out.append(body + (ending if ending else "\n\\ No newline at end of file\n"))
    return "".join(out)
