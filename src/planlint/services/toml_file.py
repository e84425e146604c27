"""TOML files read safely, with the line and column of every key and value.

Reading: the stdlib `tomllib` (Python 3.11+), `tomli` (the same parser,
published separately) on 3.10. Neither gives positions, and the maintained
round-trip library (tomlkit) keeps the layout but not line and column
numbers either. So positions come from `scan()`, a small scanner over the
source that runs only on text tomllib has accepted: it walks table headers,
keys and values (strings of the four kinds, arrays, inline tables, bare
scalars) with an explicit stack and records a Span for every key and value,
under the same routes (tuples of keys and indexes) the plan rules use. It
never decides validity (tomllib did), and where it meets something it does
not expect it stops: the routes it did record stay right, the rest fall back
to their nearest recorded prefix.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from planlint.core.loader import read_text
from planlint.core.positions import START, Positions, Route, Span

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10: the same parser, published separately
    import tomli as tomllib  # type: ignore[no-redef]


@dataclass
class TomlDocument:
    """One submit config as the run rules see it.

    `path` is the display path (relative to the current directory, `/`
    separators); `data` is None when the file could not be read as TOML, and
    then `error` says why and where.
    """

    path: str
    kind: str  # what the file is to its reader (run_config.TRAINING or EVAL)
    text: str | None = None
    data: dict | None = None
    positions: Positions = field(default_factory=Positions)
    error: tuple[str, Span] | None = None


# --------------------------------------------------------------------------- reading


def parse(text: str, path: str, kind: str) -> TomlDocument:
    """`text` as a TomlDocument: data and positions, or the parser's complaint and where it points."""
    document = TomlDocument(path, kind, text=text)
    try:
        document.data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        document.error = _decode_error(exc, text)
        return document
    except (RecursionError, MemoryError):  # hostile nesting: tomllib is recursive
        document.error = ("nesting too deep to read", START)
        return document
    document.positions = scan(text)
    return document


_AT = re.compile(r"^(.*?)\s*\(at line (\d+), column (\d+)\)\s*$", re.S)
_AT_END = re.compile(r"^(.*?)\s*\(at end of document\)\s*$", re.S)


def _decode_error(exc: Exception, text: str) -> tuple[str, Span]:
    message = str(exc)
    match = _AT.match(message)
    if match:
        line, column = int(match.group(2)), int(match.group(3))
        return match.group(1), Span(line, column, line, column + 1)
    match = _AT_END.match(message)
    if match:
        lines = text.split("\n")
        return match.group(1) + " at the end of the file", Span(len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 1)
    return message.splitlines()[0] if message else "not valid TOML", START


# --------------------------------------------------------------------------- positions

