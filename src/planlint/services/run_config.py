"""Osmosis submit configs: the TOML files a plan's `run:` names.

A run on the platform starts from `osmosis train submit configs/training/NAME.toml`
(evaluations: `osmosis eval submit configs/eval/NAME.toml`), not from the plan.
This module reads such a file safely and says where each key was written, so
that the run rules (rules/run.py) can report findings *in the TOML file*.

Reading: the stdlib `tomllib` (Python 3.11+), `tomli` (the same parser,
published separately) on 3.10. Neither gives positions, and the maintained
round-trip library (tomlkit) keeps the layout but not line and column
numbers either. So positions come from `scan()`, a small scanner over the
source that runs only on text tomllib has accepted: it walks table headers,
keys and values (strings of the four kinds, arrays, inline tables, bare
scalars) with an explicit stack and records a Span for every key and value,
under the same routes (tuples of keys and indexes) the plan rules use. It
never decides validity (tomllib did), and where it meets something it does
not expect it stops: the routes it did record stay right, the rest fall back
to their nearest recorded prefix.

`check_format()` is the SDK's own validation (osmosis-ai 0.3.8,
`platform/cli/shared_config.py`, `training_config.py`, `eval_config.py`)
restated as problems at routes: unknown sections and keys, types, the
commit SHA and branch shapes, `[env]` names and values, `[secrets]`.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from planlint.core.loader import read_text
from planlint.core.messages import show
from planlint.core.positions import START, Positions, Route, Span

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10: the same parser, published separately
    import tomli as tomllib  # type: ignore[no-redef]

TRAINING = "training"
EVAL = "eval"

# The SDK's patterns (shared_config.py).
ENV_VAR_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
COMMIT_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
RESERVED_ENV_PREFIX = "_OSMOSIS_"

EXPERIMENT_REQUIRED = ("rollout", "entrypoint", "model_path", "dataset")
EXPERIMENT_KEYS = EXPERIMENT_REQUIRED + ("branch", "commit_sha")
# Sections whose keys the SDK knows (unknown keys are rejected), by config kind.
SECTION_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    TRAINING: {
        "training": ("lr", "total_epochs", "n_samples_per_prompt", "rollout_batch_size", "max_prompt_length",
                     "max_response_length", "agent_workflow_timeout_s", "grader_timeout_s"),
        "sampling": ("rollout_temperature", "rollout_top_p"),
        "checkpoints": ("eval_interval", "checkpoint_save_freq"),
    },
    EVAL: {
        "evaluation": ("limit", "n", "batch_size", "pass_threshold", "agent_workflow_timeout_s", "grader_timeout_s"),
    },
}
COMMON_SECTIONS = ("experiment", "advanced", "env", "secrets")


@dataclass
class TomlDocument:
    """One submit config as the run rules see it.

    `path` is the display path (relative to the current directory, `/`
    separators); `data` is None when the file could not be read as TOML, and
    then `error` says why and where.
    """

    path: str
    kind: str  # TRAINING or EVAL
    text: str | None = None
    data: dict | None = None
    positions: Positions = field(default_factory=Positions)
    error: tuple[str, Span] | None = None


# --------------------------------------------------------------------------- reading


def parse(text: str, path: str, kind: str) -> TomlDocument:
    """`text` as a TomlDocument: data and positions, or the parser's complaint and where it points."""
    document = TomlDocument(path, kind, text=text)
    try:
        document.data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        document.error = _decode_error(exc, text)
        return document
    except (RecursionError, MemoryError):  # hostile nesting: tomllib is recursive
        document.error = ("nesting too deep to read", START)
        return document
    document.positions = scan(text)
    return document


_AT = re.compile(r"^(.*?)\s*\(at line (\d+), column (\d+)\)\s*$", re.S)
_AT_END = re.compile(r"^(.*?)\s*\(at end of document\)\s*$", re.S)


def _decode_error(exc: Exception, text: str) -> tuple[str, Span]:
    message = str(exc)
    match = _AT.match(message)
    if match:
        line, column = int(match.group(2)), int(match.group(3))
        return match.group(1), Span(line, column, line, column + 1)
    match = _AT_END.match(message)
    if match:
        lines = text.split("\n")
        return match.group(1) + " at the end of the file", Span(len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 1)
    return message.splitlines()[0] if message else "not valid TOML", START


