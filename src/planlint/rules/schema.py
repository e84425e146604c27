"""PL003: the plan against schemas/plan.schema.json, with line and column.

Each schema error becomes one finding at the failing value (or at the unknown
key, or at the mapping missing a required key). Errors about keys that a
dedicated rule owns are dropped: that rule reports them, once.

The errors come from the schema compiled to closures (schema_compiled.py),
which is much faster than jsonschema and spares its import; jsonschema is the
fallback should the schema ever use a keyword the compiler does not support,
and the reference the compiled path is tested against.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.positions import Route, yaml_path
from planlint.rules.base import Problem

# Absent keys reported by their own rule (the route of the missing key).
OWNED_MISSING = {
    ("dataset",),  # PL101
    ("base_model",),  # PL103
    ("splits",),  # PL201
    ("dataset", "release"),  # PL101
    ("base_model", "revision"),  # PL103
    ("baseline", "model", "revision"),  # PL103
    ("runtime", "version"),  # PL104
    ("splits", "eval"),  # PL201
    ("splits", "boundary"),  # PL203
    ("graders", "*", "version"),  # PL301
    ("graders", "*", "judge_model", "name"),  # PL304
    ("graders", "*", "judge_model", "revision"),  # PL304
    ("baseline",),  # PL401
    ("budget",),  # PL501
    ("budget", "max_spend"),  # PL501
    ("budget", "currency"),  # PL503
    ("decision",),  # PL601
    ("decision", "metric"),  # PL601
    ("decision", "target_improvement"),  # PL602
    ("decision", "stopping"),  # PL603
    ("reward", "graders"),  # PL606
    ("recurrence", "schedule"),  # PL508
    ("recurrence", "budget"),  # PL508
    ("recurrence", "budget", "max_spend_per_run"),  # PL508
    ("recurrence", "budget", "max_spend_per_month"),  # PL508
    ("recurrence", "source"),  # PL509
    ("recurrence", "source", "dataset"),  # PL509
    ("recurrence", "source", "releases"),  # PL509
    ("recurrence", "admission"),  # PL509
    ("splits", "boundary", "rolling", "train"),  # PL510
    ("splits", "boundary", "rolling", "eval"),  # PL510
    ("splits", "boundary", "rolling", "*", "from"),  # PL510
    ("splits", "boundary", "rolling", "*", "to"),  # PL510
}

# Values whose validity a dedicated rule judges: route pattern -> the schema
# validators it takes over (ALL: every error at or under the route). Anything
# else there (an unknown key inside `stopping`, say) is still PL003.
ALL = None
OWNED_VALUES: dict[tuple, frozenset | None] = {
    ("dataset", "release"): ALL,  # PL102
    ("base_model", "revision"): ALL,  # PL103
    ("baseline", "model", "revision"): ALL,  # PL103
    ("runtime", "version"): ALL,  # PL104
    ("splits", "boundary"): frozenset({"type"}),  # PL203
    ("splits", "boundary", "cutoff"): ALL,  # PL204
    ("splits", "eval", "frozen"): ALL,  # PL205
    ("graders", "*", "version"): ALL,  # PL302
    ("graders", "*", "judge_model"): frozenset({"type"}),  # PL304
    ("graders", "*", "judge_model", "name"): ALL,  # PL304
    ("graders", "*", "judge_model", "revision"): ALL,  # PL304
    ("budget", "max_spend"): ALL,  # PL502
    ("budget", "currency"): ALL,  # PL503
    ("decision", "target_improvement"): ALL,  # PL602
    ("decision", "stopping"): frozenset({"type", "minProperties"}),  # PL603
    ("reward", "graders"): lambda validator, instance, data: validator == "minItems" or not instance,  # PL606: empty
    ("dataset", "targets", "reviewed"): lambda validator, instance, data: _method(data) == "sft",  # PL605
    ("decision", "metric"): lambda validator, instance, data: instance is None or instance == "",  # PL601: empty
    ("baseline", "status"): ALL,  # PL404
    ("reward", "weights", "*"): ALL,  # PL608
    ("evaluation", "harness", "version"): ALL,  # PL108
    ("evaluation", "chat_template"): ALL,  # PL108
    ("evaluation", "tokenizer_revision"): ALL,  # PL108
    ("baseline", "evaluation", "harness", "version"): ALL,  # PL108
    ("baseline", "evaluation", "chat_template"): ALL,  # PL108
    ("baseline", "evaluation", "tokenizer_revision"): ALL,  # PL108
    ("dataset", "profile", "version"): ALL,  # PL109
    ("graders", "*", "source"): frozenset({"minLength"}),  # PL311: an empty source
    ("budget", "approved_by"): lambda validator, instance, data: _status(data) in ("approved", "running", "completed") and (instance is None or instance == "" or instance == []),  # PL506: empty
    ("recurrence", "schedule"): ALL,  # PL508
    ("recurrence", "budget", "max_spend_per_run"): ALL,  # PL508
    ("recurrence", "budget", "max_spend_per_month"): ALL,  # PL508
    ("recurrence", "budget", "currency"): ALL,  # PL503
    ("recurrence", "source", "dataset"): ALL,  # PL509
    ("recurrence", "source", "releases"): ALL,  # PL509
    ("recurrence", "admission"): ALL,  # PL509
    ("splits", "boundary", "rolling", "*", "from"): ALL,  # PL510
    ("splits", "boundary", "rolling", "*", "to"): ALL,  # PL510
}


def _method(data: Any) -> Any:
    method = data.get("method") if isinstance(data, dict) else None
    return method.get("type") if isinstance(method, dict) else None


def _status(data: Any) -> Any:
    metadata = data.get("metadata") if isinstance(data, dict) else None
    return metadata.get("status") if isinstance(metadata, dict) else None


def _matches(route: Route, pattern: tuple) -> bool:
    return len(route) == len(pattern) and all(p == "*" or p == r for r, p in zip(route, pattern))


def _owned_value(route: Route, validator: str, instance: Any = None, data: Any = None) -> bool:
    for pattern, validators in OWNED_VALUES.items():
        if validators is ALL:
            if len(route) >= len(pattern) and _matches(route[: len(pattern)], pattern):
                return True
        elif _matches(route, pattern):
            if callable(validators) and validators(validator, instance, data):
                return True
            if isinstance(validators, frozenset) and validator in validators:
                return True
    return False


_SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "plan.schema.json")


@lru_cache(maxsize=1)
def plan_schema() -> dict:
    # The package's own file, read directly: importlib.resources imports zipfile,
    # tempfile and threading, a few milliseconds of every pre-commit hook's start-up.
    try:
        with open(_SCHEMA_FILE, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:  # pragma: no cover - installed as a zip: ask the loader
        from importlib.resources import files

        return json.loads(files("planlint").joinpath("data/plan.schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator, ValidationError, validators

    from planlint.rules.schema_compiled import ecma_regex

    def pattern(validator, value, instance, schema):  # ECMA-262 `$`, as in the compiled validator
        if validator.is_type(instance, "string") and not ecma_regex(value).search(instance):
            yield ValidationError(f"{instance!r} does not match {value!r}")

    return validators.extend(Draft202012Validator, {"pattern": pattern})(plan_schema())


_TYPE_NAMES = {"object": "a mapping", "array": "a list", "string": "a string", "number": "a number", "integer": "an integer", "boolean": "true or false", "null": "null"}


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if value is None:
        return "null"
    return "a string"


def _allowed_keys(schema: dict) -> list[str]:
    return sorted(schema.get("properties", {}))


def _resolve(schema: dict) -> dict:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return plan_schema()["$defs"][ref[len("#/$defs/"):]]
    return schema


@lru_cache(maxsize=1)
def _compiled():
    """The schema compiled to closures (schema_compiled.py), or None: then jsonschema validates."""
    # Deliberately lazy: compiled once per process, when PL003 first runs.
    from planlint.rules.schema_compiled import Unsupported, compile_schema

    try:
        return compile_schema(plan_schema())
    except Unsupported:
        return None


def schema_problems(data: Any) -> Iterator[Problem]:
    """PL003 problems for `data`; jsonschema is imported only if the schema cannot be compiled."""
    errors = _compiled()
    return _problems(errors(data) if errors is not None else _validator().iter_errors(data), data)


def jsonschema_problems(data: Any) -> Iterator[Problem]:
    """The same problems, found by jsonschema itself: the reference the compiled path is tested against."""
    return _problems(_validator().iter_errors(data), data)


# One problem, one finding: where several keywords fail on one value (null
# where a mapping with exactly one of path/selector/tasks is expected fails
# both `type` and `oneOf`), the most direct one speaks.
_PRIORITY = {"type": 0, "const": 1, "enum": 1, "oneOf": 9}


def _problems(errors, data: Any = None) -> Iterator[Problem]:
    seen: set[tuple] = set()
    by_value: dict[tuple, tuple[int, int]] = {}  # route -> (priority, index in out)
    out: list[Problem | None] = []
    for error in errors:
        for problem in _convert(error, data):
            key = (problem.route, problem.missing, problem.at_key, problem.message)
            if key in seen:
                continue
            seen.add(key)
            if problem.missing or problem.at_key:
                out.append(problem)
                continue
            rank = _PRIORITY.get(error.validator, 5)
            earlier = by_value.get(problem.route)
            if earlier is None:
                by_value[problem.route] = (rank, len(out))
                out.append(problem)
            elif rank < earlier[0]:
                out[earlier[1]] = problem
                by_value[problem.route] = (rank, earlier[1])
    return iter([p for p in out if p is not None])


def _convert(error, data: Any = None) -> Iterator[Problem]:
    route: Route = tuple(error.absolute_path)
    where = yaml_path(route) or "the plan"
    validator = error.validator
    schema = _resolve(error.schema) if isinstance(error.schema, dict) else {}
    instance = error.instance
    if validator == "required":
        if not isinstance(instance, dict):
            return
        for key in error.validator_value:
            if key in instance:
                continue
            missing = route + (key,)
            if any(_matches(missing, p) for p in OWNED_MISSING):
                continue
            yield Problem(missing, f"{yaml_path(missing)} is required but missing", missing=True)
        return
    if _owned_value(route, validator, instance, data):
        return
    if validator in ("additionalProperties", "unevaluatedProperties"):
        if not isinstance(instance, dict):
            return
        allowed = _allowed_keys(schema)
        from planlint.rules.schema_compiled import ecma_regex

        patterns = [ecma_regex(p) for p in schema.get("patternProperties", {})]
        for key in instance:
            if key in allowed or any(p.search(key) for p in patterns):
                continue
            import difflib  # only for an unknown key: spares its import on every run

            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(allowed)} (or an x- extension key)"
            yield Problem(route + (key,), f"unknown key {show(key)} in {where}: {hint}", at_key=True)
        return
    if validator == "type":
        expected = error.validator_value
        names = [_TYPE_NAMES.get(t, t) for t in (expected if isinstance(expected, list) else [expected])]
        yield Problem(route, f"{where} must be {' or '.join(names)}, not {_type_name(instance)}")
    elif validator == "enum":
        options = ", ".join(str(v) for v in error.validator_value)
        yield Problem(route, f"{where} is {show(instance)}; expected one of: {options}")
    elif validator == "const":
        yield Problem(route, f"{where} must be {error.validator_value!r}, not {show(instance)}")
    elif validator == "pattern":
        hint = schema.get("x-pattern-hint") or f"must match {error.validator_value}"
        yield Problem(route, f"{where} {show(instance)} {hint}")
    elif validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        words = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[validator]
        yield Problem(route, f"{where} is {show(instance)}; it must be {words} {error.validator_value}")
    elif validator in ("minItems", "minLength", "minProperties"):
        yield Problem(route, f"{where} is empty; give at least {error.validator_value} {'item' if validator == 'minItems' else 'character' if validator == 'minLength' else 'key'}")
    elif validator == "uniqueItems":
        yield Problem(route, f"{where} lists the same item twice")
    elif validator == "oneOf":
        options = [tuple(s.get("required", ())) for s in error.validator_value if isinstance(s, dict)]
        keys = [k[0] for k in options if len(k) == 1]
        if keys and isinstance(instance, dict):
            present = [k for k in keys if k in instance]
            if present:
                yield Problem(route, f"{where} gives {' and '.join(present)}: give exactly one of {', '.join(keys)}")
            else:  # keys are missing: point at the key of the mapping that should hold them
                yield Problem(route, f"{where} gives none of {', '.join(keys)}: give exactly one", at_key=True)
        else:
            yield Problem(route, f"{where} does not match any allowed form")
    else:
        yield Problem(route, f"{where} is not valid ({validator})")
