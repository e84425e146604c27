"""What stops the data checks without an answer."""

from __future__ import annotations

from typing import Optional


class OverLimit(Exception):
    """A limit stopped the data checks: the result would be incomplete, so there is none.

    `reason` says which limit, in words; `row` is the record at which it was
    reached (None for the time budget).
    """

    def __init__(self, reason: str = "", row: Optional[int] = None) -> None:
        super().__init__(reason)
        self.reason, self.row = reason, row


class OverBudget(OverLimit):
    """The data checks ran past data.time_budget (a 1 MiB gzip file can hold 1 GiB of lines)."""
