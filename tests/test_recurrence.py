"""Recurring plans (`recurrence:`): bad cron lines in a plan, lazy loading, committed spend per
month, change cards, and `planlint init --recurring`.

The rules' own cases are fixtures (tests/fixtures/rules/recurrence_*.yaml,
tests/fixtures/diff/recurring_*.yaml); counting a schedule is
tests/test_cron_schedules.py's; this file holds what neither can say.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES, ROOT, write
from test_diff_mode import commit, git, hermetic_git, new_repo  # noqa: F401 - hermetic_git is an autouse fixture

from planlint.services.cron import month_firings

CLEAN = (FIXTURES / "rules" / "recurrence_clean.yaml").read_text(encoding="utf-8")


def recurring(name: str = "weekly", status: str = "running", **replace: str) -> str:
    text = CLEAN.replace("name: recurrence-clean", f"name: {name}").replace("status: running", f"status: {status}")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def with_schedule(schedule: str) -> str:
    return recurring(**{'schedule: "0 3 * * MON"': f"schedule: {json.dumps(schedule)}"})


# --------------------------------------------------------------------------- bad schedules in a plan


@pytest.mark.parametrize("schedule", ["61 3 * * 1", "", "@reboot", "0 0 30 2 *", "* * */20 * 1L", "x" * 300, "0 3 * * 1 2026", "\u202e0 3 * * 1"])
def test_a_bad_schedule_is_a_finding_at_the_schedule_never_a_traceback(schedule, tmp_path, planlint):
    write(tmp_path / "plans" / "weekly.yaml", with_schedule(schedule))
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path)
    assert result.status == 1 and "Traceback" not in result.err, result
    line = next(i for i, text in enumerate(with_schedule(schedule).splitlines(), 1) if text.startswith("  schedule:"))
    (finding,) = result.json["findings"]
    assert (finding["code"], finding["line"], finding["column"], finding["yaml_path"]) == ("PL508", line, 13, "recurrence.schedule")
    assert "never fires" in finding["message"] or "is not a cron expression planlint can read" in finding["message"]


@pytest.mark.parametrize("value", ["5", "[0, 3]", "{minute: 0}", "null", "true"])
def test_a_schedule_that_is_no_string_is_pl508_only(value, tmp_path, planlint):
    write(tmp_path / "plans" / "weekly.yaml", recurring(**{'schedule: "0 3 * * MON"': f"schedule: {value}"}))
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path)
    assert [(f["code"], f["yaml_path"]) for f in result.json["findings"]] == [("PL508", "recurrence.schedule")], result


# --------------------------------------------------------------------------- cronsim is loaded only for recurring plans


@pytest.mark.parametrize("plan, loaded", [("plans/retail-refund-grpo.yaml", False), ("plans/retail-refund-weekly.yaml", True)])
def test_cronsim_is_imported_only_for_a_recurring_plan(plan, loaded):
    script = (
        "import sys\n"
        "from planlint.cli import main\n"
        f"status = main(['--no-cache', '--quiet', {plan!r}])\n"
        "print(status, 'cronsim' in sys.modules, 'planlint.services.cron' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-c", script], check=False, cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.split() == ["0", str(loaded), str(loaded)], proc.stderr


def test_the_example_recurring_plan_is_clean_and_fits_its_schedule(planlint):
    result = planlint("--format", "json", "--no-cache", "plans/retail-refund-weekly.yaml", cwd=ROOT)
    assert result.status == 0 and result.json["findings"] == [], result
    text = (ROOT / "plans" / "retail-refund-weekly.yaml").read_text(encoding="utf-8")
    assert "review queue" in text and "source binding, schedules and limits" in text  # written from the guide's words
    assert month_firings("0 3 * * 1").busiest_month * 200 == 1000


# --------------------------------------------------------------------------- committed spend per month


def test_committed_spend_counts_a_recurring_plan_per_month(tmp_path, planlint):
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path / ".planlint.yaml", "budget: {committed_limit: {USD: 1500}}\n")
    write(tmp_path / "plans" / "a-one-off.yaml", (FIXTURES / "reference_plan.yaml").read_text(encoding="utf-8").replace("max_spend: 250", "max_spend: 600"))
    write(tmp_path / "plans" / "b-weekly.yaml", recurring())
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path)
    (finding,) = result.json["findings"]
    assert (finding["code"], finding["path"], finding["yaml_path"]) == ("PL507", "plans/b-weekly.yaml", "recurrence.budget.max_spend_per_month")
    assert "max_spend_per_month of recurring ones" in finding["message"]
    assert "this plan's cap of 1,000 USD a month takes it over (to 1,600 USD" in finding["message"]
    # The pre-commit hook names one plan: the repository's recurring plan still counts, per month.
    result = planlint("--format", "json", "--no-cache", "plans/a-one-off.yaml", cwd=tmp_path)
    (finding,) = result.json["findings"]
    assert (finding["path"], finding["yaml_path"]) == ("plans/a-one-off.yaml", "budget.max_spend")
    assert "without this plan it is already 1,000 USD" not in finding["message"]
    assert "is 1,600 USD, over budget.committed_limit of 1,500 USD" in finding["message"]


def test_a_draft_recurring_plan_commits_nothing(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "budget: {committed_limit: {USD: 100}}\n")
    write(tmp_path / "plans" / "weekly.yaml", recurring(status="draft"))
    assert planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path).json["findings"] == []


# --------------------------------------------------------------------------- diff mode: cards and committed spend


def _pull_request(tmp_path, base: dict[str, str], head: dict[str, str]):
    repo = new_repo(tmp_path / "repo")
    for rel, text in base.items():
        write(repo / rel, text)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    for rel, text in head.items():
        write(repo / rel, text)
    commit(repo, "pull request")
    return repo


def test_the_card_shows_the_month_and_committed_spend_counts_it(tmp_path, planlint):
    one_off = (FIXTURES / "reference_plan.yaml").read_text(encoding="utf-8").replace("max_spend: 250", "max_spend: 600")
    raised = {
        'schedule: "0 3 * * MON"': 'schedule: "0 3 * * MON,THU"',
        "max_runs_per_month: 5": "max_runs_per_month: 10",
        "max_spend_per_run: 200, max_spend_per_month: 1000": "max_spend_per_run: 200, max_spend_per_month: 1800",
        'approved_by: "@ml-leads"': 'approved_by: "@finance-ml"',
    }
    repo = _pull_request(tmp_path, {"plans/one-off.yaml": one_off, "plans/weekly.yaml": recurring()},
                         {"plans/weekly.yaml": recurring(**raised)})
    summary = tmp_path / "summary.md"
    result = planlint("--diff-base", "main", "--format", "json", "--summary", summary, "--no-cache", cwd=repo)
    assert result.status == 0, result  # a new approver: no PL703; no pull request: PL707 does not run
    (card,) = result.json["changes"]
    assert card["recurring"] == [
        {"schedule": "0 3 * * MON", "runs_per_month": 5, "max_spend_per_run": 200, "max_spend_per_month": 1000, "currency": "USD"},
        {"schedule": "0 3 * * MON,THU", "runs_per_month": 9, "max_spend_per_run": 200, "max_spend_per_month": 1800, "currency": "USD"},
    ]
    assert {"yaml_path": "recurrence.schedule", "old": "0 3 * * MON", "new": "0 3 * * MON,THU"} in card["fields"]
    assert {"yaml_path": "recurrence.budget.max_spend_per_month", "old": 1000, "new": 1800} in card["fields"]
    assert result.json["committed_spend"] == {"USD": {"base": 1600, "head": 2400, "delta": 800, "per_month": {"base": 1000, "head": 1800}}}
    markdown = summary.read_text(encoding="utf-8")
    assert ("💰 This pull request raises committed spend by 800 USD, to 2,400 USD, of which recurring plans "
            "1,000 → 1,800 USD a month (their per-month caps).") in markdown
    assert "🔁 Recurring: up to 5 runs × 200 USD, at most 1,000 USD a month → up to 9 runs × 200 USD, at most 1,800 USD a month" in markdown
    assert "| recurrence.budget.max\\_spend\\_per\\_month | 1,000 → 1,800 |" in markdown
    # The sticky comment is rendered from the JSON report: the same card.
    (tmp_path / "report.json").write_text(result.out, encoding="utf-8")
    comment = planlint("comment", "--report", tmp_path / "report.json", "--dry-run")
    assert comment.status == 0 and "🔁 Recurring: up to 5 runs" in comment.out


def test_a_one_off_card_has_no_recurring_key_and_the_spend_no_per_month(tmp_path, planlint):
    one_off = (FIXTURES / "reference_plan.yaml").read_text(encoding="utf-8")
    repo = _pull_request(tmp_path, {"plans/one-off.yaml": one_off}, {"plans/one-off.yaml": one_off.replace("max_steps: 400", "max_steps: 300")})
    report = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo).json
    assert "recurring" not in report["changes"][0] and report["committed_spend"] == {"USD": {"base": 250, "head": 250, "delta": 0}}


def test_a_card_of_hostile_figures_renders(planlint):
    from planlint.core.model import Report
    from planlint.formats.markdown import render

    cards = [{"path": "plans/x.yaml", "plan": "x", "change": "changed", "status": ["running", "running"], "fields": [],
              "recurring": recurring_value} for recurring_value in (
        [None, {"runs_per_month": True, "max_spend_per_run": "@all", "max_spend_per_month": None, "currency": "<b>"}],
        "not a list", [1, 2, 3],
    )]
    text = render(Report(files=1, changes=cards, committed_spend={"USD": {"base": 1, "head": 2, "delta": 1, "per_month": "x"}}))
    assert "🔁 Recurring: not recurring → ? runs × ? \\<b\\>, at most ? \\<b\\> a month" in text
    assert "<b>" not in text and "per_month" not in text


# --------------------------------------------------------------------------- planlint init --recurring


@pytest.mark.parametrize("method, undecided", [("grpo", {"PL404"}), ("sft", {"PL404", "PL605"})])
def test_init_recurring_writes_the_block_with_placeholders(method, undecided, tmp_path, planlint):
    result = planlint("init", "weekly", "--recurring", "--method", method, cwd=tmp_path)
    assert result.status == 0 and result.out.startswith(f"Wrote plans/weekly.yaml ({method}, recurring).")
    plan = tmp_path / "plans" / "weekly.yaml"
    text = plan.read_text(encoding="utf-8")
    assert "\nrecurrence:\n" in text and "# max_spend: 250" not in text
    lint = planlint("--format", "json", "--no-cache", "plans/weekly.yaml", cwd=tmp_path)
    codes = {f["code"] for f in lint.json["findings"]}
    assert codes == undecided | {"PL008"}, lint.json["findings"]  # no PL501: the caps are recurrence.budget's
    blanks = {f["yaml_path"] for f in lint.json["findings"] if f["code"] == "PL008"}
    assert {"recurrence.schedule", "recurrence.max_runs_per_month", "recurrence.source.dataset",
            "recurrence.budget.max_spend_per_run", "recurrence.budget.max_spend_per_month"} <= blanks
    # Decided: the schedule, the caps, the dataset and the baseline; what remains are the method template's blanks.
    decided = re.sub(r"\n  # result: ", "\n  result: ", text)
    decided = decided.replace('"TODO cron"', '"0 3 * * 1"').replace("max_runs_per_month: TODO", "max_runs_per_month: 5")
    decided = decided.replace("max_spend_per_run: TODO", "max_spend_per_run: 200").replace("max_spend_per_month: TODO", "max_spend_per_month: 1000")
    decided = decided.replace("    reviewed: false ", "    reviewed: true  ")
    plan.write_text(decided, encoding="utf-8")
    lint = planlint("--format", "json", "--no-cache", "plans/weekly.yaml", cwd=tmp_path)
    assert {f["code"] for f in lint.json["findings"]} == {"PL008"}, lint.json["findings"]
    assert not [f for f in lint.json["findings"] if f["yaml_path"].startswith("recurrence.") and f["yaml_path"] != "recurrence.source.dataset"]


def test_init_recurring_with_the_platforms_configs(tmp_path, planlint):
    result = planlint("init", "weekly", "--recurring", "--platform", "osmosis", cwd=tmp_path)
    assert result.status == 0 and "(grpo, recurring) with its Osmosis run configs" in result.out
    assert (tmp_path / "configs" / "training" / "weekly.toml").is_file()
    text = (tmp_path / "plans" / "weekly.yaml").read_text(encoding="utf-8")
    assert text.index("\nrecurrence:\n") < text.index("\nrun:\n")
