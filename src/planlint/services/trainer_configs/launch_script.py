"""The launch script's overrides, read line by line, never run.

A verl run is usually started by a shell script, `python3 -m verl.trainer.main_ppo
key=value \\ ...`, whose Hydra overrides replace the YAML's values; TRL
(`trl grpo --config X.yaml --seed 7`) and axolotl (`axolotl train X.yaml
--base-model ...`) take flags the same way. This reader tokenizes the script
as the shell would split words (quotes, backslash escapes and continuation
lines, comments, `;`/`&&`/`|` between commands), finds the trainer's launch
command, and returns each override with the span of its key and of its value.

It does not run anything and evaluates nothing but plain assignments of
literal values made earlier in the script (`MODEL=Qwen/Qwen3-8B`, then
`...path=$MODEL`). Anything else it cannot know (`$HOME`, `$(date)`, a
backtick, `$@` passing the script's own arguments on, a second launch
command) is a note naming the line; an override whose value it cannot know
is kept with the value UNKNOWN, so that the YAML's value, which it replaces,
is not compared either.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from planlint.core.loader import Limits, load_text, read_text
from planlint.core.positions import START, Positions, Route, Span
from planlint.services.trainer_configs._documents import ConfigDocument


class _Unknown:
    """The value of an override the reader cannot know (it depends on the environment)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


@dataclass(frozen=True)
class Override:
    route: Route  # the config key it sets: ("data", "train_files"), ("seed",)
    value: Any  # UNKNOWN when it depends on what the script does not set
    line: int
    text: str  # the word as the shell would pass it (or as written, when unknown)
    op: str = ""  # verl/Hydra: "" (override), "+" (add), "++" (add or override), "~" (delete)