# --------------------------------------------------------------------------- positions

_WS = re.compile(r"[ \t]*")
_WS_NL = re.compile(r"(?:[ \t\r\n]|#[^\n]*)*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:\\.|[^"\\]|"(?!""))*"{0,2}"""', re.S)
_ML_LITERAL = re.compile(r"'''(?:[^']|'(?!''))*'{0,2}'''", re.S)
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}[^\s,\]}#]*")
_BARE_VALUE = re.compile(r"[^\s,\]}#]+")


class _Stop(Exception):
    """The scanner met something it does not expect: keep what was recorded."""


class _Source:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.at(start), *self.at(end))


def scan(text: str) -> Positions:
    """The span of every key and value in TOML `text` (already accepted by tomllib), by route."""
    positions = Positions()
    try:
        _scan(_Source(text), positions)
    except _Stop:
        pass
    return positions


def _key(src: _Source, pos: int) -> tuple[list[tuple[str, int, int]], int]:
    """A dotted key at `pos`: [(name, start, end)] and the offset after it."""
    text = src.text
    parts = []
    while True:
        pos = _WS.match(text, pos).end()
        for pattern in (_BARE_KEY, _BASIC, _LITERAL):
            match = pattern.match(text, pos)
            if match:
                break
        else:
            raise _Stop
        raw = match.group(0)
        name = raw if pattern is _BARE_KEY else tomllib.loads(f"k = {raw}")["k"]
        parts.append((name, match.start(), match.end()))
        pos = _WS.match(text, match.end()).end()
        if text.startswith(".", pos):
            pos += 1
            continue
        return parts, pos


def _record_key(positions: Positions, src: _Source, base: Route, parts: list) -> Route:
    route = base
    for name, start, end in parts:
        route = route + (name,)
        positions.keys.setdefault(route, src.span(start, end))
    return route


def _scan(src: _Source, positions: Positions) -> None:
    text = src.text
    n = len(text)
    table: Route = ()
    array_tables: dict[Route, int] = {}
    # Open containers: [kind ("array" | "inline"), route, start offset, next index]
    stack: list[list] = []
    pos = 0
    while True:
        if not stack:
            pos = _WS_NL.match(text, pos).end()
            if pos >= n:
                return
            if text.startswith("[", pos):
                double = text.startswith("[[", pos)
                parts, pos = _key(src, pos + (2 if double else 1))
                close = "]]" if double else "]"
                if not text.startswith(close, pos):
                    raise _Stop
                names = tuple(name for name, _, _ in parts)
                route: Route = ()
                for depth, (name, start, end) in enumerate(parts):
                    route = route + (name,)
                    positions.keys.setdefault(route, src.span(start, end))
                    if depth < len(parts) - 1 and names[: depth + 1] in array_tables:
                        route = route + (array_tables[names[: depth + 1]],)
                if double:
                    index = array_tables.get(names, -1) + 1
                    array_tables[names] = index
                    # Arrays of tables below this one start again in its new element.
                    for other in [p for p in array_tables if len(p) > len(names) and p[: len(names)] == names]:
                        del array_tables[other]
                    route = route + (index,)
                table = route
                positions.keys[table] = src.span(parts[-1][1], parts[-1][2])
                positions.values[table] = src.span(parts[0][1] - len(close), pos + len(close))
                pos += len(close)
                continue
            parts, pos = _key(src, pos)
            route = _record_key(positions, src, table, parts)
            if not text.startswith("=", pos):
                raise _Stop
            pos = _value(src, positions, stack, route, _WS.match(text, pos + 1).end())
            continue
        frame = stack[-1]
        kind, route, start, index = frame
        pos = _WS_NL.match(text, pos).end() if kind == "array" else _WS.match(text, pos).end()
        if pos >= n:
            raise _Stop
        char = text[pos]
        if char == ",":
            pos += 1
            continue
        if (kind == "array" and char == "]") or (kind == "inline" and char == "}"):
            positions.values[route] = src.span(start, pos + 1)
            stack.pop()
            pos += 1
            continue
        if kind == "array":
            frame[3] += 1
            pos = _value(src, positions, stack, route + (index,), pos)
        else:
            parts, pos = _key(src, pos)
            inner = _record_key(positions, src, route, parts)
            if not text.startswith("=", pos):
                raise _Stop
            pos = _value(src, positions, stack, inner, _WS.match(text, pos + 1).end())


def _value(src: _Source, positions: Positions, stack: list, route: Route, pos: int) -> int:
    """Record the value starting at `pos`; a container is pushed and closed later. The offset after it."""
    text = src.text
    if pos >= len(text):
        raise _Stop
    char = text[pos]
    if char == "[":
        stack.append(["array", route, pos, 0])
        return pos + 1
    if char == "{":
        stack.append(["inline", route, pos, 0])
        return pos + 1
    if text.startswith('"""', pos):
        match = _ML_BASIC.match(text, pos)
    elif text.startswith("'''", pos):
        match = _ML_LITERAL.match(text, pos)
    elif char == '"':
        match = _BASIC.match(text, pos)
    elif char == "'":
        match = _LITERAL.match(text, pos)
    else:
        match = _DATETIME.match(text, pos) or _BARE_VALUE.match(text, pos)
    if match is None:
        raise _Stop
    positions.values[route] = src.span(pos, match.end())
    return match.end()


