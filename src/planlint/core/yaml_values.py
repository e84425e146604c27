"""YAML values as plans hold them: the core-schema resolver and typed scalars.

`YamlInt` and `YamlFloat` remember how a number was written, so messages and
--fix quote `0o17` or `2026.10` as the author typed them; `scalar_text` gives
that text back. `resolve_plain` is the YAML 1.2 core schema for plain scalars
(null, booleans, ints, floats, strings): the loader uses it for every plain
scalar and --fix uses it to check that an edited value reads back as intended.
"""

from __future__ import annotations

import math
import re
from typing import Any


class YamlInt(int):
    """An int that remembers how it was written (`0o17`, `007`)."""

    text: str

    def __new__(cls, value: int, text: str) -> "YamlInt":
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    def __reduce__(self):  # copy and pickle (process pool, cache) keep the text
        return (YamlInt, (int(self), self.text))


class YamlFloat(float):
    """A float that remembers how it was written (`2026.10` stays `2026.10`)."""

    text: str

    def __new__(cls, value: float, text: str) -> "YamlFloat":
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    def __reduce__(self):
        return (YamlFloat, (float(self), self.text))


def scalar_text(value: Any) -> str:
    """The source text of a scalar, as a user would read it."""
    if isinstance(value, (YamlInt, YamlFloat)):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


NULL = {"", "~", "null", "Null", "NULL"}
TRUE = {"true", "True", "TRUE"}
FALSE = {"false", "False", "FALSE"}
# The plain scalars that are neither strings nor numbers, with their values (one lookup in the loader).
PLAIN_WORDS: dict[str, Any] = {**dict.fromkeys(NULL), **dict.fromkeys(TRUE, True), **dict.fromkeys(FALSE, False)}
_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")


def parse_number(text: str) -> Any:
    """YAML 1.2 core int/float, or None when the text is not one."""
    if _INT.match(text):
        return YamlInt(int(text), text)  # ValueError past 4,300 digits: caller reports it
    if _OCT.match(text):
        return YamlInt(int(text[2:], 8), text)
    if _HEX.match(text):
        return YamlInt(int(text[2:], 16), text)
    if _FLOAT.match(text) and any(c.isdigit() for c in text):
        return YamlFloat(float(text), text)
    if _INF.match(text):
        return YamlFloat(-math.inf if text.startswith("-") else math.inf, text)
    if _NAN.match(text):
        return YamlFloat(math.nan, text)
    return None


def resolve_plain(text: str) -> Any:
    if text in NULL:
        return None
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    if text[:1] in "0123456789-+." :
        number = parse_number(text)
        if number is not None:
            return number
    return text
