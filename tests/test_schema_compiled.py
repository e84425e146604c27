"""The compiled schema gives exactly the PL003 problems jsonschema gives."""

from __future__ import annotations

import copy
import math
import random

import pytest

from conftest import FIXTURES, ROOT
from plan_overlay import build
from planlint.core.loader import load_text
from planlint.core.yaml_values import YamlFloat, YamlInt
from planlint.rules import RULES
from planlint.rules.schema import jsonschema_problems, plan_schema, schema_problems
from planlint.rules.schema_compiled import SchemaError, Unsupported, compile_schema, equal, unique


def _key(problem) -> tuple:
    return (repr(problem.route), problem.missing, problem.at_key, problem.message)


def assert_same(data) -> list:
    compiled = list(schema_problems(data))
    reference = list(jsonschema_problems(data))
    # jsonschema walks the extra keys of an open mapping (labels, weights) in set
    # order, which varies between processes; everything else comes in one order.
    assert sorted(map(_key, compiled)) == sorted(map(_key, reference))
    return compiled


def _plans() -> list[tuple[str, str]]:
    found = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "plans").glob("*.yaml"))]
    found += [(p.name, p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.rglob("*.yaml"))]
    for code, rule in sorted(RULES.items()):
        for part in ("fails", "passes"):
            fragment = rule.sections()[part]
            if fragment.strip():
                found.append((f"{code}-{part}", build(fragment)))
    return found


PLANS = _plans()


@pytest.mark.parametrize("name,text", PLANS, ids=[n for n, _ in PLANS])
def test_fixture_and_example_plans(name, text):
    loaded = load_text(text)
    assert_same(loaded.data)


def test_rule_examples_do_exercise_the_schema():
    """Not a vacuous comparison: some examples break the schema."""
    assert sum(1 for _, text in PLANS if list(schema_problems(load_text(text).data))) >= 3


# --------------------------------------------------------------------------- mutated plans

_ODD_VALUES = [
    None, True, False, 0, -1, 1, 7, 2.5, -0.5, 0.0, 1.0, math.nan, math.inf, -math.inf,
    "", " ", "latest", "x", "Not A Slug", "ab", "USD", "usd", "planned", "sft", "grpo", "llm_judge",
    "2026.11.03", "^1.2", "a" * 80, "-bad-start", [], [1, 1], ["a", "a"], [True, 1], [1, 1.0], ["a", 1],
    [{}], [[]], [{"a": 1}, {"a": 1}], {}, {"x-note": 1}, {"bogus": 1}, {"path": "a", "tasks": [1]},
    {"field": "split", "equals": "train"}, {"name": "m", "revision": "abc1234"},
    YamlInt(3, "0o3"), YamlFloat(2026.1, "2026.10"), YamlFloat(math.nan, ".nan"),
]


