"""A recurring plan's schedule (services/cron.py): how often a cron expression fires in the
calendar's busiest month, counted with cronsim, and the reasons a schedule cannot be counted.

The count is checked three ways: against known months, against cronsim's own
documented iteration over every firing of 28 years, and the 28-year window
against the 400-year Gregorian cycle. Any text is either counted or refused
with a reason (hypothesis), never an exception of another kind.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planlint.services.cron import CronError, month_firings


@pytest.mark.parametrize("schedule, busiest", [
    ("0 3 * * 1", 5),  # Mondays: 5 in a month that has 5
    ("0 3 * * MON", 5),
    ("@weekly", 5),
    ("@daily", 31),
    ("@hourly", 31 * 24),
    ("@monthly", 1),
    ("@yearly", 1),
    ("* * * * *", 31 * 24 * 60),
    ("0 */6 * * 1-5", 23 * 4),  # at most 23 weekdays in a month
    ("0 0 * 2 *", 29),  # a leap February
    ("0 0 29 2 *", 1),
    ("0 0 * 2 MON#5", 1),  # only a leap February that starts on a Monday
    ("0 0 31 * *", 1),
    ("0 0 1,15 * 1", 7),  # day-of-month OR day-of-week: 5 Mondays and the 1st and 15th
    ("0 0 L * *", 1),
    ("0 9 * * 1L", 1),
    ("*/30 9-17 * * 1-5", 23 * 18),
])
def test_the_busiest_month(schedule, busiest):
    assert month_firings(schedule).busiest_month == busiest


def _iterated(schedule: str) -> int:
    """The busiest month by cronsim's documented iteration over every minute it fires, 2001-2028."""
    from cronsim import CronSim

    per_month: dict[tuple[int, int], int] = {}
    for when in CronSim(schedule, datetime(2000, 12, 31, 23, 59)):
        if when.year > 2028:
            break
        per_month[(when.year, when.month)] = per_month.get((when.year, when.month), 0) + 1
    return max(per_month.values(), default=0)


@pytest.mark.parametrize("schedule", ["0 3 * * 1", "15 4 1-7 * 1", "0 0 1,15 * 1", "0 12 * 2 *", "0 0 * 2 MON#5", "0 0 LW * *",
                                      "0 8 */10 1,7 SAT", "0 0 13 * 5", "0 6,18 * * 0,6"])
def test_the_count_is_cronsims_own_iteration(schedule):
    """The fast count (cronsim's day test over the 91 month shapes) equals walking every firing of 28 years."""
    assert month_firings(schedule).busiest_month == _iterated(schedule)


def test_the_28_years_hold_every_month_of_the_400_year_cycle():
    """Every (month, length, first weekday) of 2001-2400 occurs in 2001-2028: the busiest month is the calendar's."""
    import calendar

    def shape(year: int, month: int) -> tuple[int, int, int]:
        first, length = calendar.monthrange(year, month)
        return month, length, first
    window = {shape(y, m) for y in range(2001, 2029) for m in range(1, 13)}
    cycle = {shape(y, m) for y in range(2001, 2401) for m in range(1, 13)}
    assert window == cycle and len(window) == 91


@pytest.mark.parametrize("schedule, words", [
    ("", "it is empty"),
    ("0 3 * *", "it has 4 fields; a cron expression has 5"),
    ("0 0 3 * * 1", "it has 6 fields"),
    ("61 * * * *", "its minute field '61' is not valid"),
    ("0 24 * * *", "its hour field '24' is not valid"),
    ("0 0 32 * *", "its day-of-month field '32' is not valid"),
    ("0 0 30 2 *", "its day-of-month field '30' names no day that the months '2' have"),
    ("0 0 * 13 *", "its month field '13' is not valid"),
    ("0 0 * * 8", "its day-of-week field '8' is not valid"),
    ("0 0 * * MON#6", "its day-of-week field 'MON#6' is not valid"),
    ("*/0 * * * *", "its minute field '*/0' is not valid"),
    ("5-1 * * * *", "its minute field '5-1' is not valid"),
    ("@reboot", "@reboot runs when a machine starts, not on a schedule"),
    ("@fortnightly", "'@fortnightly' is not one of cron's macros"),
    ("٣ * * * *", "its minute field '٣' is not valid"),  # a digit, but not an ASCII one
    ("0 3 * * 1\n0 4 * * 2", "it has 10 fields"),
    ("1," * 200 + "2 * * * *", "characters long, more than a cron line"),
])
def test_bad_schedules_say_why(schedule, words):
    with pytest.raises(CronError) as raised:
        month_firings(schedule)
    assert words in str(raised.value)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet="0123456789*/-,#LW?@ MONTUESATJANFEBDC\t\u00a0", max_size=8), min_size=0, max_size=7).map(" ".join))
def test_any_schedule_is_counted_or_refused_with_a_reason(schedule):
    try:
        firings = month_firings(schedule)
    except CronError as error:
        assert str(error)
    else:
        assert 0 <= firings.busiest_month <= 31 * 24 * 60
