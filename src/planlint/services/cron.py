"""How often a recurring plan's cron schedule runs: the firings of its busiest month, read with cronsim.

cronsim parses the expression and decides which days and times match (it
follows Debian's cron, the Vixie cron that schedulers copy, plus `L`, `LW`,
`W#n` and `WL`); this module asks it and counts. rules/recurrence.py imports
this module only for a plan with `recurrence`, so other plans never load
cronsim (a pre-commit hook's start-up).

Counting: in UTC a 5-field schedule fires at the same times on every day it
runs, so a month's firings are (days it runs) x (times a day). Which days it
runs depends only on the month's number, its length and the weekday it starts
on. The Gregorian calendar has 91 such month shapes (12 months x 7 starting
weekdays, and a leap February x 7), and the 28 years 2001-2028 hold every one
(no century year in between drops a leap day), so the busiest of those months
is the busiest month of any year: exact, and at most about 2,800 day tests.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from cronsim import CronSim, CronSimError

from planlint.core.messages import show

# The macros Vixie cron documents (crontab(5)); cronsim reads only the 5 fields.
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
MAX_LENGTH = 256  # a schedule is a short line; anything longer is not one


class CronError(ValueError):
    """A schedule planlint cannot count; str() says why, in words for a message.

    `shape`: it is not a cron line at all (not a string, empty, too long, an
    unknown macro, not 5 fields), rather than a line with a field cronsim refuses.
    """

    def __init__(self, reason: str, *, shape: bool = False) -> None:
        super().__init__(reason)
        self.shape = shape


@dataclass(frozen=True)
class Firings:
    """What a schedule does in its busiest month."""

    expression: str  # the five fields it was read as (a macro expanded)
    busiest_month: int  # firings in the calendar's busiest month
    days: int  # days it runs in that month
    per_day: int  # firings on each day it runs


@lru_cache(maxsize=1)
def _month_shapes() -> tuple[tuple[int, int, int], ...]:
    """(year, month, days in month) of one month of each Gregorian shape (number, length, first weekday)."""
    seen: dict[tuple[int, int, int], tuple[int, int, int]] = {}
    for year in range(2001, 2029):
        for month in range(1, 13):
            first, length = calendar.monthrange(year, month)
            seen.setdefault((month, length, first), (year, month, length))
    return tuple(seen.values())


def five_fields(value: Any) -> list[str]:
    """The schedule's five fields (a macro expanded); CronError when it is not a 5-field cron line."""
    if not isinstance(value, str):
        raise CronError(f"it is {_kind(value)}, not a string such as \"0 3 * * 1\"", shape=True)
    text = value.strip()
    if not text:
        raise CronError("it is empty", shape=True)
    if len(text) > MAX_LENGTH:
        raise CronError(f"it is {len(text)} characters long, more than a cron line ({MAX_LENGTH})", shape=True)
    if text.startswith("@"):
        if text.lower() == "@reboot":
            raise CronError("@reboot runs when a machine starts, not on a schedule", shape=True)
        expanded = MACROS.get(text.lower())
        if expanded is None:
            raise CronError(f"{show(text)} is not one of cron's macros ({', '.join(MACROS)})", shape=True)
        text = expanded
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"it has {len(fields)} field{'s' if len(fields) != 1 else ''}; a cron expression has 5: {' '.join(FIELDS)}", shape=True)
    return fields


def _kind(value: Any) -> str:
    """What a YAML value that is no string is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    return "a mapping" if isinstance(value, dict) else "a list"


def month_firings(value: Any) -> Firings:
    """How often the schedule `value` runs in its busiest month (UTC); CronError when it cannot be read."""
    fields = five_fields(value)
    return _count(" ".join(fields))


@lru_cache(maxsize=512)
def _count(expression: str) -> Firings:
    start = datetime(2001, 1, 1)
    try:
        schedule = CronSim(expression, start)
    except CronSimError as error:
        raise CronError(_reason(expression, error)) from None
    # cronsim's parsed sets and its day test: its semantics, counted over the month shapes.
    per_day = len(schedule.seconds) * len(schedule.minutes) * len(schedule.hours)
    busiest = 0
    for year, month, length in _month_shapes():
        if month in schedule.months:
            busiest = max(busiest, sum(1 for day in range(1, length + 1) if schedule.match_day(date(year, month, day))))
    return Firings(expression, busiest * per_day, busiest, per_day)


def _reason(expression: str, error: Exception) -> str:
    """cronsim's "Bad day-of-month" as a sentence naming the field and its text."""
    fields = expression.split()
    words = str(error)
    name = words[4:] if words.startswith("Bad ") else ""
    if name not in FIELDS:
        return f"cronsim cannot read it ({words})"
    index = FIELDS.index(name)
    if name == "day-of-month" and fields[3] != "*":
        try:  # the day is valid on its own: no month the month field names has it
            CronSim(" ".join(fields[:3] + ["*"] + fields[4:]), datetime(2001, 1, 1))
        except CronSimError:
            pass
        else:
            return f"its day-of-month field {show(fields[2])} names no day that the months {show(fields[3])} have"
    return f"its {name} field {show(fields[index])} is not valid"
