"""`# planlint: disable=CODES -- reason` comments (spec section 3)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planlint.core.positions import Span

# The codes end at `--` (the reason) or at another comment (`# ...`), like
# ruff's `# noqa: E501 # note`; the reason ends at a following ` # ` comment.
# An em or en dash, as word processors write `--`, also introduces the reason.
_COMMENT = re.compile(r"(?:^|\s)#\s*planlint:\s*(disable|disable-file)\s*=\s*([A-Za-z0-9, ]*?)\s*(?:(?:--|\u2014|\u2013)\s*(.*?))?\s*(?:\s#\s.*)?$")
_CODE = re.compile(r"^[A-Z]+[0-9]+$")


@dataclass
class Suppression:
    kind: str  # "disable" or "disable-file"
    codes: list[str]
    reason: str
    span: Span  # the comment itself
    target_line: int  # the line it silences (disable only)
    used: set[str] = field(default_factory=set)


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
                    by_line.setdefault(s.target_line, []).append(s)
            self._index = (len(self), by_line, whole_file)
        _, by_line, whole_file = self._index
        return whole_file + by_line.get(line, [])


def parse(text: str) -> Suppressions:
    if "planlint:" not in text:
        return Suppressions()
    found = Suppressions()
    for number, line in enumerate(text.splitlines(), start=1):
        if "planlint:" not in line:
            continue
        match = _COMMENT.search(line)
        if not match:
            continue
        kind, raw_codes, reason = match.group(1), match.group(2), (match.group(3) or "").strip()
        codes = [c.strip().upper() for c in raw_codes.split(",") if c.strip()]
        start = line.index("#", match.start())
        alone = line[:start].strip() == ""
        target = number + 1 if alone else number
        found.append(Suppression(kind, codes, reason, Span(number, start + 1, number, len(line) + 1), target))
    return found


def is_suppressed(suppressions: list[Suppression], code: str, line: int) -> bool:
    """Mark and report whether `code` at `line` is silenced."""
    hit = False
    for s in suppressions.lookup(line) if isinstance(suppressions, Suppressions) else suppressions:
        if code not in s.codes:
            continue
        if s.kind == "disable-file" or s.target_line == line:
            s.used.add(code)
            hit = True
    return hit


def valid_code(code: str) -> bool:
    return bool(_CODE.match(code))
