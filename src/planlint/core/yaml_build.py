"""Read a plan file into plain data plus source positions, safely.

The YAML event stream (libyaml through ruamel.yaml.clib when it is installed,
ruamel's pure-Python parser otherwise) is turned into dicts, lists and scalars
by an explicit stack, so depth is bounded by our limit and never by Python's
recursion limit. Tags other than the YAML core ones are refused, never
constructed; aliases share the anchored object and their expanded size is
counted, so an alias bomb is rejected after a few hundred events.
"""

from __future__ import annotations

import math
import os
import re
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlint.core.paths import leads_outside
from planlint.core.positions import Positions, Route, Span
from planlint.core.yaml_values import FALSE, NULL, PLAIN_WORDS, TRUE, YamlFloat, parse_number, resolve_plain, scalar_text

DEFAULT_MAX_FILE_SIZE = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    max_depth: int = 64  # plans are ~5 levels deep
    max_nodes: int = 100_000  # after alias expansion
    max_aliases: int = 1_000
    time_budget: float = 5.0  # seconds per file, last line of defence


@dataclass
class LoadProblem:
    code: str  # PL001, PL002 or PL006
    span: Span
    message: str
    route: Route = ()


@dataclass
class Loaded:
    text: str | None = None
    data: Any = None
    positions: Positions = field(default_factory=Positions)
    problems: list[LoadProblem] = field(default_factory=list)
    fatal: bool = False  # PL001/PL006: nothing else is checked
    _quoted: Sequence[Span] = field(default_factory=list, repr=False)
    _detail: "_Detail | None" = field(default=None, repr=False, compare=False)

    @property
    def quoted(self) -> Sequence[Span]:
        """Where quoted and block scalars (keys included) were written: a `#` inside
        one is text, not a comment, so it cannot hold a suppression. After a plain
        document's fast reading, a sequence that works them out on first use (few
        texts hold a `# planlint:` comment or a credential-shaped one)."""
        return self._quoted

    @quoted.setter
    def quoted(self, spans: Sequence[Span]) -> None:
        self._quoted = spans


