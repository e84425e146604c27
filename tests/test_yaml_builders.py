"""The loader's two readers build the same tree: the fast one for plain documents and the full one.

`load_text` reads a plain document (no tag, anchor, alias, merge key or
duplicate key, within the limits) with the fast reader, which keeps only the
positions of routes up to SHALLOW steps, and everything else with the full
reader, which also reads a plain document again when a finding needs its
deeper positions. So wherever the fast reader accepts a text, its data must be
the full reader's, value for value and type for type (YamlInt/YamlFloat with
their source text, key order included), its positions the full reader's for
those routes, and where it refuses one (the depth limit) it must refuse it as
the full reader does. Fed the fuzz corpus, the crashers, every fixture and
example plan, and the fuzz tests' byte and structure mutations.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given

from conftest import FIXTURES, ROOT
from planlint.core import loader, yaml_build
from planlint.core.positions import Positions
from planlint.core.yaml_values import YamlFloat, YamlInt
from test_fuzz import FUZZ, byte_mutations, structure_mutations

LIMITS = loader.Limits()


def typed(value):
    """`value` in a form where equal means the same data: types, numbers' source text and key order kept."""
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [typed(v) for v in value])
    if isinstance(value, (YamlInt, YamlFloat)):
        return (type(value).__name__, value.text, repr(value))
    return (type(value).__name__, repr(value))


def outcome(read):
    """(what `read()` returned, None) or (None, the refusal as (code, message, span))."""
    try:
        return read(), None
    except yaml_build.Refused as refused:
        return None, (refused.code, refused.message, refused.span)


def disagreement(text: str) -> str | None:
    """How the fast reader's answer for `text` differs from the full reader's; None when it agrees or passes."""
    fast, fast_refusal = outcome(lambda: yaml_build.build_plain(text, LIMITS, math.inf))
    positions, problems = Positions(), []
    try:
        data, full_refusal = outcome(lambda: yaml_build.build_tree(text, LIMITS, math.inf, positions, problems, []))
    except Exception:  # noqa: BLE001 - a YAML error: the fast reader must have passed it on
        return None if fast is None and fast_refusal is None else "the fast reader accepted a text the parser rejects"
    if fast_refusal is not None:
        return None if fast_refusal == full_refusal else f"refused as {fast_refusal}, the full reader: {full_refusal}"
    if fast is None:
        return None  # not plain: the full reader reads it
    if full_refusal is not None or problems:
        return f"accepted a text the full reader refuses or reports: {full_refusal or [(p.code, p.message) for p in problems]}"
    fast_data, values, keys = fast
    if typed(fast_data) != typed(data):
        return "the data differ"
    shallow = yaml_build.SHALLOW
    expected_values = {route: span for route, span in positions.values.items() if len(route) <= shallow}
    expected_keys = {route: span for route, span in positions.keys.items() if len(route) <= shallow}
    if values != expected_values:
        return f"value positions differ at {sorted(set(values.items()) ^ set(expected_values.items()), key=str)[:3]}"
    if keys != expected_keys:
        return f"key positions differ at {sorted(set(keys.items()) ^ set(expected_keys.items()), key=str)[:3]}"
    return None


def plan_files() -> list[Path]:
    fuzz = ROOT / "tests" / "fuzz"
    files = sorted((fuzz / "corpus").glob("*.yaml")) + sorted((fuzz / "crashers").glob("*"))
    files += sorted(FIXTURES.rglob("*.yaml")) + sorted((ROOT / "examples").rglob("*.yaml")) + sorted((ROOT / "plans").rglob("*.yaml"))
    return files


def test_both_readers_agree_on_every_corpus_fixture_and_example_plan():
    accepted, problems, files = 0, [], plan_files()
    for path in files:
        text, problem = loader.decode(path.read_bytes())
        if text is None:
            continue
        found = disagreement(text)
        if found is not None:
            problems.append(f"{path.relative_to(ROOT)}: {found}")
        elif outcome(lambda: yaml_build.build_plain(text, LIMITS, math.inf))[0] is not None:
            accepted += 1
    assert not problems, "\n".join(problems)
    assert accepted > len(files) // 2  # most of them are plain: the comparison is not vacuous


@pytest.mark.parametrize(
    "text",
    [
        "a: [" + "[" * 70 + "]" * 70 + "]\n",  # too deep: both refuse it at the same bracket
        "[" + ",".join(["1"] * 100_010) + ", " + "[" * 65 + "]" * 65 + "]",  # over max_nodes before it is too deep
        "[" + ",".join(["1"] * 99_990) + ", " + "[" * 65 + "]" * 65 + "]",  # within max_nodes, then too deep
        "k: " + "9" * 5000 + "\n",  # a number over 4,300 digits
        "a: 1\nb: {c: [1, 2.50, 0x1F, .inf, -.NaN, ~, true, 'x', \"y\", 2026-08-01]}\n",
        "? a\n: 1\n'<<': 2\n\"k\": {}\n",
        "- [a, {b: c}]\n- !!str 1\n",
    ],
)
def test_both_readers_agree_at_the_edges(text):
    assert disagreement(text) is None


@FUZZ
@given(byte_mutations())
def test_both_readers_agree_on_byte_mutations(content):
    text, _ = loader.decode(content)
    if text is not None:
        assert disagreement(text) is None


@FUZZ
@given(structure_mutations())
def test_both_readers_agree_on_structure_mutations(content):
    text, _ = loader.decode(content)
    if text is not None:
        assert disagreement(text) is None
