"""Read a plan file into plain data plus source positions, safely.

`load_file`, `load_bytes` and `load_text` give a `Loaded`: the file's text
(core/file_text.py reads it), its data and positions (core/yaml_build.py
builds them from the YAML events), and what was refused (LoadProblem: PL001,
PL002, PL006; core/load_limits.py). A plain document is read by the fast
builder, its deeper positions and quoted scalars worked out on first use.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlint.core.file_text import bom_encoding, decode, read_text
from planlint.core.load_limits import DEFAULT_MAX_FILE_SIZE, Limits, LoadProblem, unreadable
from planlint.core.positions import Positions, Route, Span
from planlint.core.yaml_build import SHALLOW, Refused, build_plain, build_tree

# Where the rest of planlint reads plans from: the file reading and the limits included.
__all__ = [
    "DEFAULT_MAX_FILE_SIZE", "Limits", "LoadProblem", "Loaded", "bom_encoding", "decode", "load_bytes", "load_file", "load_text", "read_text",
]


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
            fast = build_plain(text, limits, deadline)
        except Refused as refused:  # the time budget, or the depth limit
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
    """What `build_plain` leaves out, worked out on first use: every position, the quoted scalars.

    It reads the text again with `build_tree`, the reader of every document, which
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
    quoted: list[Span] = []
    result.quoted = quoted
    try:
        result.data = build_tree(text, limits, deadline, result.positions, result.problems, quoted)
    except Refused as refused:
        result.problems.append(LoadProblem(refused.code, refused.span, refused.message))
        result.fatal = True
        result.data = None
    except RecursionError:  # pragma: no cover - the depth limit comes first
        result.problems.append(unreadable("nesting too deep to read"))
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


def load_bytes(raw: bytes, limits: Limits = Limits()) -> Loaded:
    """What load_file gives for a file holding `raw` (the language server's unsaved buffers)."""
    if len(raw) > limits.max_file_size:
        problem = unreadable(f"file is {len(raw):,} bytes, over the {limits.max_file_size:,}-byte limit (max_file_size)")
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
