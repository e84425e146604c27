"""`# planlint: disable=RULES -- reason` comments (spec section 3).

Only real YAML comments suppress: a `#` inside a quoted or block scalar is part
of a value (the loader records where those were written), so
`release: "latest # planlint: disable=PL102 -- x"` silences nothing. The same
holds in TOML run configs (`parse_toml`): a `#` inside a string (basic,
literal, multi-line, or a quoted key) is no comment. A rule is
named by its code (`PL205`) or its name (`eval-not-frozen`); anything else is
kept as `unknown` for PL010 to report.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Sequence

from planlint.core.positions import Span, split_lines

# The rules end at `--` (the reason) or at another comment (`# ...`), like
# ruff's `# noqa: E501 # note`; the reason ends at a following ` # ` comment.
# An em or en dash, as word processors write `--`, also introduces the reason.
_COMMENT = re.compile(r"#\s*planlint:\s*(disable|disable-file)\s*=\s*([A-Za-z0-9_, -]*?)\s*(?:(?:--|\u2014|\u2013)\s*(.*?))?\s*(?:\s#\s.*)?$")
_CODE = re.compile(r"^[A-Z]+[0-9]+$")


@dataclass
class Suppression:
    kind: str  # "disable" or "disable-file"
    codes: list[str]  # the rules it names, as codes
    reason: str
    span: Span  # the comment itself
    targets: tuple[int, ...]  # the lines it silences (disable only)
    used: set[str] = field(default_factory=set)
    unknown: list[str] = field(default_factory=list)  # what it names that is no rule, as written

    @property
    def target_line(self) -> int:
        """The last line it silences (the line below, for a comment alone on its line)."""
        return self.targets[-1]


class Suppressions(list):
    """What `parse()` returns: a list of Suppression, indexed by the line each one silences.

    A 1 MiB plan can hold 25,000 suppression comments and as many findings:
    looking each finding up by line keeps that linear.
    """

    _index: tuple[int, dict[int, list[Suppression]], list[Suppression]] | None = None

    def lookup(self, line: int) -> list[Suppression]:
        """The suppressions that may silence a finding on `line`: the file-wide ones and that line's."""
        if self._index is None or self._index[0] != len(self):
            by_line: dict[int, list[Suppression]] = {}
            whole_file = []
            for s in self:
                if s.kind == "disable-file":
                    whole_file.append(s)
                else:
                    for target in s.targets:
                        by_line.setdefault(target, []).append(s)
            self._index = (len(self), by_line, whole_file)
        _, by_line, whole_file = self._index
        return whole_file + by_line.get(line, [])


class _Scalars:
    """Is a (line, column) inside a quoted or block scalar? Spans come in document order."""

    def __init__(self, spans: Sequence[Span]) -> None:
        self.spans = spans
        self.starts = [(s.line, s.column) for s in spans]

    def inside(self, line: int, column: int) -> bool:
        index = bisect_right(self.starts, (line, column)) - 1
        if index < 0:
            return False
        span = self.spans[index]
        return (line, column) < (span.end_line, span.end_column)


def comment_start(line: str, number: int, scalars: _Scalars | None) -> int:
    """Where the YAML comment of `line` begins (0-based), or -1.

    A comment starts at a `#` at the start of the line or after white space,
    outside any quoted or block scalar (a plain scalar cannot hold ` #`).
    """
    at = line.find("#")
    while at != -1:
        if (at == 0 or line[at - 1] in " \t") and (scalars is None or not scalars.inside(number, at + 1)):
            return at
        at = line.find("#", at + 1)
    return -1


def parse(text: str, quoted: Sequence[Span] = (), resolve: Callable[[str], str | None] | None = None) -> Suppressions:
    """The suppression comments of `text`.

    `quoted`: the spans of quoted and block scalars (Loaded.quoted). `resolve`:
    a rule code or name as written -> its code, None when it names no rule
    (without it, anything shaped like a code counts as one).
    """
    if "planlint:" not in text:
        return Suppressions()
    scalars = _Scalars(quoted) if quoted else None
    found = Suppressions()
    for number, line in enumerate(split_lines(text), start=1):
        if "planlint:" not in line:
            continue
        start = comment_start(line, number, scalars)
        if start == -1:
            continue
        match = _COMMENT.search(line, start)
        if not match:
            continue
        kind, raw, reason = match.group(1), match.group(2), (match.group(3) or "").strip()
        codes: list[str] = []
        unknown: list[str] = []
        for token in re.split(r"[\s,]+", raw):
            if not token:
                continue
            code = resolve(token) if resolve is not None else (token.upper() if _CODE.match(token.upper()) else None)
            if code is None:
                unknown.append(token)
            elif code not in codes:
                codes.append(code)
        alone = line[:start].strip() == ""
        # Alone on its line it covers that line (a finding placed at 1:1) and the next.
        targets = (number, number + 1) if alone else (number,)
        found.append(Suppression(kind, codes, reason, Span(number, start + 1, number, len(line) + 1), targets, unknown=unknown))
    return found


def parse_toml(text: str, resolve: Callable[[str], str | None] | None = None) -> Suppressions:
    """The suppression comments of the TOML file `text`: those in its real comments only."""
    if "planlint:" not in text:
        return Suppressions()
    return parse(text, toml_strings(text), resolve)


_TOML_START = re.compile(r"[#\"']")


def toml_strings(text: str) -> list[Span]:
    """The spans of every string of TOML `text` (values and quoted keys, of the four kinds), in order.

    A small lexer: outside strings a `#` starts a comment, which runs to the end
    of its line; a backslash escapes only in basic strings; a multi-line string
    may end with up to two more quotes (`\"\"\"a\"\"\"\"` holds `a"`). It
    needs no valid TOML: on text the parser rejects it still tells strings
    from comments as far as the quotes go. Linear in the text.
    """
    spans: list[Span] = []
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(offset: int) -> tuple[int, int]:
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    n, i = len(text), 0
    while True:
        match = _TOML_START.search(text, i)
        if match is None:
            return spans
        i, char = match.start(), match.group()
        if char == "#":
            end = text.find("\n", i)
            if end == -1:
                return spans
            i = end
            continue
        quote = char * 3 if text.startswith(char * 3, i) else char
        j = i + len(quote)
        while j < n:
            if char == '"' and text[j] == "\\":
                j += 2
            elif len(quote) == 1 and text[j] == "\n":
                break  # an unterminated one-line string ends with its line
            elif text.startswith(quote, j):
                j += len(quote)
                for _ in range(2 if len(quote) == 3 else 0):
                    if j < n and text[j] == char:
                        j += 1
                break
            else:
                j += 1
        j = min(j, n)
        spans.append(Span(*at(i), *at(j)))
        i = max(j, i + 1)


def is_suppressed(suppressions: list[Suppression], code: str, line: int) -> bool:
    """Mark and report whether `code` at `line` is silenced."""
    hit = False
    for s in suppressions.lookup(line) if isinstance(suppressions, Suppressions) else suppressions:
        if code not in s.codes:
            continue
        if s.kind == "disable-file" or line in s.targets:
            s.used.add(code)
            hit = True
    return hit


def valid_code(code: str) -> bool:
    return bool(_CODE.match(code))
