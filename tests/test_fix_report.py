"""What `--fix` writes and says: releases quoted as plans write them, comments kept in their
column, one line per finding resolved (so the lines add up to the count)."""

from __future__ import annotations

import re
import shutil

from conftest import FIXTURES, write

FIX = FIXTURES / "fix"


def _project(tmp_path, text: str):
    shutil.copy(FIX / "catalog.yaml", tmp_path / "catalog.yaml")
    write(tmp_path / ".planlint.yaml", "catalog: catalog.yaml\n")
    return write(tmp_path / "plans" / "plan.yaml", text)


def test_the_diff_lists_every_finding_it_counts(tmp_path, planlint):
    _project(tmp_path, (FIX / "commented.input.yaml").read_text(encoding="utf-8"))
    result = planlint("--fix", "--diff", "plans/plan.yaml", cwd=tmp_path)
    lines = [line for line in result.err.splitlines() if ": would fix " in line]
    count = int(re.search(r"Would fix (\d+) findings? in 1 file\.", result.err).group(1))
    assert count == len(lines) == 3, result.err
    assert [line.split(": would fix ")[1].split(":")[0] for line in lines] == ["PL102", "PL503", "PL502"]  # in file order
    assert "would fix PL503: by the PL502 fix (budget.max_spend '$250' -> 250, added budget.currency: USD)" in result.err


def test_a_release_is_written_quoted_and_the_comment_keeps_its_column(tmp_path, planlint):
    plan = _project(tmp_path, (FIX / "commented.input.yaml").read_text(encoding="utf-8"))
    before = plan.read_text(encoding="utf-8").splitlines()
    planlint("--fix", "plans/plan.yaml", cwd=tmp_path)
    after = plan.read_text(encoding="utf-8").splitlines()
    old = next(line for line in before if "release:" in line)
    new = next(line for line in after if "release:" in line)
    assert new.startswith('  release: "2026.11.03" ') and new.index("#") == old.index("#")
    old_spend = next(line for line in before if "max_spend:" in line)
    new_spend = next(line for line in after if "max_spend:" in line)
    assert new_spend.startswith("  max_spend: 250 ") and new_spend.index("#") == old_spend.index("#")  # shorter: padded


def test_a_comment_too_close_is_pushed_only_as_far_as_it_must(tmp_path, planlint):
    text = (FIX / "commented.input.yaml").read_text(encoding="utf-8")
    plan = _project(tmp_path, re.sub(r"release: latest +#", "release: latest  #", text))
    planlint("--fix", "plans/plan.yaml", cwd=tmp_path)
    assert '  release: "2026.11.03"  # TODO pin before approval' in plan.read_text(encoding="utf-8")


def test_only_a_release_is_written_quoted(tmp_path, planlint):
    """Releases as the plan format writes them (`release: "2026.11.03"`); a version keeps the plan's style."""
    text = (FIX / "flow.input.yaml").read_text(encoding="utf-8")
    plan = _project(tmp_path, text)
    planlint("--fix", "plans/plan.yaml", cwd=tmp_path)
    fixed = plan.read_text(encoding="utf-8")
    assert 'release: "2026.11.03",' in fixed and "version: 1.4.2}" in fixed
