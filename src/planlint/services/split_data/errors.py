"""Why the data checks gave no answer: one small hierarchy, caught in one place (check_split_data).

Every error carries `message`, text that is safe to show (URLs masked, no
credential), and `split`, the split it concerns once that is known. A
result that a limit or a failure cut short is never an answer: the check
returns it as a note (PL006 with --require-data) and caches nothing.
"""

from __future__ import annotations

from typing import Optional


class DataError(Exception):
    """The data checks stopped without an answer."""

    def __init__(self, message: str = "", *, split: Optional[str] = None) -> None:
        super().__init__(message)
        self.what, self.split = message, split

    @property
    def message(self) -> str:
        return self.what

    @message.setter
    def message(self, text: str) -> None:
        self.what = text


class Unreadable(DataError):
    """A split or one of its objects cannot be listed, opened or decoded: missing, not a format
    planlint reads, a scheme no store reads, a broken file."""


class Denied(DataError):
    """The store refused access (401/403, a gated dataset), or planlint refuses to go where the path
    leads (a non-public address, a redirect, plain http)."""


class MissingExtra(DataError):
    """The optional extra a scheme or a format needs is not installed."""


class OverBudget(DataError):
    """The checks ran past data.time_budget (a 1 MiB gzip file can hold 1 GiB of lines)."""


class OverCap(DataError):
    """A size limit: one record larger than the limit on a record, a glob matching too many objects,
    a split larger than data.max_bytes.

    Met at a record, `row` is its number (in the file or object being read,
    `noun` what the format calls it) and `what` says which limit; the message
    is then "NOUN ROW WHAT"."""

    def __init__(self, what: str = "", *, row: Optional[int] = None, noun: str = "row", split: Optional[str] = None) -> None:
        super().__init__(what, split=split)
        self.row, self.noun = row, noun

    @property
    def message(self) -> str:
        return self.what if self.row is None else f"{self.noun} {self.row} {self.what}"

    @message.setter
    def message(self, text: str) -> None:
        self.what, self.row = text, None


class OverBytes(OverCap):
    """The split read more than data.max_bytes from storage."""