# --------------------------------------------------------------------------- the SDK's format


@dataclass(frozen=True)
class FormatProblem:
    route: Route
    message: str
    missing: bool = False
    at_key: bool = False


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return "a date or time"


def check_format(data: dict, kind: str) -> Iterator[FormatProblem]:
    """What `osmosis train submit` (kind TRAINING) or `osmosis eval submit` (EVAL) would reject in `data`.

    Paths (the rollout and its entrypoint on disk) are checked by the rule,
    which knows the repository.
    """
    label = "a training" if kind == TRAINING else "an eval"
    sections = SECTION_KEYS[kind]
    allowed = COMMON_SECTIONS + tuple(sections)
    for name in data:
        if name not in allowed:
            yield FormatProblem((name,), f"[{show(name)[1:-1]}] is not a section of {label} config; the SDK rejects it (known: {', '.join(allowed)})", at_key=True)
    experiment = data.get("experiment")
    if experiment is None:
        yield FormatProblem(("experiment",), f"[experiment] is missing; {label} config needs it with rollout, entrypoint, model_path and dataset", missing=True)
    elif not isinstance(experiment, dict):
        yield FormatProblem(("experiment",), f"experiment must be a table, not {_type(experiment)}")
    else:
        yield from _experiment(experiment)
    for name, keys in tuple(sections.items()) + (("advanced", None),):
        section = data.get(name)
        if section is None:
            continue
        if not isinstance(section, dict):
            yield FormatProblem((name,), f"{name} must be a table, not {_type(section)}")
            continue
        if keys is not None:
            for key in section:
                if key not in keys:
                    yield FormatProblem((name, key), f"{show(key)} is not a key of [{name}]; the SDK rejects unknown keys (known: {', '.join(keys)})", at_key=True)
    env = data.get("env")
    if env is not None and not isinstance(env, dict):
        yield FormatProblem(("env",), f"env must be a table of KEY = \"value\" pairs, not {_type(env)}")
        env = None
    for key, value in (env or {}).items():
        if not isinstance(value, str):
            yield FormatProblem(("env", key), f"[env] values must be strings, not {_type(value)}: quote it")
        if not ENV_VAR_NAME.match(key):
            yield FormatProblem(("env", key), f"{show(key)} is not a valid environment variable name: it must match ^[A-Z_][A-Z0-9_]*$", at_key=True)
        elif key.startswith(RESERVED_ENV_PREFIX):
            yield FormatProblem(("env", key), f"{show(key)}: names starting with {RESERVED_ENV_PREFIX} are reserved by the platform; choose another", at_key=True)
    yield from _secrets(data, kind, env or {})


