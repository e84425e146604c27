"""Routes (symbolic paths into a plan) and their source positions.

A route is a tuple of mapping keys (str) and sequence indexes (int). Rules speak
in routes; only the engine turns a route into a line and column.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple, Tuple, Union

from planlint.core.messages import sanitize

Route = Tuple[Union[str, int], ...]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

# Lines end at \n, \r\n or \r, as editors, git and GitHub count them. NEL,
# U+2028 and U+2029 are not line breaks (YAML 1.2), although libyaml (YAML 1.1)
# counts them; str.splitlines() splits at even more (\v, \f, \x1c-\x1e).
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of `text`, split only at \\n, \\r\\n and \\r (no final empty line)."""
    lines = LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class Span(NamedTuple):
    """1-based line/column; the end is exclusive (one past the last character)."""

    line: int
    column: int
    end_line: int
    end_column: int


START = Span(1, 1, 1, 1)


def yaml_path(route: Route) -> str:
    """Render a route as `graders[1].version`; odd keys are quoted: `labels["a.b"]`."""
    out = []
    for part in route:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.match(part):
            out.append(f".{part}" if out else part)
        else:
            escaped = sanitize(part.replace("\\", "\\\\").replace('"', '\\"'))
            out.append(f'["{escaped}"]')
    return "".join(out)


class Positions:
    """Where each value (and each mapping key) of a plan was written.

    `values` and `keys` map routes to spans. The loader may hand out a lazy
    instance (`Positions.deferred`): it knows the spans of the routes up to
    `shallow` steps long (the few every run asks for: `metadata.name`,
    `budget.max_spend`) and works out the rest, with `fill`, the first time
    anything deeper is asked for, which for most plans (those without a
    finding) is never. Either way the spans are the same.
    """

    __slots__ = ("_values", "_keys", "_fill", "_shallow")

    def __init__(self, values: dict[Route, Span] | None = None, keys: dict[Route, Span] | None = None) -> None:
        self._values: dict[Route, Span] = {} if values is None else values
        self._keys: dict[Route, Span] = {} if keys is None else keys
        self._fill: Callable[[], tuple[dict[Route, Span], dict[Route, Span]]] | None = None
        self._shallow = -1

    @classmethod
    def deferred(cls, values: dict[Route, Span], keys: dict[Route, Span], shallow: int, fill: Callable[[], tuple[dict[Route, Span], dict[Route, Span]]]) -> "Positions":
        """Positions that hold every route of at most `shallow` steps now, and get the rest from `fill()` when asked."""
        positions = cls(values, keys)
        positions._fill = fill
        positions._shallow = shallow
        return positions

    def _complete(self) -> None:
        fill, self._fill = self._fill, None
        if fill is not None:
            self._values, self._keys = fill()

    @property
    def values(self) -> dict[Route, Span]:
        if self._fill is not None:
            self._complete()
        return self._values

    @values.setter
    def values(self, spans: dict[Route, Span]) -> None:
        self._fill = None
        self._values = spans

    @property
    def keys(self) -> dict[Route, Span]:
        if self._fill is not None:
            self._complete()
        return self._keys

    @keys.setter
    def keys(self, spans: dict[Route, Span]) -> None:
        self._fill = None
        self._keys = spans

    def value_span(self, route: Route) -> Span | None:
        """Where the value at `route` was written, or None (`values.get(route)`)."""
        if self._fill is not None and len(route) > self._shallow:
            self._complete()
        return self._values.get(route)

    def key_span(self, route: Route) -> Span | None:
        """Where the key of the value at `route` was written, or None (`keys.get(route)`)."""
        if self._fill is not None and len(route) > self._shallow:
            self._complete()
        return self._keys.get(route)

    def __reduce__(self):  # pickle and copy the spans, never the way to work them out
        return (Positions, (self.values, self.keys))

    def resolve(self, route: Route, missing: bool = False) -> Span:
        """The span a finding at `route` points at.

        A present value points at the value. A missing key points at the key of
        the mapping that should hold it (1:1 for a missing top-level key). A
        route through an alias or a missing mapping falls back to the longest
        prefix that was written down.
        """
        if missing:
            parent = route[:-1]
            while parent:
                span = self.key_span(parent)
                if span is not None:
                    return span
                span = self.value_span(parent)
                if span is not None:  # a mapping inside a sequence has no key
                    return Span(span.line, span.column, span.line, span.column + 1)
                parent = parent[:-1]
            return START
        probe = route
        while probe:
            span = self.value_span(probe)
            if span is not None:
                return span
            probe = probe[:-1]
        return START
