"""The time budget of one data check (`data.time_budget`): a deadline on a clock.

A `Budget` is made when a check starts and handed to everything that reads
for it (the readers, the objects of a remote split, the worker processes);
each loop that reads calls `check()` at least once per chunk, batch or 4,096
lines. Nothing about it is kept between checks.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

from planlint.services.split_data.errors import OverBudget


class Budget:
    """A deadline (`clock()` value) past which `check()` raises OverBudget; None: no limit."""

    __slots__ = ("clock", "deadline")

    def __init__(self, seconds: Optional[float], clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.deadline = None if seconds is None else clock() + seconds

    @classmethod
    def until(cls, deadline: Optional[float]) -> "Budget":
        """The budget that ends at `deadline` on time.monotonic (a worker process's share of one)."""
        budget = cls(None)
        budget.deadline = deadline
        return budget

    def check(self) -> None:
        if self.deadline is not None and self.clock() > self.deadline:
            raise OverBudget()

    def remaining(self) -> Optional[float]:
        """Seconds left (never negative), or None without a limit."""
        return None if self.deadline is None else max(0.0, self.deadline - self.clock())

    @property
    def on_real_clock(self) -> bool:
        """Is the deadline on time.monotonic, the clock every process shares (not one a test injected)?"""
        return self.clock is time.monotonic


#: No limit: reading outside a check (the tests' direct calls of a reader).
UNLIMITED = Budget(None)
