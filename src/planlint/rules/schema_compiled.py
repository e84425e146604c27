"""The plan schema compiled to plain Python closures, for PL003 at speed.

jsonschema is general: every keyword of every subschema goes through its
dispatch, evolve() and reference resolution, which costs about 1.7 ms per plan
plus 0.1 s to import. planlint validates against one schema it ships, so this
module turns that schema, once, into nested closures that do only the checks it
asks for.

The closures report errors that carry exactly what `schema._convert` reads from
a jsonschema `ValidationError` (path, keyword, keyword value, subschema,
instance), in the order jsonschema yields them, so both paths give the same
PL003 problems (tests/test_schema_compiled.py compares them on fixtures, rule
examples and hundreds of mutated plans). Each keyword below follows the
jsonschema 4 implementation of draft 2020-12, including its treatment of
booleans (not integers, not numbers) and of equality (`enum`, `const`,
`uniqueItems`).

Only the keywords the plan schema uses are supported; anything else raises
`Unsupported` at compile time and the caller falls back to jsonschema.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Callable

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# Annotations: no effect on validation (no format checker is configured either way).
_ANNOTATIONS = {"title", "description", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly"}

# Where a check is, as (parent link, key or index) pairs from the root's None: a
# check passes one pair down per child, and only an error spells out the route.
Link = Any
Check = Callable[[Any, Link, list], None]


def _path(link: Link) -> tuple:
    """The route (keys and indexes from the root) of a link."""
    parts = []
    while link is not None:
        link, step = link
        parts.append(step)
    parts.reverse()
    return tuple(parts)


class Unsupported(Exception):
    """The schema uses something this compiler does not implement."""


class SchemaError:
    """One validation error, shaped like the parts of jsonschema's ValidationError that PL003 reads."""

    __slots__ = ("absolute_path", "validator", "validator_value", "schema", "instance")

    def __init__(self, path: Link, validator: str, validator_value: Any, schema: dict, instance: Any) -> None:
        self.absolute_path = _path(path)
        self.validator = validator
        self.validator_value = validator_value
        self.schema = schema
        self.instance = instance

    def __repr__(self) -> str:
        return f"SchemaError({self.absolute_path!r}, {self.validator!r})"


# --------------------------------------------------------------------------- jsonschema's semantics


def ecma_regex(pattern: str) -> re.Pattern:
    """`pattern` compiled to match as ECMA-262 (JSON Schema's dialect) does: `$` only at the very end.

    Python's `$` also matches before one final newline, so `name: |` (giving
    "slug\\n") passed `^[a-z0-9-]+$`, although no other JSON Schema tool accepts it.
    """
    out, in_class, i = [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return re.compile("".join(out))


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}

# The types whose test is one isinstance() (bool is an int, so "integer" and "number" are not).
_CLASSES: dict[str, type | tuple[type, ...]] = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}

_TRUE, _FALSE = object(), object()


def _unbool(value: Any) -> Any:
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value


def equal(one: Any, two: Any) -> bool:
    """jsonschema's equality: True is not 1, recursively."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(equal(i, j) for i, j in zip(one, two))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(key in two and equal(value, two[key]) for key, value in one.items())
    return _unbool(one) == _unbool(two)


def unique(items: list) -> bool:
    """jsonschema's uniq(): sort and compare neighbours, or compare all pairs when unsortable."""
    if all(item.__class__ is str for item in items):  # the usual list (ids, tags): equality is ==
        return len(set(items)) == len(items)
    try:
        ordered = sorted(_unbool(i) for i in items)
        for i, j in zip(ordered, itertools.islice(ordered, 1, None)):
            if equal(i, j):
                return False
    except (NotImplementedError, TypeError):
        seen: list = []
        for item in items:
            item = _unbool(item)
            for other in seen:
                if equal(other, item):
                    return False
            seen.append(item)
    return True


# --------------------------------------------------------------------------- the compiler