_WS = re.compile(r"[ \t]*")
_WS_NL = re.compile(r"(?:[ \t\r\n]|#[^\n]*)*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:\\.|[^"\\]|"(?!""))*"{0,2}"""', re.S)
_ML_LITERAL = re.compile(r"'''(?:[^']|'(?!''))*'{0,2}'''", re.S)
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}[^\s,\]}#]*")
_BARE_VALUE = re.compile(r"[^\s,\]}#]+")


class _Stop(Exception):
    """The scanner met something it does not expect: keep what was recorded."""


class _Source:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.at(start), *self.at(end))


def scan(text: str) -> Positions:
    """The span of every key and value in TOML `text` (already accepted by tomllib), by route."""
    positions = Positions()
    try:
        _scan(_Source(text), positions)
    except _Stop:
        pass
    return positions


def _key(src: _Source, pos: int) -> tuple[list[tuple[str, int, int]], int]:
    """A dotted key at `pos`: [(name, start, end)] and the offset after it."""
    text = src.text
    parts = []
    while True:
        pos = _WS.match(text, pos).end()
        for pattern in (_BARE_KEY, _BASIC, _LITERAL):
            match = pattern.match(text, pos)
            if match:
                break
        else:
            raise _Stop
        raw = match.group(0)
        name = raw if pattern is _BARE_KEY else tomllib.loads(f"k = {raw}")["k"]
        parts.append((name, match.start(), match.end()))
        pos = _WS.match(text, match.end()).end()
        if text.startswith(".", pos):
            pos += 1
            continue
        return parts, pos


def _record_key(positions: Positions, src: _Source, base: Route, parts: list) -> Route:
    route = base
    for name, start, end in parts:
        route = route + (name,)
        positions.keys.setdefault(route, src.span(start, end))
    return route


def _scan(src: _Source, positions: Positions) -> None:
    text = src.text
    n = len(text)
    table: Route = ()
    array_tables: dict[Route, int] = {}
    # Open containers: [kind ("array" | "inline"), route, start offset, next index]
    stack: list[list] = []
    pos = 0
    while True:
        if not stack:
            pos = _WS_NL.match(text, pos).end()
            if pos >= n:
                return
            if text.startswith("[", pos):
                double = text.startswith("[[", pos)
                parts, pos = _key(src, pos + (2 if double else 1))
                close = "]]" if double else "]"
                if not text.startswith(close, pos):
                    raise _Stop
                names = tuple(name for name, _, _ in parts)
                route: Route = ()
                for depth, (name, start, end) in enumerate(parts):
                    route = route + (name,)
                    positions.keys.setdefault(route, src.span(start, end))
                    if depth < len(parts) - 1 and names[: depth + 1] in array_tables:
                        route = route + (array_tables[names[: depth + 1]],)
                if double:
                    index = array_tables.get(names, -1) + 1
                    array_tables[names] = index
                    # Arrays of tables below this one start again in its new element.
                    for other in [p for p in array_tables if len(p) > len(names) and p[: len(names)] == names]:
                        del array_tables[other]
                    route = route + (index,)
                table = route
                positions.keys[table] = src.span(parts[-1][1], parts[-1][2])
                positions.values[table] = src.span(parts[0][1] - len(close), pos + len(close))
                pos += len(close)
                continue
            parts, pos = _key(src, pos)
            route = _record_key(positions, src, table, parts)
            if not text.startswith("=", pos):
                raise _Stop
            pos = _value(src, positions, stack, route, _WS.match(text, pos + 1).end())
            continue
        frame = stack[-1]
        kind, route, start, index = frame
        pos = _WS_NL.match(text, pos).end() if kind == "array" else _WS.match(text, pos).end()
        if pos >= n:
            raise _Stop
        char = text[pos]
        if char == ",":
            pos += 1
            continue
        if (kind == "array" and char == "]") or (kind == "inline" and char == "}"):
            positions.values[route] = src.span(start, pos + 1)
            stack.pop()
            pos += 1
            continue
        if kind == "array":
            frame[3] += 1
            pos = _value(src, positions, stack, route + (index,), pos)
        else:
            parts, pos = _key(src, pos)
            inner = _record_key(positions, src, route, parts)
            if not text.startswith("=", pos):
                raise _Stop
            pos = _value(src, positions, stack, inner, _WS.match(text, pos + 1).end())


def _value(src: _Source, positions: Positions, stack: list, route: Route, pos: int) -> int:
    """Record the value starting at `pos`; a container is pushed and closed later. The offset after it."""
    text = src.text
    if pos >= len(text):
        raise _Stop
    char = text[pos]
    if char == "[":
        stack.append(["array", route, pos, 0])
        return pos + 1
    if char == "{":
        stack.append(["inline", route, pos, 0])
        return pos + 1
    if text.startswith('"""', pos):
        match = _ML_BASIC.match(text, pos)
    elif text.startswith("'''", pos):
        match = _ML_LITERAL.match(text, pos)
    elif char == '"':
        match = _BASIC.match(text, pos)
    elif char == "'":
        match = _LITERAL.match(text, pos)
    else:
        match = _DATETIME.match(text, pos) or _BARE_VALUE.match(text, pos)
    if match is None:
        raise _Stop
    positions.values[route] = src.span(pos, match.end())
    return match.end()


def walk_strings(data: Any, route: Route = ()) -> Iterator[tuple[Route, str]]:
    """(route, text) for every string value in the TOML data, without recursion."""
    stack = [(data, route)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack.extend((item, where + (key,)) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((item, where + (index,)) for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            yield where, value


def read_document(path: Path, display: str, kind: str, max_size: int) -> TomlDocument:
    """Read and parse the file at `path` (size-limited, UTF-8)."""
    text, problem = read_text(path, max_size)
    if problem is not None or text is None:
        document = TomlDocument(display, kind)
        document.error = (problem.message if problem is not None else "cannot be read", START)
        return document
    return parse(text, display, kind)
