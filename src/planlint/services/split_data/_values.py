"""Value handling for the data-aware split checks: timestamps, normalized
inputs, group keys and the excerpts of values the facts keep.

Standard library only; nothing here imports anything heavy.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import unicodedata
from typing import Any, Callable

#: The input fields tried, in order, when the plan does not configure
#: `data.input_fields`: the first one present (and not null) in a row is used.
DEFAULT_INPUT_FIELDS = ("prompt", "input", "question", "messages")

#: Longest excerpt of a value a message shows, in characters (before escaping).
SHOW_CHARS = 40

_UTC = _dt.timezone.utc
_fromiso = _dt.datetime.fromisoformat


# --------------------------------------------------------------------------
# timestamps


class Cutoff:
    """The boundary instant, pre-computed in the three shapes rows come in.

    A row's time is compared with it as follows: an aware datetime against the
    aware cutoff, a naive datetime (or a date) as if it were UTC, a number as
    epoch seconds (UTC).
    """

    __slots__ = ("text", "aware", "naive", "epoch")

    def __init__(self, text: str, moment: _dt.datetime) -> None:
        self.text = text
        self.aware = moment
        self.naive = moment.astimezone(_UTC).replace(tzinfo=None)
        self.epoch = moment.timestamp()


def parse_cutoff(value: Any) -> Cutoff | None:
    """`2026-08-01`, `2026-08-01T12:00:00`, `...Z`, `...+02:00` (or a
    date/datetime object) as a Cutoff; None when it is not one of those."""
    if isinstance(value, _dt.datetime):
        moment = value
        text = value.isoformat()
    elif isinstance(value, _dt.date):
        moment = _dt.datetime(value.year, value.month, value.day)
        text = value.isoformat()
    elif isinstance(value, str):
        text = value.strip()
        if len(text) < 10:
            return None
        try:
            moment = _fromiso(text)
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_UTC)
    return Cutoff(text, moment)


#: Epoch numbers are told apart by magnitude: below 1e11 they are seconds (1e11
#: seconds is the year 5138), from 1e11 up to 1e14 milliseconds (1e11 ms is
#: March 1973, 1e14 ms the year 5138). Anything larger (microseconds,
#: nanoseconds) is not read as a time: PL211.
EPOCH_MS_FROM = 1e11
EPOCH_MS_BELOW = 1e14


def epoch_seconds(number: float) -> float | None:
    """An epoch number (seconds or milliseconds, told apart by magnitude) in seconds; None if neither."""
    size = abs(number)
    if size < EPOCH_MS_FROM:
        return float(number)
    if size < EPOCH_MS_BELOW:
        return number / 1000.0
    return None


def make_time_test(cutoff: Cutoff) -> Callable[[Any], "bool | None"]:
    """A function row-time -> True (at or after the cutoff), False (before it)
    or None (not a timestamp).

    Accepted: ISO 8601 dates and datetimes as Python's `datetime.fromisoformat`
    reads them (with or without offset, `Z` included; naive ones are UTC),
    epoch seconds or milliseconds (told apart by magnitude, see
    `epoch_seconds`) as a JSON number or as a decimal string (`"1754006400"`,
    `"1754006400.5"`, `"1754006400000"`), and date/datetime objects (Parquet
    timestamp columns).
    A string the ISO parser accepts is a date first: `"20260801"` is
    1 August 2026, not epoch seconds. Booleans, NaN and infinities are not
    timestamps.
    """
    naive, aware, epoch = cutoff.naive, cutoff.aware, cutoff.epoch
    fromiso = _fromiso
    datetime_type, date_type = _dt.datetime, _dt.date
    isfinite = math.isfinite
    seconds_of = epoch_seconds

    def at_or_after(value: Any) -> bool | None:
        kind = type(value)
        if kind is str:
            try:
                moment = fromiso(value)
            except ValueError:
                text = value.strip()
                if not text or not (text[0].isdigit() or (text[0] in "+-" and text[1:2].isdigit())):
                    return None
                try:
                    number = float(text)
                except ValueError:
                    try:
                        moment = fromiso(text)
                    except ValueError:
                        return None
                else:
                    seconds = seconds_of(number) if isfinite(number) else None
                    return None if seconds is None else seconds >= epoch
            if moment.tzinfo is None:
                return moment >= naive
            return moment >= aware
        if kind is int or kind is float:
            try:
                seconds = seconds_of(value) if isfinite(value) else None
            except OverflowError:  # an int too large for a float: no time
                return None
            return None if seconds is None else seconds >= epoch
        if isinstance(value, datetime_type):
            if value.tzinfo is None:
                return value >= naive
            return value >= aware
        if isinstance(value, date_type):
            return datetime_type(value.year, value.month, value.day) >= naive
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                seconds = seconds_of(value) if isfinite(value) else None
            except OverflowError:  # an int too large for a float: no time
                return None
            return None if seconds is None else seconds >= epoch
        return None

    return at_or_after


# --------------------------------------------------------------------------
# group keys


def group_text(value: Any) -> str:
    """A group value as the text that is compared across splits: strings as
    they are, anything else as compact JSON (so the JSON number 123 and the
    CSV cell "123" are the same group)."""
    if type(value) is str:
        return value
    if isinstance(value, (_dt.date, _dt.time)):  # Parquet date/timestamp columns
        return value.isoformat()
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


# --------------------------------------------------------------------------
# normalized inputs


def normalize_text(text: str) -> str:
    """Unicode NFKC, case-folded, runs of whitespace collapsed to one space,
    leading and trailing whitespace removed."""
    if text.isascii():  # ASCII is NFKC-stable and case-folds to lower case
        return " ".join(text.lower().split())
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    if content is None:
        return ""
    return group_text(content)


def normalize_value(value: Any, field: str | None = None) -> str:
    """One input field's value as normalized text ('' when there is none).

    A `messages` value (a list of chat turns) is compared by its user turns
    only, each normalized and joined with NUL (so turn boundaries count).
    Other non-string values are compared by their compact JSON text.
    """
    if type(value) is str:
        return normalize_text(value)
    if value is None:
        return ""
    if isinstance(value, list) and (field == "messages" or field is None):
        turns = [
            normalize_text(_content_text(turn.get("content")))
            for turn in value
            if isinstance(turn, dict) and turn.get("role") == "user"
        ]
        if turns or field == "messages":
            return "\x00".join(turn for turn in turns if turn)
    return normalize_text(group_text(value))


# --------------------------------------------------------------------------
# excerpts: what a message may show of a value


def excerpt(value: Any, limit: int = SHOW_CHARS) -> str:
    """The text of `value` a message may show, cut one character past `limit` (so that a message
    can still tell it was cut): a chat's first user turn, a string as it is, anything else as
    compact JSON. Nothing is escaped yet: the rule that shows it does that."""
    if isinstance(value, list) and value and all(isinstance(turn, dict) for turn in value):
        # chat messages: the first user turn, not the whole conversation
        for turn in value:
            if turn.get("role") == "user":
                value = _content_text(turn.get("content"))
                break
    text = value if isinstance(value, str) else group_text(value)
    return text if len(text) <= limit else text[: limit + 1]


def input_excerpt(value: Any) -> str:
    """The excerpt of an input: of its first non-empty field when it has several."""
    if type(value) is tuple:
        value = next((item for item in value if item not in (None, "")), "")
    return excerpt(value)