class _QuotedSpans(Sequence):
    """Loaded.quoted of a plain document: read from the full reading on first use."""

    __slots__ = ("_detail",)

    def __init__(self, detail: "_Detail") -> None:
        self._detail = detail

    def _spans(self) -> Sequence[Span]:
        return self._detail.loaded().quoted

    def __len__(self) -> int:
        return len(self._spans())

    def __getitem__(self, index):
        return self._spans()[index]

    def __iter__(self):
        return iter(self._spans())

    def __eq__(self, other: object) -> bool:
        return list(self) == (list(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return repr(list(self))


# --------------------------------------------------------------------------- reading


#: O_NONBLOCK: opening a named pipe does not wait for a writer (it is then refused, see read_text).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_text(path: Path, max_size: int) -> tuple[str | None, LoadProblem | None]:
    """The file's text, or the PL006 that says why it cannot be read.

    Unbuffered os-level reads of what fstat reports: every run reads every plan
    (the cache is keyed on the text), so a few microseconds a file count.
    """
    if leads_outside(path):  # a link a pull request committed: never read, so never quoted
        return None, _unreadable("is a symbolic link that leads out of the repository: not read (planlint reads files only inside the checkout)")
    try:
        fd = os.open(path, _READ_FLAGS)
    except IsADirectoryError:
        return None, _unreadable("is a directory, not a file")
    except OSError as exc:
        return None, _unreadable(f"cannot be read: {exc.strerror or exc.__class__.__name__}")
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            return None, _unreadable("is a directory, not a file")
        if stat.S_ISFIFO(status.st_mode) or stat.S_ISSOCK(status.st_mode):
            return None, _unreadable("is a named pipe or a socket, not a file: not read")
        size = status.st_size
        if size > max_size:
            return None, _unreadable(f"file is {size:,} bytes, over the {max_size:,}-byte limit (max_file_size)")
        raw = os.read(fd, size + 1)
        if len(raw) != size:  # it grew or shrank while we read it, or a special file that reports 0
            parts, total = [raw], len(raw)
            while total <= max_size:
                chunk = os.read(fd, max_size + 1 - total)
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
            raw = b"".join(parts)
    except IsADirectoryError:
        return None, _unreadable("is a directory, not a file")
    except OSError as exc:
        return None, _unreadable(f"cannot be read: {exc.strerror or exc.__class__.__name__}")
    finally:
        os.close(fd)
    if len(raw) > max_size:  # grew while we read it, or a special file
        return None, _unreadable(f"file is over the {max_size:,}-byte limit (max_file_size)")
    return decode(raw)


# Byte order marks, longest first (UTF-32-LE's starts with UTF-16-LE's). A
# checkout can be UTF-16 without anyone seeing it: `.gitattributes`
# `working-tree-encoding=UTF-16` re-encodes the file on checkout while GitHub
# shows the UTF-8 blob. Such a file is read, not skipped as binary.
_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


def bom_encoding(raw: bytes) -> tuple[str, bytes] | None:
    """(codec, BOM) of a UTF-16/32 file that starts with a byte order mark, else None."""
    if raw[:1] not in (b"\x00", b"\xfe", b"\xff"):
        return None
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return codec, bom
    return None


def decode(raw: bytes) -> tuple[str | None, LoadProblem | None]:
    wide = bom_encoding(raw)
    if wide is not None:
        codec, bom = wide
        try:
            text = raw[len(bom):].decode(codec)
        except UnicodeDecodeError as exc:
            return None, _unreadable(f"is not valid {codec.upper()} (it starts with that byte order mark; bad bytes at offset {exc.start + len(bom)}); save it as UTF-8")
        if "\x00" in text:
            return None, _unreadable(f"holds a NUL character ({codec.upper()}); plans are text")
        return text, None
    nul = raw.find(b"\x00")
    if nul != -1:
        return None, _unreadable(f"looks binary (NUL byte at offset {nul}); plans are UTF-8 text (UTF-16 and UTF-32 are read only with a byte order mark)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, _unreadable(f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}, line {line}); save it as UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


def _unreadable(message: str) -> LoadProblem:
    return LoadProblem("PL006", Span(1, 1, 1, 1), message)


# --------------------------------------------------------------------------- scalars

_CORE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
    "!",
}


class _Refused(Exception):
    def __init__(self, code: str, message: str, span: Span) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span


def _scalar(value: str, tag: str | None, plain: bool, span: Span) -> Any:
    if tag is None or tag == "?":
        return resolve_plain(value) if plain else value
    if tag == "!" or tag == "tag:yaml.org,2002:str":
        return value
    if tag == "tag:yaml.org,2002:null":
        if value not in NULL:
            raise _Refused("PL001", f"{value!r} is not a null (tag !!null)", span)
        return None
    if tag == "tag:yaml.org,2002:bool":
        if value in TRUE:
            return True
        if value in FALSE:
            return False
        raise _Refused("PL001", f"{_clip(value)!r} is not a boolean (tag !!bool takes true or false)", span)
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        number = parse_number(value)
        if number is None or (tag.endswith(":int") and not isinstance(number, int)):
            raise _Refused("PL001", f"{_clip(value)!r} is not a valid {tag.rsplit(':', 1)[1]}", span)
        if tag.endswith(":float"):
            return YamlFloat(float(number), value)
        return number
    raise _Refused("PL001", f"unsupported YAML tag {_clip(_short_tag(tag))!r}; plans use plain YAML data, tags are never constructed", span)


def _short_tag(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- events


def _event_source(text: str):
    """(next_event, close) over the YAML events of `text`; the C parser when available.

    Both parsers produce ruamel.yaml.events objects and end with a StreamEndEvent.
    """
    try:
        from _ruamel_yaml import CParser  # type: ignore[import-not-found]
    except ImportError:
        CParser = None
    if CParser is not None:
        parser = CParser(text)
        return parser.get_event, parser.dispose
    # pragma: no cover - exercised where ruamel.yaml.clib is unavailable
    from ruamel.yaml import YAML

    return iter(YAML(typ="safe", pure=True).parse(text)).__next__, lambda: None


_new_tuple = tuple.__new__  # Span(...) without the Python-level NamedTuple __new__: one call per event


def _span(event) -> Span:
    start, end = event.start_mark, event.end_mark
    return _new_tuple(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1))


class _Frame:
    __slots__ = ("container", "is_list", "route", "span", "anchor", "size", "key", "key_span", "key_merges", "index", "merges", "explicit")

    def __init__(self, container, route, span, anchor):
        self.container = container
        self.is_list = isinstance(container, list)
        self.route = route
        self.span = span
        self.anchor = anchor
        self.size = 1
        self.key = _NO_KEY
        self.key_span = None
        self.key_merges = False
        self.index = 0
        self.merges = []
        self.explicit = set()


_NO_KEY = object()
_MERGE = "<<"


_ODD_BREAKS = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")


def _remap_lines(text: str, result: Loaded) -> None:
    """Re-express the parser's positions with lines ending at \\n, \\r\\n and \\r only.

    libyaml (YAML 1.1) also ends a line at NEL, U+2028 and U+2029; left as it is,
    every such character in a value moved each later finding (and its GitHub
    annotation) down a line. Only texts holding one of them pay for this.
    """
    from bisect import bisect_right

    parser_starts = [0]
    real_starts = [0]
    for match in _ODD_BREAKS.finditer(text):
        parser_starts.append(match.end())
        if match.group() in ("\r\n", "\r", "\n"):
            real_starts.append(match.end())
    last = len(parser_starts)

    def point(line: int, column: int) -> tuple[int, int]:
        offset = parser_starts[min(max(line, 1), last) - 1] + column - 1
        real = bisect_right(real_starts, offset) - 1
        return real + 1, offset - real_starts[real] + 1

    def span(old: Span) -> Span:
        return Span(*point(old.line, old.column), *point(old.end_line, old.end_column))

    positions = result.positions
    positions.values = {route: span(s) for route, s in positions.values.items()}
    positions.keys = {route: span(s) for route, s in positions.keys.items()}
    result.quoted = [span(s) for s in result.quoted]
    for problem in result.problems:
        problem.span = span(problem.span)


def load_text(text: str, limits: Limits = Limits()) -> Loaded:
    """Parse `text` (one YAML document) into data and positions."""
    deadline = time.monotonic() + limits.time_budget
    odd_breaks = "\x85" in text or "\u2028" in text or "\u2029" in text
    if not odd_breaks:
        try:
            fast = _build_plain(text, limits, deadline)
        except _Refused as refused:  # the time budget
            return Loaded(text=text, problems=[LoadProblem(refused.code, refused.span, refused.message)], fatal=True)
        if fast is not None:
            data, values, keys = fast
            detail = _Detail(text, limits)
            return Loaded(text=text, data=data, positions=Positions.deferred(values, keys, SHALLOW, detail.spans), _quoted=_QuotedSpans(detail), _detail=detail)
    result = Loaded(text=text)
    try:
        _load(text, limits, result, deadline)
    finally:
        if odd_breaks:
            _remap_lines(text, result)
    return result


class _Detail:
    """What `_build_plain` leaves out, worked out on first use: every position, the quoted scalars.

    It reads the text again with `_build`, the reader of every document, which
    gives exactly the positions it gives any text (the time budget was spent
    on the first reading, which found nothing this one can refuse).
    """

    __slots__ = ("text", "limits", "_loaded")

    def __init__(self, text: str, limits: Limits) -> None:
        self.text = text
        self.limits = limits
        self._loaded: Loaded | None = None

    def loaded(self) -> Loaded:
        if self._loaded is None:
            full = Loaded(text=self.text)
            _load(self.text, self.limits, full, math.inf)
            self._loaded = full
        return self._loaded

    def spans(self) -> tuple[dict[Route, Span], dict[Route, Span]]:
        full = self.loaded()
        return full.positions.values, full.positions.keys


def _load(text: str, limits: Limits, result: Loaded, deadline: float) -> None:
    try:
        _build(text, limits, result, deadline)
    except _Refused as refused:
        result.problems.append(LoadProblem(refused.code, refused.span, refused.message))
        result.fatal = True
        result.data = None
    except RecursionError:  # pragma: no cover - the depth limit comes first
        result.problems.append(_unreadable("nesting too deep to read"))
        result.fatal = True
        result.data = None
    except Exception as exc:  # noqa: BLE001 - any parser failure is a finding
        result.problems.append(_syntax_problem(exc, text))
        result.fatal = True
        result.data = None


def _syntax_problem(exc: BaseException, text: str) -> LoadProblem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None and getattr(mark, "line", None) is not None:
        line, column = mark.line + 1, mark.column + 1
    elif isinstance(getattr(exc, "position", None), int):  # ReaderError
        pos = exc.position  # type: ignore[attr-defined]
        # In the parser's own line count, like the marks (load_text remaps both).
        breaks = [m.end() for m in _ODD_BREAKS.finditer(text, 0, pos)]
        line = len(breaks) + 1
        column = pos - (breaks[-1] if breaks else 0) + 1
    else:
        line, column = 1, 1
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        message = str(problem)
        if context:
            message = f"{context}, {message}"
    elif type(exc).__name__ == "ReaderError":
        message = f"unacceptable character: {getattr(exc, 'reason', 'control character')}"
    else:
        message = str(exc).split("\n", 1)[0] or type(exc).__name__
    return LoadProblem("PL001", Span(line, column, line, column + 1), f"invalid YAML: {message}")


def _build(text: str, limits: Limits, result: Loaded, deadline: float) -> None:
    """Events -> data and positions.

    The loop runs once per YAML event (~230 for a typical plan), so scalars, the
    bulk of the events, are resolved and attached inline; `place` handles the
    rarer finished collections and aliases.
    """
    from ruamel.yaml.events import (
        AliasEvent,
        DocumentStartEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
        StreamEndEvent,
    )

    positions = result.positions
    values = positions.values
    keys = positions.keys
    problems = result.problems
    quoted = result.quoted
    new = _new_tuple
    anchors: dict[str, tuple[Any, int]] = {}
    open_anchors: set[str] = set()
    stack: list[_Frame] = []
    documents = 0
    aliases = 0
    total = 0
    max_nodes = limits.max_nodes
    root: Any = None
    count = 0

    def too_many(span: Span) -> _Refused:
        return _Refused("PL006", f"document expands to more than {max_nodes:,} values (aliases?); limit max_nodes", span)

    def duplicate(frame: _Frame, key: str, route: Route) -> LoadProblem:
        return LoadProblem("PL002", frame.key_span, f"duplicate key {_clip(key)!r}: the first value is kept, this one is ignored; remove one", route)

    def place(value: Any, span: Span, size: int) -> None:
        """Attach a finished collection or an alias to the innermost open collection."""
        nonlocal root, total
        total += size
        if total > max_nodes:
            raise too_many(span)
        if not stack:
            root = value
            values[()] = span
            return
        frame = stack[-1]
        frame.size += size
        if frame.is_list:
            route = frame.route + (frame.index,)
            frame.index += 1
            frame.container.append(value)
            values[route] = span
            return
        if frame.key is _NO_KEY:  # this value is a key
            if isinstance(value, (dict, list)):
                raise _Refused("PL001", "a mapping key must be a plain value, not a mapping or sequence", span)
            frame.key = scalar_text(value)
            frame.key_span = span
            frame.key_merges = frame.key == _MERGE
            return
        key, frame.key = frame.key, _NO_KEY
        if frame.key_merges:
            frame.merges.append((value, span))
            return
        route = frame.route + (key,)
        if key in frame.explicit:
            problems.append(duplicate(frame, key, route))
            return
        frame.explicit.add(key)
        frame.container[key] = value
        keys[route] = frame.key_span
        values[route] = span

    next_event, close = _event_source(text)
    try:
        while True:
            event = next_event()
            count += 1
            if count & 1023 == 0 and time.monotonic() > deadline:
                raise _Refused("PL006", f"reading took longer than {limits.time_budget:g}s; limit time_budget", _span(event))
            cls = event.__class__
            if cls is ScalarEvent:
                start, end = event.start_mark, event.end_mark
                span = new(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1))
                raw = event.value
                style = event.style
                plain = style is None or style == ""
                tag = event.tag
                if tag is None:
                    if plain:
                        implicit = event.implicit
                        if implicit and not implicit[0]:
                            plain = False
                            value = raw
                        else:
                            try:
                                value = resolve_plain(raw)
                            except ValueError:
                                raise _Refused("PL001", "number too large to read (over 4,300 digits)", span) from None
                    else:
                        value = raw
                        quoted.append(span)
                else:
                    if not plain:
                        quoted.append(span)
                    if tag not in _CORE_TAGS and tag != "?":
                        raise _Refused("PL001", f"unsupported YAML tag {_clip(_short_tag(tag))!r}; plans use plain YAML data, tags are never constructed", span)
                    try:
                        value = _scalar(raw, tag, plain, span)
                    except ValueError:
                        raise _Refused("PL001", "number too large to read (over 4,300 digits)", span) from None
                total += 1
                if total > max_nodes:
                    raise too_many(span)
                if stack:
                    frame = stack[-1]
                    frame.size += 1
                    if frame.is_list:
                        route = frame.route + (frame.index,)
                        frame.index += 1
                        frame.container.append(value)
                        values[route] = span
                    elif frame.key is _NO_KEY:
                        # A quoted "<<" is an ordinary key; only the plain one merges.
                        if plain:
                            key = value if value.__class__ is str else scalar_text(value)
                            frame.key_merges = key == _MERGE
                        else:
                            key = raw
                            frame.key_merges = False
                        frame.key = key
                        frame.key_span = span
                    else:
                        key = frame.key
                        frame.key = _NO_KEY
                        if frame.key_merges:
                            frame.merges.append((value, span))
                        else:
                            route = frame.route + (key,)
                            if key in frame.explicit:
                                problems.append(duplicate(frame, key, route))
                            else:
                                frame.explicit.add(key)
                                frame.container[key] = value
                                keys[route] = frame.key_span
                                values[route] = span
                else:
                    root = value
                    values[()] = span
                if event.anchor:
                    anchors[event.anchor] = (value, 1)
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                span = _span(event)
                tag = event.tag
                if tag is not None and tag not in _CORE_TAGS:
                    raise _Refused("PL001", f"unsupported YAML tag {_clip(_short_tag(tag))!r}; plans use plain YAML data, tags are never constructed", span)
                if len(stack) >= limits.max_depth:
                    raise _Refused("PL006", f"nesting is deeper than {limits.max_depth} levels; limit max_depth", span)
                container: Any = {} if cls is MappingStartEvent else []
                if stack:
                    parent = stack[-1]
                    if parent.is_list:
                        route = parent.route + (parent.index,)
                    elif parent.key is _NO_KEY:
                        raise _Refused("PL001", "a mapping key must be a plain value, not a mapping or sequence", span)
                    else:
                        route = parent.route + (parent.key,)
                else:
                    route = ()
                if event.anchor:
                    open_anchors.add(event.anchor)
                total += 1
                stack.append(_Frame(container, route, span, event.anchor))
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                frame = stack.pop()
                end_mark = event.end_mark
                span = new(Span, (frame.span.line, frame.span.column, end_mark.line + 1, end_mark.column + 1))
                if frame.merges:
                    _merge(frame, span)
                if frame.anchor:
                    open_anchors.discard(frame.anchor)
                place(frame.container, span, 0)
                if stack:  # the children were counted in `total` as they came
                    stack[-1].size += frame.size
                if frame.anchor:
                    anchors[frame.anchor] = (frame.container, frame.size)
            elif cls is AliasEvent:
                span = _span(event)
                name = event.anchor
                if name in open_anchors:
                    raise _Refused("PL006", f"alias *{_clip(name)} refers to a node that contains it (a recursive alias)", span)
                if name not in anchors:
                    raise _Refused("PL001", f"invalid YAML: alias *{_clip(name)} refers to an undefined anchor", span)
                aliases += 1
                if aliases > limits.max_aliases:
                    raise _Refused("PL006", f"more than {limits.max_aliases:,} aliases; limit max_aliases", span)
                value, size = anchors[name]
                place(value, span, size)
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _Refused("PL001", "invalid YAML: a plan file holds one document, found a second '---'", _span(event))
            elif cls is StreamEndEvent:
                break
    finally:
        close()
    result.data = root


# Routes of at most this many steps get their positions from `_build_plain` itself;
# deeper ones when first asked for (Positions.deferred).
SHALLOW = 2
_NUMBER_START = frozenset("0123456789-+.")


def _build_plain(text: str, limits: Limits, deadline: float) -> tuple[Any, dict[Route, Span], dict[Route, Span]] | None:
    """(data, positions of the routes up to SHALLOW steps, their keys) of a plain document, else None.

    Most plans are plain: no tags, anchors, aliases, merge keys or duplicate
    keys, one document, within the limits. For those this gives the data
    `_build` gives, at about half its cost, by keeping no position below
    SHALLOW and nothing else: no per-value route, span or quoted span. It
    returns None as soon as the document is anything else (and for YAML errors),
    and `_build` reads it instead, with every check and message. Only the time
    budget and the depth limit are enforced here, exactly as `_build` does
    (nothing before them was anything `_build` reports).
    """
    from ruamel.yaml.events import (
        AliasEvent,
        DocumentStartEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
        StreamEndEvent,
    )

    values: dict[Route, Span] = {}
    keys: dict[Route, Span] = {}
    new = _new_tuple
    words = PLAIN_WORDS.get
    number_start = _NUMBER_START
    no_key = _NO_KEY
    max_depth = limits.max_depth
    stack: list[tuple] = []  # the enclosing collections' state, as below
    # The innermost open collection: its container, whether it is a list, the
    # key read and not yet given a value, its route (when its children are
    # SHALLOW or less deep), the pending key's span, the next list index,
    # where it starts, and its depth (the length of its children's routes).
    container: Any = None
    is_list = False
    key: Any = no_key
    route: Route | None = ()
    key_span: Span | None = None
    index = 0
    start: tuple[int, int] | None = None
    depth = 0
    root: Any = None
    count = 0
    ends = 0
    documents = 0
    next_event, close = _event_source(text)
    try:
        while True:
            try:
                event = next_event()
            except Exception:  # noqa: BLE001 - a YAML error: _build reports it
                return None
            count += 1
            if count & 1023 == 0 and time.monotonic() > deadline:
                raise _Refused("PL006", f"reading took longer than {limits.time_budget:g}s; limit time_budget", _span(event))
            cls = event.__class__
            if cls is ScalarEvent:
                if event.ctag is not None or event.anchor is not None:
                    return None
                raw = event.value
                style = event.style
                if style is None or style == "":
                    implicit = event.implicit
                    if implicit and not implicit[0]:
                        value = raw
                        plain = False
                    else:
                        plain = True
                        value = words(raw, no_key)
                        if value is no_key:
                            value = raw
                            if raw[:1] in number_start:
                                try:
                                    number = parse_number(raw)
                                except ValueError:  # over 4,300 digits
                                    return None
                                if number is not None:
                                    value = number
                else:
                    value = raw
                    plain = False
                if container is None:
                    root = value
                    start_mark, end_mark = event.start_mark, event.end_mark
                    values[()] = new(Span, (start_mark.line + 1, start_mark.column + 1, end_mark.line + 1, end_mark.column + 1))
                elif is_list:
                    container.append(value)
                    if depth <= SHALLOW:
                        start_mark, end_mark = event.start_mark, event.end_mark
                        values[route + (index,)] = new(Span, (start_mark.line + 1, start_mark.column + 1, end_mark.line + 1, end_mark.column + 1))
                        index += 1
                elif key is no_key:
                    if plain:
                        key = value if value.__class__ is str else scalar_text(value)
                        if key == _MERGE:
                            return None
                    else:
                        key = raw
                    if depth <= SHALLOW:
                        start_mark, end_mark = event.start_mark, event.end_mark
                        key_span = new(Span, (start_mark.line + 1, start_mark.column + 1, end_mark.line + 1, end_mark.column + 1))
                else:
                    if key in container:
                        return None
                    container[key] = value
                    if depth <= SHALLOW:
                        here = route + (key,)
                        keys[here] = key_span
                        start_mark, end_mark = event.start_mark, event.end_mark
                        values[here] = new(Span, (start_mark.line + 1, start_mark.column + 1, end_mark.line + 1, end_mark.column + 1))
                    key = no_key
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                if event.ctag is not None or event.anchor is not None:
                    return None
                if depth >= max_depth:  # as _build refuses it, without reading the document twice
                    if count - ends - 3 > limits.max_nodes:
                        return None  # over max_nodes before this (stream, document, this): _build may stop at that first
                    raise _Refused("PL006", f"nesting is deeper than {max_depth} levels; limit max_depth", _span(event))
                if container is not None and not is_list and key is no_key:
                    return None  # a collection as a key
                if depth < SHALLOW:
                    inner = () if container is None else route + ((index,) if is_list else (key,))
                else:
                    inner = None
                stack.append((container, is_list, key, route, key_span, index, start, depth))
                container = {} if cls is MappingStartEvent else []
                is_list = cls is SequenceStartEvent
                key = no_key
                route = inner
                key_span = None
                index = 0
                start_mark = event.start_mark
                start = (start_mark.line + 1, start_mark.column + 1)
                depth += 1
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                ends += 1
                value = container
                if key is not no_key:  # pragma: no cover - the parser pairs every key with a value
                    return None
                line, column = start  # type: ignore[misc]
                container, is_list, key, route, key_span, index, start, depth = stack.pop()
                if depth <= SHALLOW:
                    end_mark = event.end_mark
                    span = new(Span, (line, column, end_mark.line + 1, end_mark.column + 1))
                if container is None:
                    root = value
                    values[()] = span
                elif is_list:
                    container.append(value)
                    if depth <= SHALLOW:
                        values[route + (index,)] = span
                        index += 1
                else:
                    if key in container:
                        return None
                    container[key] = value
                    if depth <= SHALLOW:
                        here = route + (key,)
                        keys[here] = key_span
                        values[here] = span
                    key = no_key
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    return None
            elif cls is StreamEndEvent:
                break
            elif cls is AliasEvent:
                return None
    finally:
        close()
    # Every event but the stream's and document's four and the collections' ends is a value.
    if count - ends - 4 > limits.max_nodes:
        return None
    return root, values, keys


def _merge(frame: _Frame, span: Span) -> None:
    """Apply `<<: *base` merge keys: explicit keys win, earlier merges win."""
    target = frame.container
    if not isinstance(target, dict):
        return
    for value, value_span in frame.merges:
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                raise _Refused("PL001", "invalid YAML: a merge key (<<) takes a mapping or a list of mappings", value_span)
            for key, item in source.items():
                if key not in target:
                    target[key] = item


def load_bytes(raw: bytes, limits: Limits = Limits()) -> Loaded:
    """What load_file gives for a file holding `raw` (the language server's unsaved buffers)."""
    if len(raw) > limits.max_file_size:
        problem = _unreadable(f"file is {len(raw):,} bytes, over the {limits.max_file_size:,}-byte limit (max_file_size)")
        return Loaded(text=None, problems=[problem], fatal=True)
    text, problem = decode(raw)
    if problem is not None:
        return Loaded(text=None, problems=[problem], fatal=True)
    return load_text(text, limits)


def load_file(path: Path, limits: Limits = Limits()) -> Loaded:
    text, problem = read_text(path, limits.max_file_size)
    if problem is not None:
        return Loaded(text=None, problems=[problem], fatal=True)
    return load_text(text, limits)