@dataclass
class LaunchScript:
    """What the launch command of a script says, for the trainer `trainer`."""

    document: ConfigDocument  # kind "script": the overrides' spans by route
    trainer: str | None = None  # the trainer whose launch command was found
    command: str | None = None  # trl: "sft"/"grpo"/...; axolotl: "train"/...; verl: the module
    command_line: int | None = None
    command_span: Span | None = None
    config: tuple[str, Span] | None = None  # the config file the command names, as written
    config_name: tuple[str, Span] | None = None  # verl: --config-name
    overrides: list[Override] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Word:
    text: str
    start: int  # offsets in the script
    end: int
    unknown: list[str] = field(default_factory=list)  # what it depends on that the script does not set
    passes_arguments: bool = False  # "$@" / "$*"
    quoted_at: int = -1  # offset (into text) of the first quoted character, -1 if none


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEPARATORS = (";;", "&&", "||", ";", "&", "|", "(", ")")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class _Lexer:
    """Shell words of one script, command by command (a list of words per command)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.variables: dict[str, str | None] = {}  # None: assigned, but not to a literal
        self.quoted: list[Span] = []  # the quoted parts of words: a `#` in one is no comment

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span(self, start: int, end: int) -> Span:
        line = self.line(start)
        end_line = self.line(max(start, end - 1)) if end > start else line
        end_column = end - self.starts[end_line - 1] + 1
        return Span(line, start - self.starts[line - 1] + 1, end_line, end_column)

    def commands(self) -> Iterator[list[_Word]]:
        """The script's commands, one at a time: a command's `$NAME` sees the assignments before it."""
        text, n, pos = self.text, len(self.text), 0
        words: list[_Word] = []
        while pos < n:
            char = text[pos]
            if char in " \t\r":
                pos += 1
                continue
            if char == "\\" and text.startswith("\n", pos + 1):
                pos += 2  # a continuation line
                continue
            if char == "\n":
                if words:
                    yield words
                    words = []
                pos += 1
                continue
            if char == "#":  # a comment, to the end of the line
                end = text.find("\n", pos)
                pos = n if end < 0 else end
                continue
            separator = next((s for s in _SEPARATORS if text.startswith(s, pos)), None)
            if separator is not None:
                if words:
                    yield words
                    words = []
                pos += len(separator)
                continue
            word, pos = self._word(pos)
            words.append(word)
        if words:
            yield words

    def _word(self, pos: int) -> tuple[_Word, int]:
        text, n = self.text, len(self.text)
        out: list[str] = []
        word = _Word("", pos, pos)
        while pos < n:
            char = text[pos]
            if char in " \t\r\n" or any(text.startswith(s, pos) for s in _SEPARATORS):
                break
            if char == "\\":
                if text.startswith("\n", pos + 1):
                    pos += 2
                    continue
                out.append(text[pos + 1 : pos + 2])
                pos += 2
                continue
            if char == "'":
                end = text.find("'", pos + 1)
                if end < 0:
                    word.unknown.append("an unclosed quote")
                    end = n - 1
                self.quoted.append(self.span(pos, end + 1))
                if word.quoted_at < 0:
                    word.quoted_at = len(out)
                out.append(text[pos + 1 : end])
                pos = end + 1
                continue
            if char == '"':
                if word.quoted_at < 0:
                    word.quoted_at = len(out)
                opened = pos
                pos += 1
                while pos < n and text[pos] != '"':
                    if text[pos] == "\\" and pos + 1 < n and text[pos + 1] in '"\\$`\n':
                        if text[pos + 1] != "\n":
                            out.append(text[pos + 1])
                        pos += 2
                    elif text[pos] in "$`":
                        pos = self._expansion(pos, out, word)
                    else:
                        out.append(text[pos])
                        pos += 1
                if pos >= n:
                    word.unknown.append("an unclosed quote")
                self.quoted.append(self.span(opened, min(pos + 1, n)))
                pos += 1
                continue
            if char in "$`":
                pos = self._expansion(pos, out, word)
                continue
            out.append(char)
            pos += 1
        word.text = "".join(out)
        word.end = pos
        return word, pos

    def _expansion(self, pos: int, out: list[str], word: _Word) -> int:
        """A `$...` or backtick at `pos`: substituted when it is a literal the script set; else noted."""
        text = self.text
        if text[pos] == "`":
            end = text.find("`", pos + 1)
            word.unknown.append("a command substitution (`...`)")
            return len(text) if end < 0 else end + 1
        following = text[pos + 1 : pos + 2]
        if following in ("@", "*"):
            word.passes_arguments = True
            return pos + 2
        if following == "(":
            depth, at = 0, pos + 1
            while at < len(text):
                if text[at] == "(":
                    depth += 1
                elif text[at] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                at += 1
            word.unknown.append("a command substitution $(...)")
            return at + 1
        if following == "{":
            end = text.find("}", pos + 2)
            inner = text[pos + 2 : end] if end > 0 else ""
            match = _NAME.fullmatch(inner)
            if match is None:
                word.unknown.append("${" + inner + "}")
                return len(text) if end < 0 else end + 1
            name, after = inner, end + 1
        else:
            match = _NAME.match(text, pos + 1)
            if match is None:
                if following.isdigit():
                    word.unknown.append(f"${following} (an argument of the script)")
                    return pos + 2
                out.append("$")
                return pos + 1
            name, after = match.group(0), match.end()
        value = self.variables.get(name)
        if value is None:
            word.unknown.append(f"${name}")
        else:
            out.append(value)
        return after


def _launch(words: list[_Word]) -> tuple[str, str, int] | None:
    """(trainer, command, index of the first argument) when `words` launch a trainer."""
    texts = [w.text for w in words]
    for index, text in enumerate(texts):
        name = text.rsplit("/", 1)[-1]
        following = texts[index + 1] if index + 1 < len(texts) else None
        if text == "verl.trainer.main_ppo" and index > 0 and texts[index - 1] == "-m" or text.endswith("verl/trainer/main_ppo.py"):
            return "verl", "verl.trainer.main_ppo", index + 1
        if name == "trl" and following is not None and not following.startswith("-"):
            return "trl", following, index + 2
        module = re.fullmatch(r"trl\.scripts\.([a-z_]+)", text) if index > 0 and texts[index - 1] == "-m" else None
        script = re.fullmatch(r"(?:.*/)?trl/scripts/([a-z_]+)\.py", text)
        if module or script:
            return "trl", (module or script).group(1), index + 1  # type: ignore[union-attr]
        if name == "axolotl" and following is not None and not following.startswith("-"):
            return "axolotl", following, index + 2
        module = re.fullmatch(r"axolotl\.cli\.([a-z_]+)", text) if index > 0 and texts[index - 1] == "-m" else None
        if module:
            return "axolotl", module.group(1), index + 1
    return None


_HYDRA_OVERRIDE = re.compile(r"^(\+\+|\+|~)?([A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*)(?:@[^=]*)?(=|$)")
_BOOL = {"true": True, "false": False}
_NUMBER = re.compile(r"^[+-]?(?:\d[\d_]*)(?:\.\d*)?(?:[eE][+-]?\d+)?$|^[+-]?\.\d+(?:[eE][+-]?\d+)?$")


def hydra_value(text: str) -> Any:
    """A Hydra override's value (after the shell's unquoting) as the config would hold it."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in _BOOL:
        return _BOOL[lowered]
    if lowered == "null":
        return None
    if _NUMBER.match(stripped):
        try:
            return int(stripped.replace("_", "")) if re.fullmatch(r"[+-]?[\d_]+", stripped) else float(stripped)
        except ValueError:
            return stripped
    if stripped[:1] in "[{" or (stripped[:1] in "'\"" and stripped[-1:] == stripped[:1] and len(stripped) > 1):
        loaded = load_text(stripped, Limits(max_file_size=1 << 16))
        if not loaded.problems:
            return loaded.data
    return text


