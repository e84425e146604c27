"""A short deterministic fuzz run (see tests/fuzz/harness.py for the long one)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from harness import CORPUS, CRASHERS, HOSTILE_STRINGS, YAML_BITS, run_pipeline, to_yaml  # noqa: E402
from planlint.core.loader import load_text  # noqa: E402

EXAMPLES = int(os.environ.get("PLANLINT_FUZZ_EXAMPLES", "150"))
LONG_RUN = "PLANLINT_FUZZ_EXAMPLES" in os.environ
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=not LONG_RUN,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

CORPUS_TEXTS = [p.read_bytes() for p in CORPUS]
CORPUS_DATA = [load_text(t.decode()).data for t in CORPUS_TEXTS]
CORPUS_DATA = [d for d in CORPUS_DATA if isinstance(d, dict)]


@st.composite
def byte_mutations(draw):
    data = bytearray(draw(st.sampled_from(CORPUS_TEXTS)))
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.integers(0, 4))
        pos = draw(st.integers(0, len(data)))
        if op == 0:  # insert YAML syntax
            data[pos:pos] = draw(st.sampled_from(YAML_BITS))
        elif op == 1:  # delete a run
            del data[pos : pos + draw(st.integers(1, 40))]
        elif op == 2:  # random bytes
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == 3:  # duplicate a line
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i])
            data = bytearray(b"\n".join(lines))
        else:  # re-indent a line
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines[i] = b" " * draw(st.integers(0, 6)) + lines[i].lstrip()
            data = bytearray(b"\n".join(lines))
    return bytes(data)


leaf = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=30),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
)
values = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["id", "version", "path", "release", "x-a", "name", "type", "tasks"]) | st.text(max_size=8), inner, max_size=4)), max_leaves=12)


def _routes(node, route=()):
    yield route
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _routes(v, route + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _routes(v, route + (i,))


@st.composite
def structure_mutations(draw):
    import copy

    plan = copy.deepcopy(draw(st.sampled_from(CORPUS_DATA)))
    for _ in range(draw(st.integers(1, 4))):
        routes = [r for r in _routes(plan) if r]
        route = draw(st.sampled_from(routes))
        parent = plan
        for part in route[:-1]:
            parent = parent[part]
        action = draw(st.integers(0, 2))
        if action == 0:
            parent[route[-1]] = draw(values)
        elif action == 1 and isinstance(parent, dict):
            del parent[route[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = draw(values)
    style = draw(st.booleans())
    import json

    text = to_yaml(plan) if style else json.dumps(plan)
    return text.encode("utf-8", "surrogatepass")


@FUZZ
@given(byte_mutations())
def test_fuzz_bytes(content):
    run_pipeline(content)


@FUZZ
@given(structure_mutations())
def test_fuzz_structure(content):
    run_pipeline(content)


def test_crashers_stay_fixed():
    """Inputs that once crashed a part of the pipeline (kept as regression fixtures)."""
    assert CRASHERS, "tests/fuzz/crashers/ holds the regression inputs"
    for crasher in CRASHERS:
        run_pipeline(crasher.read_bytes(), name="plan.yaml")