def _experiment(experiment: dict) -> Iterator[FormatProblem]:
    for key in experiment:
        if key not in EXPERIMENT_KEYS:
            yield FormatProblem(("experiment", key), f"{show(key)} is not a key of [experiment]; the SDK rejects unknown keys (known: {', '.join(EXPERIMENT_KEYS)})", at_key=True)
    for key in EXPERIMENT_REQUIRED:
        if key not in experiment:
            yield FormatProblem(("experiment", key), f"[experiment] has no {key}; the SDK requires rollout, entrypoint, model_path and dataset", missing=True)
    for key in EXPERIMENT_KEYS:
        if key in experiment and not isinstance(experiment[key], str):
            yield FormatProblem(("experiment", key), f"experiment.{key} must be a string, not {_type(experiment[key])}")
    branch, sha = experiment.get("branch"), experiment.get("commit_sha")
    if isinstance(branch, str) and (not branch or any(c.isspace() for c in branch)):
        yield FormatProblem(("experiment", "branch"), "experiment.branch must not be empty or contain whitespace")
    if isinstance(sha, str) and not COMMIT_SHA.match(sha):
        yield FormatProblem(("experiment", "commit_sha"), f"experiment.commit_sha {show(sha)} is not a commit SHA: give 7-40 hexadecimal characters (a full 40-character SHA is best)")
    if "branch" in experiment and "commit_sha" in experiment:
        yield FormatProblem(("experiment", "branch"), "experiment has both branch and commit_sha; the SDK accepts one: keep commit_sha", at_key=True)


def _secrets(data: dict, kind: str, env: dict) -> Iterator[FormatProblem]:
    if "secrets" not in data:
        if kind == EVAL:
            yield FormatProblem(("secrets",), "[secrets] is missing; an eval config needs it (required = [] when the evaluation needs no secret)", missing=True)
        return
    secrets = data["secrets"]
    if not isinstance(secrets, dict):
        yield FormatProblem(("secrets",), f"secrets must be a table with required = [NAMES], not {_type(secrets)}")
        return
    for key in secrets:
        if key != "required":
            yield FormatProblem(("secrets", key), f"{show(key)} is not a key of [secrets]; it holds only required = [NAMES]", at_key=True)
    if "required" not in secrets:
        yield FormatProblem(("secrets", "required"), "[secrets] has no required = [NAMES]; the SDK requires it when the section is present", missing=True)
        return
    required = secrets["required"]
    if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
        yield FormatProblem(("secrets", "required"), 'secrets.required must be a list of strings, e.g. required = ["OPENAI_API_KEY"]')
        return
    seen: set[str] = set()
    for index, name in enumerate(required):
        if name in seen:
            yield FormatProblem(("secrets", "required", index), f"{show(name)} is listed twice in secrets.required")
        seen.add(name)
        if not SECRET_NAME.match(name):
            yield FormatProblem(("secrets", "required", index), f"{show(name)} is not a valid secret name: it must match ^[A-Z][A-Z0-9_]*$")
        elif name in env:
            yield FormatProblem(("secrets", "required", index), f"{show(name)} is both in [env] and in secrets.required; each variable must come from one place")


def rollout_problem(rollout: str) -> str | None:
    """Why the SDK refuses `rollout` as a rollout name, or None."""
    if rollout in ("", ".", ".."):
        return "is not a valid rollout name"
    if "/" in rollout or "\\" in rollout or os.path.isabs(rollout):
        return "must be a single-segment name under rollouts/ (no path separators)"
    return None


def entrypoint_problem(entrypoint: str) -> str | None:
    """Why `entrypoint` cannot resolve under rollouts/<rollout>/, or None (existence is checked on disk)."""
    if not entrypoint:
        return "is empty"
    if "\\" in entrypoint or os.path.isabs(entrypoint) or entrypoint.startswith("/"):
        return "must be a path under rollouts/<rollout>/"
    depth = 0
    for part in entrypoint.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return "must resolve under rollouts/<rollout>/ (it leads out with ..)"
        elif part not in ("", "."):
            depth += 1
    if depth == 0:
        return "names the rollout directory itself, not a file in it"
    return None


def walk_strings(data: Any, route: Route = ()) -> Iterator[tuple[Route, str]]:
    """(route, text) for every string value in the TOML data, without recursion."""
    stack = [(data, route)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack.extend((item, where + (key,)) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((item, where + (index,)) for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            yield where, value


def read_document(path: Path, display: str, kind: str, max_size: int) -> TomlDocument:
    """Read and parse the file at `path` (size-limited, UTF-8)."""
    text, problem = read_text(path, max_size)
    if problem is not None or text is None:
        document = TomlDocument(display, kind)
        document.error = (problem.message if problem is not None else "cannot be read", START)
        return document
    return parse(text, display, kind)