def read_script(path: Path, display: str, trainer: str, limits: Limits) -> LaunchScript:
    """Read the launch script at `path` for `trainer` (size-limited, UTF-8)."""
    text, problem = read_text(path, limits.max_file_size)
    if problem is not None or text is None:
        document = ConfigDocument(display, "script")
        document.error = (problem.message if problem is not None else "cannot be read", START)
        return LaunchScript(document)
    return parse_script(text, display, trainer)


def parse_script(text: str, display: str, trainer: str) -> LaunchScript:
    document = ConfigDocument(display, "script", text=text, data={})
    script = LaunchScript(document)
    lexer = _Lexer(text)
    positions = Positions()
    found = False
    for words in lexer.commands():
        if all(_ASSIGNMENT.match(w.text) for w in words):  # NAME=value: a shell variable
            for word in words:
                name, value = word.text.split("=", 1)
                lexer.variables[name] = None if word.unknown or word.passes_arguments else value
            continue
        launch = _launch(words)
        if launch is None or launch[0] != trainer:
            continue
        line = lexer.line(words[0].start)
        if found:
            script.notes.append(f"{display}:{line}: a second {trainer} launch command; planlint read the first one (line {script.command_line}) only")
            continue
        found = True
        script.trainer, script.command, first = launch
        script.command_line = line
        command_word = words[first - 1]
        script.command_span = lexer.span(command_word.start, command_word.end)
        arguments = words[first:]
        reader = {"verl": _verl_arguments, "trl": _flag_arguments, "axolotl": _flag_arguments}[trainer]
        reader(script, arguments, lexer, positions, display)
    if not found:
        script.notes.append(f"{display}: no {trainer} launch command found (planlint looks for {_LOOKS_FOR[trainer]}); no override was read from it")
    document.positions = positions
    document.quoted = lexer.quoted
    document.data = _as_data(script.overrides)
    return script


_LOOKS_FOR = {
    "verl": "`python3 -m verl.trainer.main_ppo ...`",
    "trl": "`trl sft|grpo ...` or `trl/scripts/NAME.py`",
    "axolotl": "`axolotl train CONFIG ...` or `-m axolotl.cli.train CONFIG`",
}


