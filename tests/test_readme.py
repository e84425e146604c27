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
