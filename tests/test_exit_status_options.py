"""`--exit-zero` and `--fail-on error|warning`: what makes the exit status 1 (ruff's habits)."""

from __future__ import annotations

import pytest

from conftest import write
from plan_overlay import REFERENCE

WARNING_ONLY = REFERENCE.replace("    frozen: true\n", "    frozen: false\n", 1)  # PL205, a warning
WITH_ERROR = REFERENCE.replace('release: "2026.11.03"', "release: latest", 1)  # PL102, an error


@pytest.fixture
def plans(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "warning.yaml", WARNING_ONLY)
    write(tmp_path / "error.yaml", WITH_ERROR.replace("name: retail-refund-window", "name: other", 1))
    write(tmp_path / "clean.yaml", REFERENCE.replace("name: retail-refund-window", "name: clean", 1))
    return tmp_path


@pytest.mark.parametrize(
    ("args", "warning", "error", "clean"),
    [
        ((), 0, 1, 0),
        (("--fail-on", "error"), 0, 1, 0),
        (("--fail-on", "warning"), 1, 1, 0),
        (("--exit-zero",), 0, 0, 0),
        (("--exit-zero", "--fail-on", "warning"), 0, 0, 0),
    ],
)
def test_exit_status(plans, planlint, args, warning, error, clean):
    for name, status in (("warning.yaml", warning), ("error.yaml", error), ("clean.yaml", clean)):
        result = planlint(*args, "--no-cache", name, cwd=plans)
        assert result.status == status, (name, result)


def test_exit_zero_still_reports_and_still_fails_on_usage_errors(plans, planlint):
    result = planlint("--exit-zero", "--no-cache", "error.yaml", cwd=plans)
    assert result.status == 0 and "PL102" in result.out and "1 error" in result.out
    assert planlint("--exit-zero", "missing.yaml", cwd=plans).status == 2
    assert planlint("--fail-on", "never", "error.yaml", cwd=plans).status == 2  # error | warning; --exit-zero is "never"


def test_exit_zero_with_fix_diff(plans, planlint):
    assert planlint("--fix", "--diff", "error.yaml", cwd=plans).status == 0  # no catalog: nothing to pin to
    write(plans / "catalog.yaml", 'datasets: {retail-refunds: {releases: ["2026.11.03"]}}\n')
    write(plans / ".planlint.yaml", "catalog: catalog.yaml\n")
    assert planlint("--fix", "--diff", "error.yaml", cwd=plans).status == 1
    result = planlint("--fix", "--diff", "--exit-zero", "error.yaml", cwd=plans)
    assert result.status == 0 and "+  release:" in result.out


def test_help_documents_the_flags(planlint):
    result = planlint("--help")
    text = " ".join(result.out.split())  # argparse wraps to the terminal
    for flag in ("--exit-zero", "--fail-on", "--stdin-filename", "--changed-files", "gitlab", "per-file-ignores", "{STATUS: error|warning}"):
        assert flag in text, flag
