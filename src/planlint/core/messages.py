"""Quoting plan content inside messages so it cannot forge output.

Plan files come from pull requests. A value quoted in a message must not be
able to add lines, terminal escapes, bidi overrides or workflow commands to
any output, so every quoted value goes through `show()`.
"""

from __future__ import annotations

from typing import Any

from planlint.core.yaml_values import scalar_text

_MAX = 60


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if not ch.isprintable():  # Cc, Cf (bidi, zero-width), Zl, Zp, Zs but ' ', Cs, Co, Cn
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return ch


def sanitize(text: str) -> str:
    """Escape control, format (bidi) and line-separator characters."""
    if text.isprintable() and text.isascii():
        return text
    return "".join(_escape_char(ch) for ch in text)


def show(value: Any, limit: int = _MAX) -> str:
    """A value as a message quotes it: 'text', escaped and clipped."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = scalar_text(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = sanitize(text)
    if isinstance(value, str):
        return "'" + text.replace("'", "\\'") + "'"
    return text


def safe_path(path: str) -> str:
    """A path for a line of text output: escaped, and never starting like a workflow command.

    >>> safe_path("::error::x.yaml")
    './::error::x.yaml'
    """
    text = sanitize(path)
    if text.startswith((":", "#")):
        text = "./" + text
    return text


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """JSON with every character that is not printable written as a \\u escape.

    `json.dumps(ensure_ascii=False)` leaves DEL, C1 controls, bidi overrides and
    line separators raw; escaped they are the same JSON data, but a terminal
    or log showing the file cannot be tricked by them.
    """
    import json

    text = json.dumps(data, indent=indent, ensure_ascii=False)
    if text.replace("\n", "").isprintable():
        return text
    out = []
    for ch in text:
        if ch == "\n" or ch.isprintable():
            out.append(ch)
        elif ord(ch) > 0xFFFF:
            high, low = divmod(ord(ch) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)