def _as_data(overrides: list[Override]) -> dict:
    """The overrides as a mapping by route (for PL801/PL008 over their values, and the change card)."""
    data: dict = {}
    for override in overrides:
        if override.value is UNKNOWN or override.op == "~":
            continue
        node = data
        for part in override.route[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[override.route[-1]] = override.value
    return data


def _unreadable(script: LaunchScript, word: _Word, lexer: _Lexer, display: str) -> bool:
    """Note what makes `word` unknowable; True when its value cannot be known."""
    line = lexer.line(word.start)
    shown = lexer.text[word.start : word.end].replace("\\\n", " ").strip()
    if len(shown) > 80:
        shown = shown[:79] + "…"
    if word.passes_arguments:
        script.notes.append(f"{display}:{line}: {shown} passes on the script's own arguments: overrides given when it is run are not seen here")
    if word.unknown:
        causes = ", ".join(dict.fromkeys(word.unknown))
        script.notes.append(f"{display}:{line}: {shown} depends on {causes}, which the script does not set to a literal: planlint cannot tell its value")
        return True
    return False


def _record(script: LaunchScript, positions: Positions, lexer: _Lexer, word: _Word, route: Route, value: Any, key_end: int, op: str = "") -> None:
    positions.keys[route] = lexer.span(word.start, key_end)
    positions.values[route] = lexer.span(key_end + 1 if key_end < word.end else word.start, word.end)
    script.overrides.append(Override(route, value, lexer.line(word.start), word.text, op))


def _key_end(word: _Word, lexer: _Lexer, key: str) -> int:
    """Where the key part of a `key=value` word ends in the text (keys are written unquoted)."""
    written = lexer.text[word.start : word.end]
    at = written.find("=")
    return word.start + (at if at >= 0 else len(key))


def _verl_arguments(script: LaunchScript, words: list[_Word], lexer: _Lexer, positions: Positions, display: str) -> None:
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        text = word.text
        if text in ("--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd"):
            if index < len(words):
                argument = words[index]
                index += 1
                _config_flag(script, text, argument, lexer, display)
            continue
        if text.startswith(("--config-path=", "--config-name=", "--config-dir=")):
            flag, _, rest = text.partition("=")
            _config_flag(script, flag, _Word(rest, word.start, word.end, list(word.unknown), word.passes_arguments), lexer, display)
            continue
        if text.startswith("-"):
            _unreadable(script, word, lexer, display)
            continue  # Hydra's own flags (--multirun, --info, ...): not config values
        match = _HYDRA_OVERRIDE.match(text)
        if match is None or (match.group(3) == "" and match.group(1) != "~"):
            if not _unreadable(script, word, lexer, display) and not word.passes_arguments:
                script.notes.append(f"{display}:{lexer.line(word.start)}: {text!r} is not a key=value override; planlint did not read it")
            continue
        op, key = match.group(1) or "", match.group(2)
        route: Route = tuple(key.split("."))
        unknown = _unreadable(script, word, lexer, display)
        value = UNKNOWN if unknown else (None if op == "~" else hydra_value(text[match.end() :]))
        _record(script, positions, lexer, word, route, value, _key_end(word, lexer, key), op)


def _config_flag(script: LaunchScript, flag: str, value: _Word, lexer: _Lexer, display: str) -> None:
    span = lexer.span(value.start, value.end)
    if _unreadable(script, value, lexer, display):
        return
    if flag in ("--config-name", "-cn"):
        script.config_name = (value.text, span)
    else:
        script.config = (value.text, span)


_NEGATIVE = re.compile(r"^-\d")


def _flag_arguments(script: LaunchScript, words: list[_Word], lexer: _Lexer, positions: Positions, display: str) -> None:
    """`--key value...`, `--key=value`, `--flag` (true), `--no-flag` (axolotl: false); the config file."""
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        text = word.text
        if not text.startswith("--") or text == "--":
            if script.trainer == "axolotl" and script.config is None and not text.startswith("-"):
                if not _unreadable(script, word, lexer, display):
                    script.config = (text, lexer.span(word.start, word.end))
            elif not _unreadable(script, word, lexer, display) and not word.passes_arguments:
                script.notes.append(f"{display}:{lexer.line(word.start)}: {text!r} is not a --flag; planlint did not read it")
            continue
        name, equals, inline = text[2:].partition("=")
        values: list[_Word] = []
        if not equals:
            while index < len(words) and (not words[index].text.startswith("-") or _NEGATIVE.match(words[index].text)):
                values.append(words[index])
                index += 1
        key = name.replace("-", "_")
        if key == "config" and script.trainer == "trl":
            target = values[0] if values else _Word(inline, word.start, word.end, list(word.unknown))
            if not _unreadable(script, target, lexer, display):
                script.config = (target.text, lexer.span(target.start, target.end))
            continue
        value: Any
        if script.trainer == "axolotl" and key.startswith("no_") and not equals and not values:
            key, value = key[3:], False
        elif equals:
            value = UNKNOWN if _unreadable(script, word, lexer, display) else inline
        elif not values:
            value = True
        else:
            unknown = [_unreadable(script, v, lexer, display) for v in values]
            texts = [v.text for v in values]
            value = UNKNOWN if any(unknown) else (texts[0] if len(texts) == 1 else texts)
        route = tuple(key.split(".")) if script.trainer == "axolotl" else (key,)
        end = values[-1].end if values else word.end
        positions.keys[route] = lexer.span(word.start, word.start + 2 + len(name))
        positions.values[route] = lexer.span(values[0].start, end) if values else lexer.span(word.start, word.end)
        script.overrides.append(Override(route, value, lexer.line(word.start), text))
