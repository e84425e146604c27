"""A row's reference inside the input the model receives (PL214): the measure.

A reference (`ground_truth`, `answer`, `target`, `reference`, or for a chat
`messages` its last assistant turn: the SFT target) *occurs in the input*
when its words, in order and next to each other, are words of the input (for
chat `messages`, the system and user turns), after NFKC normalization and
case-folding; a word is a run of letters, marks and digits, so punctuation,
symbols and spacing do not count. References with fewer than
MIN_REFERENCE_WORDS words or MIN_REFERENCE_CHARACTERS letters and digits, or
made of numbers only, are not checked: a one-word or numeric answer occurs in
a prompt by chance.

`leaked_rows` checks a batch at C speed first (the reference's letters and
digits inside the input's, which every real occurrence passes), and word by
word only for the rows that pass it.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from itertools import compress
from typing import Any

#: The fields a row's reference is read from (`data.reference_fields`), every one present.
DEFAULT_REFERENCE_FIELDS = ("ground_truth", "answer", "target", "reference", "messages")

#: Shorter references are not checked (they occur in inputs by chance).
MIN_REFERENCE_WORDS = 3
MIN_REFERENCE_CHARACTERS = 12

_ASCII_WORDS = bytes(byte if (48 <= byte <= 57 or 97 <= byte <= 122 or byte >= 128) else 32 for byte in range(256))
_ASCII_OTHER = bytes(byte for byte in range(128) if not (48 <= byte <= 57 or 97 <= byte <= 122))


class _UnicodeFold(dict):
    """str.translate table: a character that is no letter, mark or digit becomes a space,
    or goes (`compact`)."""

    def __init__(self, compact: bool) -> None:
        super().__init__()
        self.compact = compact

    def __missing__(self, code: int) -> int | None:
        value: int | None = code
        if unicodedata.category(chr(code))[0] not in "LMN":
            value = None if self.compact else 32
        self[code] = value
        return value


_UNICODE_WORDS = _UnicodeFold(compact=False)
_UNICODE_COMPACT = _UnicodeFold(compact=True)


def _folded(text: str) -> str:
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", text).casefold()


def _words(text: str) -> bytes:
    """A text's words, space-separated with a space at both ends (so that `in` matches whole words)."""
    text = _folded(text)
    if text.isascii():
        return b" " + b" ".join(text.encode("ascii").translate(_ASCII_WORDS).split()) + b" "
    return b" " + b" ".join(text.translate(_UNICODE_WORDS).encode("utf-8", "surrogatepass").split()) + b" "


def _compact(text: str) -> bytes:
    """A text's letters, marks and digits only, case-folded."""
    text = _folded(text)
    if text.isascii():
        return text.encode("ascii").translate(None, _ASCII_OTHER)
    return text.translate(_UNICODE_COMPACT).encode("utf-8", "surrogatepass")


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        return "\n".join(part if isinstance(part, str) else part["text"] for part in content
                         if isinstance(part, str) or (isinstance(part, dict) and isinstance(part.get("text"), str)))
    return ""


def _is_chat(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(turn, dict) for turn in value)


def model_input(value: Any) -> str:
    """The text of an input field the model receives: a string, or for chat
    `messages` its system and user turns (one per line)."""
    if isinstance(value, str):
        return value
    if _is_chat(value):
        return "\n".join(_content(turn.get("content")) for turn in value if turn.get("role") in ("system", "user"))
    if value is None:
        return ""
    return _as_text(value)


def reference_text(value: Any) -> str:
    """The text of a reference field: a string, or for chat `messages` its last assistant turn."""
    if isinstance(value, str):
        return value
    if _is_chat(value):
        for turn in reversed(value):
            if turn.get("role") == "assistant":
                return _content(turn.get("content"))
        return ""
    if value is None or isinstance(value, bool):
        return ""
    return _as_text(value)


def _as_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def checked(reference: str) -> bool:
    """Whether a reference is long enough to be checked (see the module docstring)."""
    found = _words(reference).split()
    if len(found) < MIN_REFERENCE_WORDS or sum(map(len, found)) < MIN_REFERENCE_CHARACTERS:
        return False
    return not all(map(bytes.isdigit, found))


def occurs_in(reference: str, model_input_text: str) -> bool:
    """Whether a (checked) reference's words occur, in order and together, among the input's words."""
    return _words(reference) in _words(model_input_text)


def leaked_rows(inputs: Sequence[str], references: Sequence[str]) -> list[int]:
    """The positions whose reference (checked) occurs in the input at the same position.
    Texts as the fields hold them: `model_input()` and `reference_text()` of each row."""
    maybe = list(compress(range(len(inputs)), map(bytes.__contains__, map(_compact, inputs), map(_compact, references))))
    return [position for position in maybe
            if references[position] and checked(references[position]) and occurs_in(references[position], inputs[position])]


__all__ = ["DEFAULT_REFERENCE_FIELDS", "MIN_REFERENCE_CHARACTERS", "MIN_REFERENCE_WORDS", "checked", "leaked_rows",
           "model_input", "occurs_in", "reference_text"]

