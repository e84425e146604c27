"""Fuzz `--fix` (Hypothesis, deterministic in CI like tests/test_fuzz.py).

Plans with fixable values planted in odd places (quotes, flow style, CRLF,
anchors, broken YAML around them) go through the fixer. It must never raise,
never turn a readable plan into an unreadable one, leave every line it did not
fix as it was, and be idempotent; with graders under retired names too (a fix
that enables another, tests/chained_fixes.py), one run goes to the fixed point.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from chained_fixes import RETIRED, grader_renamed, installed
from conftest import FIXTURES
from planlint.core.config import Config
from planlint.core.loader import load_text
from planlint.modes.fixes import fix_paths
from planlint.rules.base import Services
from planlint.services.catalog import load_catalog
from planlint.services.publications import Publications

EXAMPLES = int(os.environ.get("PLANLINT_FUZZ_EXAMPLES", "120"))
FUZZ = settings(max_examples=EXAMPLES, derandomize="PLANLINT_FUZZ_EXAMPLES" not in os.environ, deadline=None, database=None, suppress_health_check=list(HealthCheck))

SEEDS = [p.read_bytes() for p in sorted((FIXTURES / "fix").glob("*.input.yaml"))] + [(FIXTURES / "reference_plan.yaml").read_bytes()]
CATALOG = load_catalog(FIXTURES / "fix" / "catalog.yaml", "catalog.yaml")
FIXABLE_VALUES = [b"latest", b'"latest"', b"'latest'", b"LATEST", b"1.x", b"'*'", b"current", b"", b"&a latest", b"*a", b"!!str latest",
                  b'"$250"', b"'250 USD'", b'"EUR 90"', b'"$1,000"', b"usd", b"'eur'", b"Usd", b"|\n    latest", b'"lat\\u0065st"']
_VALUE = re.compile(rb"(?m)^(\s*-?\s*(?:release|version|max_spend|currency|estimated_cost):[ ]*)([^\n#]*)")


@st.composite
def plans(draw):
    data = draw(st.sampled_from(SEEDS))
    spots = list(_VALUE.finditer(data))
    for _ in range(draw(st.integers(1, 4))):
        if not spots:
            break
        spot = draw(st.sampled_from(spots))
        data = data[: spot.start(2)] + draw(st.sampled_from(FIXABLE_VALUES)) + data[spot.end(2):]
        spots = list(_VALUE.finditer(data))
    if draw(st.booleans()):
        data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if draw(st.booleans()):
        data = data.rstrip(b"\r\n")
    if draw(st.integers(0, 3)) == 0:
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.sampled_from([b"{", b"[", b"'", b'"', b": ", b"\t", b"\n  ", b"<<: *a\n"])) + data[pos:]
    return data


def _fix(path: Path) -> str:
    config = Config(root=path.parent)
    outcome = fix_paths([str(path)], config, Services(publications=Publications(CATALOG)))
    assert outcome.fixed >= len(outcome.files)
    return outcome.summary()


def _fixes_keep_every_other_byte(content: bytes, fixed_keys: str) -> None:
    """--fix `content`: no broken file touched or made, only lines holding `fixed_keys` changed, idempotent."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.yaml"
        path.write_bytes(content)
        _fix(path)
        after = path.read_bytes()
        if after == content:
            return
        before_text, after_text = content.decode("utf-8"), after.decode("utf-8")
        assert not load_text(before_text.lstrip("\ufeff")).fatal, "a broken file was touched"
        assert not load_text(after_text.lstrip("\ufeff")).fatal, "the fix broke the file"
        assert after.startswith(b"\xef\xbb\xbf") == content.startswith(b"\xef\xbb\xbf")
        assert after.endswith(b"\n") == content.endswith(b"\n")
        # Only lines holding a fixed value change, plus at most one inserted `currency:` line.
        old_lines, new_lines = before_text.splitlines(keepends=True), after_text.splitlines(keepends=True)
        assert len(new_lines) - len(old_lines) in (0, 1)
        changed = [line for line in new_lines if line not in old_lines]
        assert all(re.search(fixed_keys, line) for line in changed), changed
        _fix(path)
        assert path.read_bytes() == after, "not idempotent: one run did not reach the fixed point"


@FUZZ
@given(plans())
def test_fix_never_breaks_a_plan(content):
    _fixes_keep_every_other_byte(content, r"release|version|max_spend|currency")


@st.composite
def chained_plans(draw):
    """plans() whose graders may go by a retired name: their versions are pinned only in the pass after the rename."""
    data = draw(plans())
    for old, new in RETIRED.items():
        if draw(st.booleans()):
            data = re.sub(rb"(name: )" + re.escape(new.encode()) + rb"(?=[\s,}])", rb"\g<1>" + old.encode(), data)
    return data


@FUZZ
@given(chained_plans())
def test_fix_in_passes_never_breaks_a_plan_and_reaches_its_fixed_point_in_one_run(content):
    """The same guarantees when one fix enables another: one run goes as far as fixes go."""
    with installed(grader_renamed):
        _fixes_keep_every_other_byte(content, r"release|version|max_spend|currency|name")
