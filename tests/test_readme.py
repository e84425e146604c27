"""The README's rule table is generated from the registry and cannot drift."""

import re

from conftest import ROOT
from planlint.cli import rules_text


def test_readme_rule_table_matches_registry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- rules:start -->\n(.*?)<!-- rules:end -->", readme, re.S)
    assert match, "README lost its rules markers"
    assert match.group(1) == rules_text("markdown"), "run: python scripts/update_readme.py"


def test_packaged_schema_is_the_published_one():
    published = (ROOT / "schemas" / "plan.schema.json").read_text(encoding="utf-8")
    packaged = (ROOT / "src" / "planlint" / "data" / "plan.schema.json").read_text(encoding="utf-8")
    assert packaged == published, "copy schemas/plan.schema.json to src/planlint/data/ (python scripts/update_readme.py does it)"


def test_readme_pins_planlint_to_a_commit_not_to_a_tag_that_does_not_exist():
    """No release is tagged yet: `rev: v0.1.0` made pre-commit fail with "pathspec 'v0.1.0' did not match"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    uses = re.findall(r"^\s+(?:- )?uses: planlint/planlint@(\S+)(.*)", readme, re.M)
    revs = re.findall(r"repo: https://github\.com/planlint/planlint\n\s+rev: (\S+)(.*)", readme)
    assert uses and revs
    for ref, comment in uses + revs:
        assert ref == "PLANLINT_COMMIT_SHA" or re.fullmatch(r"[0-9a-f]{40}", ref), ref
        assert not re.search(r"\bv\d+\.\d+", comment), comment  # no comment naming a release that does not exist
    assert "planlint --version" in readme
