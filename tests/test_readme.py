"""The README cannot drift: its rule table, its references and its example output are checked."""

import re
from pathlib import Path

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


def test_readme_what_you_see_is_real_output_on_a_shipped_example(monkeypatch):
    """The "What you see" block is `planlint` run from the repository root on a plan that ships in examples/."""
    import os
    import shlex
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## What you see\n"):]
    match = re.search(r"```text\n\$ (planlint [^\n]*)\n(.*?)```", section, re.S)
    assert match, "README lost the What you see example"
    argv = shlex.split(match.group(1))[1:]
    named = [arg for arg in argv if not arg.startswith("-")]
    assert named and all(arg.startswith("examples/") and (ROOT / arg).is_file() for arg in named), named
    assert not any((ROOT / "plans" / Path(arg).name).exists() for arg in named)  # kept out of plans/
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "FORCE_COLOR")}
    env.update(NO_COLOR="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-m", "planlint", "--no-cache", *argv], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr
    assert proc.stdout == match.group(2), "update the README's What you see block with this output:\n" + proc.stdout


def test_the_broken_example_stays_out_of_plans(planlint):
    """`planlint plans/` (the README's first command) stays clean; the example is the broken one."""
    assert planlint("plans/", "--no-cache", cwd=ROOT).status == 0
    assert planlint("examples/", "--no-cache", cwd=ROOT).status == 1