def _routes(node, route=()):
    yield route, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _routes(value, route + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _routes(value, route + (index,))


def _mutate(rng: random.Random, data: dict) -> None:
    routes = [r for r, _ in _routes(data) if r]
    route = rng.choice(routes)
    parent = data
    for part in route[:-1]:
        parent = parent[part]
    last = route[-1]
    action = rng.randrange(8)
    if action == 0:
        del parent[last]
    elif action == 1 and isinstance(parent, dict):
        typo = str(last)[:-1] or "k"
        parent[typo] = parent.pop(last)
    elif action == 2 and isinstance(parent, dict):
        parent[rng.choice(["x-extra", "bogus", "metadata", "Notes", "labels"])] = copy.deepcopy(rng.choice(_ODD_VALUES))
    elif action == 3 and isinstance(parent[last], list) and parent[last]:
        parent[last].append(copy.deepcopy(parent[last][0]))
    elif action == 4 and isinstance(parent[last], dict) and parent[last]:
        parent[last].pop(rng.choice(list(parent[last])))
    elif action == 5:
        parent[last] = [parent[last]]
    else:
        parent[last] = copy.deepcopy(rng.choice(_ODD_VALUES))


def test_hundreds_of_mutated_plans():
    rng = random.Random(20261129)
    bases = [load_text(text).data for _, text in PLANS]
    bases = [b for b in bases if isinstance(b, dict) and b]
    with_problems = 0
    for _ in range(600):
        data = copy.deepcopy(rng.choice(bases))
        for _ in range(rng.randint(1, 4)):
            if any(True for r, _ in _routes(data) if r):
                _mutate(rng, data)
        if assert_same(data):
            with_problems += 1
    assert with_problems > 300  # the mutations do break the schema, in many ways


def test_corpus_plans_of_the_benchmark():
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from corpus import make_plan
    finally:
        sys.path.remove(str(ROOT / "bench"))
    for index in range(150):
        text, _ = make_plan(7, index)
        data = load_text(text).data
        if data is not None:
            assert_same(data)


@pytest.mark.parametrize("data", [None, [], "plan", 3, {}, {"apiVersion": "planlint/v1"}], ids=repr)
def test_odd_documents(data):
    assert_same(data)


# --------------------------------------------------------------------------- the compiler itself


def test_order_follows_the_schema_like_jsonschema():
    data = load_text((FIXTURES / "reference_plan.yaml").read_text(encoding="utf-8")).data
    data["splits"]["train"] = "data/train.jsonl"
    data["method"]["type"] = "ppo"
    data["behavior"]["summary"] = ""
    assert [_key(p) for p in schema_problems(data)] == [_key(p) for p in jsonschema_problems(data)]
    # one problem, one finding: a string where a split mapping belongs fails `type` and `oneOf`; `type` speaks
    assert [p.route for p in schema_problems(data)] == [("behavior", "summary"), ("method", "type"), ("splits", "train")]


@pytest.mark.parametrize(
    "schema",
    [
        {"anyOf": [{"type": "string"}]},
        {"type": "object", "properties": {"a": {"format": "date"}}},
        {"items": [{"type": "string"}], "prefixItems": [{"type": "string"}]},
        {"$ref": "https://example.com/other.json"},
        {"$ref": "#/$defs/missing"},
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"type": "strnig"},
        {"$defs": {"unused": {"not": {}}}},
    ],
)
def test_unsupported_keywords_are_refused_at_compile_time(schema):
    with pytest.raises(Unsupported):
        compile_schema(schema)


def test_the_shipped_schema_compiles():
    errors = compile_schema(plan_schema())
    assert errors({}) and all(isinstance(e, SchemaError) for e in errors({}))


def test_fallback_to_jsonschema_when_the_compiler_refuses(monkeypatch):
    from planlint.rules import schema, schema_compiled

    def refuse(_schema):
        raise Unsupported("pretend")

    monkeypatch.setattr(schema_compiled, "compile_schema", refuse)
    schema._compiled.cache_clear()
    try:
        assert schema._compiled() is None
        data = {"apiVersion": "planlint/v1", "kind": "ExperimentPlan", "bogus": 1}
        assert list(schema.schema_problems(data)) == list(schema.jsonschema_problems(data))
        assert any("bogus" in p.message for p in schema.schema_problems(data))
    finally:
        schema._compiled.cache_clear()


def test_recursive_refs_compile():
    errors = compile_schema({"$ref": "#/$defs/tree", "$defs": {"tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/tree"}}}}})
    assert [e.absolute_path for e in errors({"child": {"child": 3}})] == [("child", "child")]


@pytest.mark.parametrize(
    "one,two,same",
    [(1, True, False), (0, False, False), (1, 1.0, True), ("1", 1, False), ([1, True], [1, 1], False), ({"a": [1]}, {"a": [1.0]}, True), (None, None, True)],
)
def test_equality_is_jsonschemas(one, two, same):
    assert equal(one, two) is same


@pytest.mark.parametrize("items,expected", [([1, True], True), ([1, 1.0], False), ([{"a": 1}, {"a": 1}], False), (["a", 1, "a"], False), ([[1], [True]], True)])
def test_uniqueness_is_jsonschemas(items, expected):
    assert unique(items) is expected
