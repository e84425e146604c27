"""YAML events to plain data and source positions: the loader's two builders.

The YAML event stream (libyaml through ruamel.yaml.clib when it is installed,
ruamel's pure-Python parser otherwise) is turned into dicts, lists and scalars
by an explicit stack, so depth is bounded by our limit and never by Python's
recursion limit. Tags other than the YAML core ones are refused, never
constructed; aliases share the anchored object and their expanded size is
counted, so an alias bomb is rejected after a few hundred events.
`build_tree` reads any document; `build_plain` reads a plain one at about half
the cost, and tests/test_yaml_builders.py holds the two to the same trees.
"""

from __future__ import annotations

import time
from typing import Any

from planlint.core.load_limits import Limits, LoadProblem
from planlint.core.positions import Positions, Route, Span
from planlint.core.yaml_values import FALSE, NULL, PLAIN_WORDS, TRUE, YamlFloat, parse_number, resolve_plain, scalar_text

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


class Refused(Exception):
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
            raise Refused("PL001", f"{value!r} is not a null (tag !!null)", span)
        return None
    if tag == "tag:yaml.org,2002:bool":
        if value in TRUE:
            return True
        if value in FALSE:
            return False
        raise Refused("PL001", f"{_clip(value)!r} is not a boolean (tag !!bool takes true or false)", span)
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        number = parse_number(value)
        if number is None or (tag.endswith(":int") and not isinstance(number, int)):
            raise Refused("PL001", f"{_clip(value)!r} is not a valid {tag.rsplit(':', 1)[1]}", span)
        if tag.endswith(":float"):
            return YamlFloat(float(number), value)
        return number
    raise Refused("PL001", f"unsupported YAML tag {_clip(_short_tag(tag))!r}; plans use plain YAML data, tags are never constructed", span)


def _short_tag(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- events


def event_source(text: str):
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


def build_tree(text: str, limits: Limits, deadline: float, positions: Positions, problems: list[LoadProblem], quoted: list[Span]) -> Any:
    """Events -> data (returned) and positions, duplicate keys (PL002) and quoted scalars (added as they come).

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

    values = positions.values
    keys = positions.keys
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

    def too_many(span: Span) -> Refused:
        return Refused("PL006", f"document expands to more than {max_nodes:,} values (aliases?); limit max_nodes", span)

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
                raise Refused("PL001", "a mapping key must be a plain value, not a mapping or sequence", span)
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

    next_event, close = event_source(text)
    try:
        while True:
            event = next_event()
            count += 1
            if count & 1023 == 0 and time.monotonic() > deadline:
                raise Refused("PL006", f"reading took longer than {limits.time_budget:g}s; limit time_budget", _span(event))
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
                                raise Refused("PL001", "number too large to read (over 4,300 digits)", span) from None
                    else:
                        value = raw
                        quoted.append(span)
                else:
                    if not plain:
                        quoted.append(span)
                    if tag not in _CORE_TAGS and tag != "?":
                        raise Refused("PL001", f"unsupported YAML tag {_clip(_short_tag(tag))!r}; plans use plain YAML data, tags are never constructed", span)
                    try:
                        value = _scalar(raw, tag, plain, span)
                    except ValueError:
                        raise Refused("PL001", "number too large to read (over 4,300 digits)", span) from None
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
                    raise Refused("PL001", f"unsupported YAML tag {_clip(_short_tag(tag))!r}; plans use plain YAML data, tags are never constructed", span)
                if len(stack) >= limits.max_depth:
                    raise Refused("PL006", f"nesting is deeper than {limits.max_depth} levels; limit max_depth", span)
                container: Any = {} if cls is MappingStartEvent else []
                if stack:
                    parent = stack[-1]
                    if parent.is_list:
                        route = parent.route + (parent.index,)
                    elif parent.key is _NO_KEY:
                        raise Refused("PL001", "a mapping key must be a plain value, not a mapping or sequence", span)
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
                    raise Refused("PL006", f"alias *{_clip(name)} refers to a node that contains it (a recursive alias)", span)
                if name not in anchors:
                    raise Refused("PL001", f"invalid YAML: alias *{_clip(name)} refers to an undefined anchor", span)
                aliases += 1
                if aliases > limits.max_aliases:
                    raise Refused("PL006", f"more than {limits.max_aliases:,} aliases; limit max_aliases", span)
                value, size = anchors[name]
                place(value, span, size)
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise Refused("PL001", "invalid YAML: a plan file holds one document, found a second '---'", _span(event))
            elif cls is StreamEndEvent:
                break
    finally:
        close()
    return root


# Routes of at most this many steps get their positions from `build_plain` itself;
# deeper ones when first asked for (Positions.deferred).
SHALLOW = 2
_NUMBER_START = frozenset("0123456789-+.")


def build_plain(text: str, limits: Limits, deadline: float) -> tuple[Any, dict[Route, Span], dict[Route, Span]] | None:
    """(data, positions of the routes up to SHALLOW steps, their keys) of a plain document, else None.

    Most plans are plain: no tags, anchors, aliases, merge keys or duplicate
    keys, one document, within the limits. For those this gives the data
    `build_tree` gives, at about half its cost, by keeping no position below
    SHALLOW and nothing else: no per-value route, span or quoted span. It
    returns None as soon as the document is anything else (and for YAML errors),
    and `build_tree` reads it instead, with every check and message. Only the time
    budget and the depth limit are enforced here, exactly as `build_tree` does
    (nothing before them was anything `build_tree` reports).
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
    next_event, close = event_source(text)
    try:
        while True:
            try:
                event = next_event()
            except Exception:  # noqa: BLE001 - a YAML error: build_tree reports it
                return None
            count += 1
            if count & 1023 == 0 and time.monotonic() > deadline:
                raise Refused("PL006", f"reading took longer than {limits.time_budget:g}s; limit time_budget", _span(event))
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
                if depth >= max_depth:  # as build_tree refuses it, without reading the document twice
                    if count - ends - 3 > limits.max_nodes:
                        return None  # over max_nodes before this (stream, document, this): build_tree may stop at that first
                    raise Refused("PL006", f"nesting is deeper than {max_depth} levels; limit max_depth", _span(event))
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
                raise Refused("PL001", "invalid YAML: a merge key (<<) takes a mapping or a list of mappings", value_span)
            for key, item in source.items():
                if key not in target:
                    target[key] = item