class _Compiler:
    def __init__(self, root: dict) -> None:
        self.root = root
        self.refs: dict[str, list] = {}  # ref -> [check or None]; a cell, so a $ref may be recursive

    def node(self, schema: Any) -> Check | None:
        """A check for `schema`, or None when it accepts everything."""
        if schema is True:
            return None
        if not isinstance(schema, dict):
            raise Unsupported(f"subschema {schema!r}")
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS or keyword.startswith("x-"):
                continue
            if keyword in ("$schema", "$id", "$defs") and schema is self.root:
                continue
            build = getattr(self, "k_" + keyword.lstrip("$"), None)
            if build is None:
                raise Unsupported(f"keyword {keyword!r}")
            check = build(value, schema)
            if check is not None:
                checks.append(check)
        if not checks:
            return None
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks

            def all_of_2(instance, route, out):
                first(instance, route, out)
                second(instance, route, out)

            return all_of_2
        if len(checks) == 3:
            first, second, third = checks

            def all_of_3(instance, route, out):
                first(instance, route, out)
                second(instance, route, out)
                third(instance, route, out)

            return all_of_3
        checks_t = tuple(checks)

        def all_of(instance, route, out):
            for check in checks_t:
                check(instance, route, out)

        return all_of

    # Each k_<keyword>(value, schema) returns a check or None (nothing to check).

    def k_type(self, value, schema):
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or any(n not in _TYPES for n in names):
            raise Unsupported(f"type {value!r}")
        tests = tuple(_TYPES[n] for n in names)
        if len(names) == 1 and names[0] in _CLASSES:
            kind = _CLASSES[names[0]]  # the test is isinstance(instance, kind): inlined

            def type_class(instance, route, out):
                if not isinstance(instance, kind):
                    out.append(SchemaError(route, "type", value, schema, instance))

            return type_class
        if len(tests) == 1:
            test = tests[0]

            def type_one(instance, route, out):
                if not test(instance):
                    out.append(SchemaError(route, "type", value, schema, instance))

            return type_one

        classes = tuple(_CLASSES[n] for n in names if n in _CLASSES)
        others = tuple(_TYPES[n] for n in names if n not in _CLASSES)

        def type_any(instance, route, out):
            if isinstance(instance, classes):
                return
            for test in others:
                if test(instance):
                    return
            out.append(SchemaError(route, "type", value, schema, instance))

        return type_any

    def k_properties(self, value, schema):
        children = tuple((name, check) for name, sub in value.items() if (check := self.node(sub)) is not None)
        if not children:
            return None

        def properties(instance, route, out):
            if isinstance(instance, dict):
                for name, check in children:
                    if name in instance:
                        check(instance[name], (route, name), out)

        return properties

    def k_patternProperties(self, value, schema):
        children = tuple((ecma_regex(p).search, check) for p, sub in value.items() if (check := self.node(sub)) is not None)
        if not children:
            return None

        def pattern_properties(instance, route, out):
            if isinstance(instance, dict):
                for search, check in children:
                    for key, item in instance.items():
                        if search(key):
                            check(item, (route, key), out)

        return pattern_properties

    def k_additionalProperties(self, value, schema):
        declared = frozenset(schema.get("properties", {}))
        joined = "|".join(schema.get("patternProperties", {}))
        search = ecma_regex(joined).search if joined else None

        def extra(key):
            return key not in declared and not (search is not None and search(key))

        if value is False:

            def no_additional(instance, route, out):
                if isinstance(instance, dict):
                    for key in instance:
                        if key not in declared and not (search is not None and search(key)):
                            out.append(SchemaError(route, "additionalProperties", value, schema, instance))
                            return

            return no_additional
        check = self.node(value)
        if check is None:
            return None

        # jsonschema visits the extra keys in set order (it varies with hash
        # seeding); the instance's order is deterministic.
        def additional(instance, route, out):
            if isinstance(instance, dict):
                for key, item in instance.items():
                    if extra(key):
                        check(item, (route, key), out)

        return additional

    def k_required(self, value, schema):
        names = tuple(value)

        def required(instance, route, out):
            if isinstance(instance, dict):
                for name in names:
                    if name not in instance:
                        out.append(SchemaError(route, "required", value, schema, instance))

        return required

    def k_enum(self, value, schema):
        if all(isinstance(v, str) for v in value):
            allowed = frozenset(value)

            def enum_str(instance, route, out):
                if not (isinstance(instance, str) and instance in allowed):
                    out.append(SchemaError(route, "enum", value, schema, instance))

            return enum_str

        def enum(instance, route, out):
            if all(not equal(each, instance) for each in value):
                out.append(SchemaError(route, "enum", value, schema, instance))

        return enum

    def k_const(self, value, schema):
        def const(instance, route, out):
            if not equal(instance, value):
                out.append(SchemaError(route, "const", value, schema, instance))

        return const

    def k_pattern(self, value, schema):
        search = ecma_regex(value).search

        def pattern(instance, route, out):
            if isinstance(instance, str) and not search(instance):
                out.append(SchemaError(route, "pattern", value, schema, instance))

        return pattern

    def _bound(self, keyword: str, fails: Callable[[Any, Any], bool]):
        def build(value, schema):
            if not _is_number(value):
                raise Unsupported(f"{keyword} {value!r}")

            def bound(instance, route, out):
                if isinstance(instance, (int, float)) and not isinstance(instance, bool) and fails(instance, value):  # _is_number, inlined
                    out.append(SchemaError(route, keyword, value, schema, instance))

            return bound

        return build

    def k_minimum(self, value, schema):
        return self._bound("minimum", lambda i, v: i < v)(value, schema)

    def k_exclusiveMinimum(self, value, schema):
        return self._bound("exclusiveMinimum", lambda i, v: i <= v)(value, schema)

    def k_maximum(self, value, schema):
        return self._bound("maximum", lambda i, v: i > v)(value, schema)

    def k_exclusiveMaximum(self, value, schema):
        return self._bound("exclusiveMaximum", lambda i, v: i >= v)(value, schema)

    def _min_size(self, keyword: str, kind: type):
        def build(value, schema):
            if not _is_integer(value):
                raise Unsupported(f"{keyword} {value!r}")

            def min_size(instance, route, out):
                if isinstance(instance, kind) and len(instance) < value:
                    out.append(SchemaError(route, keyword, value, schema, instance))

            return min_size

        return build

    def k_minItems(self, value, schema):
        return self._min_size("minItems", list)(value, schema)

    def k_minLength(self, value, schema):
        return self._min_size("minLength", str)(value, schema)

    def k_minProperties(self, value, schema):
        return self._min_size("minProperties", dict)(value, schema)

    def k_uniqueItems(self, value, schema):
        if not value:
            return None

        def unique_items(instance, route, out):
            if isinstance(instance, list) and not unique(instance):
                out.append(SchemaError(route, "uniqueItems", value, schema, instance))

        return unique_items

    def k_items(self, value, schema):
        if "prefixItems" in schema:
            raise Unsupported("prefixItems")
        check = self.node(value)
        if check is None:
            return None

        def items(instance, route, out):
            if isinstance(instance, list):
                for index, item in enumerate(instance):
                    check(item, (route, index), out)

        return items

    def k_ref(self, value, schema):
        if not isinstance(value, str) or not value.startswith("#/$defs/") or "/" in value[len("#/$defs/"):]:
            raise Unsupported(f"$ref {value!r}")
        name = value[len("#/$defs/"):]
        defs = self.root.get("$defs", {})
        if name not in defs:
            raise Unsupported(f"$ref {value!r}: no such definition")
        cell = self.refs.get(value)
        if cell is None:
            cell = self.refs[value] = [None, False]
            cell[0] = self.node(defs[name])
            cell[1] = True
        if cell[1]:  # compiled: use its check itself
            return cell[0]

        # A recursive reference, met while its definition is being compiled: look it up when called.
        def ref(instance, route, out):
            check = cell[0]
            if check is not None:
                check(instance, route, out)

        return ref

    def k_oneOf(self, value, schema):
        if not isinstance(value, list) or not value:
            raise Unsupported(f"oneOf {value!r}")
        options = tuple(self.node(sub) for sub in value)

        def one_of(instance, route, out):
            valid = 0
            for check in options:
                if check is None:
                    valid += 1
                    continue
                errors: list = []
                check(instance, route, errors)
                if not errors:
                    valid += 1
            if valid != 1:
                out.append(SchemaError(route, "oneOf", value, schema, instance))

        return one_of


def compile_schema(schema: dict) -> Callable[[Any], list[SchemaError]]:
    """`errors(instance)` for `schema`; raises Unsupported for what it cannot compile."""
    if not isinstance(schema, dict):
        raise Unsupported("the schema is not an object")
    if schema.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
        raise Unsupported(f"$schema {schema['$schema']!r}")
    compiler = _Compiler(schema)
    # Compile every definition, even unreferenced ones, so an unsupported keyword anywhere is found now.
    for name in schema.get("$defs", {}):
        compiler.k_ref(f"#/$defs/{name}", schema)
    check = compiler.node(schema)

    def errors(instance: Any) -> list[SchemaError]:
        out: list[SchemaError] = []
        if check is not None:
            check(instance, None, out)
        return out

    return errors
