"""Routes (symbolic paths into a plan) and their source positions.

A route is a tuple of mapping keys (str) and sequence indexes (int). Rules speak
in routes; only the engine turns a route into a line and column.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Tuple, Union

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
    """Where each value (and each mapping key) of a plan was written."""

    __slots__ = ("values", "keys")

    def __init__(self) -> None:
        self.values: dict[Route, Span] = {}
        self.keys: dict[Route, Span] = {}

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
                span = self.keys.get(parent)
                if span is not None:
                    return span
                span = self.values.get(parent)
                if span is not None:  # a mapping inside a sequence has no key
                    return Span(span.line, span.column, span.line, span.column + 1)
                parent = parent[:-1]
            return START
        probe = route
        while probe:
            span = self.values.get(probe)
            if span is not None:
                return span
            probe = probe[:-1]
        return START
