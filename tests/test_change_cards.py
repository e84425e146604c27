"""Change cards and committed spend in diff mode (issue 15), on real git repositories.

A pull request's meaning, as a reviewer reads it: for each changed plan its
status transition and the fields that matter, old -> new, in the Markdown
summary, the sticky comment (rendered from the JSON report) and JSON; and the
committed spend per currency at the base and at head.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import write
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration

DRAFT_600 = {"max_spend: 250": "max_spend: 600", "estimated_cost: 180": "estimated_cost: 500"}


def pull_request(tmp_path, base: dict[str, str], head: dict[str, str | None]):
    """Commit `base` on main, then `head` (None deletes) on a branch. Returns the repository."""
    repo = new_repo(tmp_path / "repo")
    for rel, text in base.items():
        write(repo / rel, text)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    for rel, text in head.items():
        if text is None:
            git(repo, "rm", "-q", rel)
        else:
            write(repo / rel, text)
    commit(repo, "pull request")
    return repo


def done_when_repo(tmp_path):
    """status draft -> approved, max_spend 600 -> 1,600, a grader re-pinned; 10,800 USD already committed."""
    base = {
        "plans/retail.yaml": plan("retail-refund-window", status="draft", **DRAFT_600),
        "plans/search.yaml": plan("search-ranking", status="running", **{"max_spend: 250": "max_spend: 10800"}),
        "plans/done.yaml": plan("done-plan", status="completed", **{"max_spend: 250": "max_spend: 5000"}),
    }
    head = {"plans/retail.yaml": plan(
        "retail-refund-window", status="approved",
        **{"max_spend: 250": "max_spend: 1600", "estimated_cost: 180": "estimated_cost: 500",
           "    version: 1.4.2": "    version: 1.4.3", "db-state: 1.4.2": "db-state: 1.4.3"},
    )}
    return pull_request(tmp_path, base, head)


EXPECTED_CARD = {
    "path": "plans/retail.yaml",
    "plan": "retail-refund-window",
    "change": "changed",
    "status": ["draft", "approved"],
    "fields": [
        {"yaml_path": "graders[0].version", "old": "1.4.2", "new": "1.4.3"},
        {"yaml_path": "budget.max_spend", "old": 600, "new": 1600},
    ],
}


def test_card_and_committed_spend_in_json_markdown_and_comment(tmp_path, planlint):
    repo = done_when_repo(tmp_path)
    summary = tmp_path / "summary.md"
    result = planlint("--diff-base", "main", "--format", "json", "--summary", summary, "--no-cache", cwd=repo)
    assert result.status == 1, result  # PL703: the cap rose, approved_by did not change
    report = result.json
    assert report["changes"] == [EXPECTED_CARD]
    assert report["committed_spend"] == {"USD": {"base": 10800, "head": 12400, "delta": 1600}}
    # PL703: the cap rose with the same approver; PL706: the reward grader was re-pinned
    # while baseline.result stayed (issue 12, item 4).
    assert report["version"] == 1 and {f["code"] for f in report["findings"]} == {"PL703", "PL706"}

    markdown = summary.read_text(encoding="utf-8")
    assert "💰 This pull request raises committed spend by 1,600 USD, to 12,400 USD." in markdown
    card = markdown[markdown.index("**plans/retail.yaml · retail-refund-window**"):].split("\n\n")
    assert card[0] == "**plans/retail.yaml · retail-refund-window** · changed · status draft → approved"
    assert card[1].splitlines() == [
        "| field | base → head |",
        "|---|---|",
        "| graders\\[0\\].version | 1.4.2 → 1.4.3 |",
        "| budget.max\\_spend | 600 → 1,600 |",
    ]

    # The sticky comment is rendered from the JSON report: the same card, the same sentence.
    (tmp_path / "report.json").write_text(result.out, encoding="utf-8")
    comment = planlint("comment", "--report", tmp_path / "report.json", "--dry-run")
    assert comment.status == 0, comment
    assert "💰 This pull request raises committed spend by 1,600 USD, to 12,400 USD." in comment.out
    assert "| budget.max\\_spend | 600 → 1,600 |" in comment.out and "status draft → approved" in comment.out


def test_plain_runs_have_no_change_keys(tmp_path, planlint):
    repo = done_when_repo(tmp_path)
    report = planlint("--format", "json", "--no-cache", "plans/", cwd=repo).json
    assert "changes" not in report and "committed_spend" not in report


def test_added_removed_renamed_and_unchanged_fields(tmp_path, planlint):
    base = {
        "plans/gone.yaml": plan("gone", status="running"),
        "plans/moving.yaml": plan("moving", status="completed"),
        "plans/notes.yaml": plan("notes"),
    }
    head = {
        "plans/gone.yaml": None,
        "plans/new.yaml": plan("new", status="draft"),
        "plans/notes.yaml": plan("notes", **{"Refund only eligible orders": "Refund eligible orders only"}),
    }
    repo = pull_request(tmp_path, base, head)
    git(repo, "mv", "plans/moving.yaml", "plans/archive.yaml")
    write(repo / "plans" / "archive.yaml", plan("moving", status="completed", **{"max_steps: 400": "max_steps: 500"}))
    report = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo).json
    cards = {c["path"]: c for c in report["changes"]}
    assert sorted(cards) == ["plans/archive.yaml", "plans/gone.yaml", "plans/new.yaml", "plans/notes.yaml"]
    assert {p: c["change"] for p, c in cards.items()} == {
        "plans/archive.yaml": "renamed", "plans/gone.yaml": "removed", "plans/new.yaml": "added", "plans/notes.yaml": "changed",
    }
    assert cards["plans/archive.yaml"]["status"] == ["completed", "completed"]
    assert cards["plans/archive.yaml"]["fields"] == [{"yaml_path": "decision.stopping.max_steps", "old": 400, "new": 500}]
    assert cards["plans/notes.yaml"]["fields"] == []  # behavior.summary is not a field a reviewer tracks here
    gone = cards["plans/gone.yaml"]
    assert gone["status"] == ["running", None] and gone["plan"] == "gone"
    assert {"yaml_path": "budget.max_spend", "old": 250, "new": None} in gone["fields"]
    assert {"yaml_path": "dataset.release", "old": "2026.11.03", "new": None} in gone["fields"]
    new = cards["plans/new.yaml"]
    assert new["status"] == [None, "draft"]
    assert {"yaml_path": "base_model.revision", "old": None, "new": "9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345"} in new["fields"]
    assert {"yaml_path": "splits.boundary.cutoff", "old": None, "new": "2026-08-01"} in new["fields"]
    # 250 USD of the running plan is gone; the draft and the completed plan commit nothing; notes stays approved
    assert report["committed_spend"] == {"USD": {"base": 500, "head": 250, "delta": -250}}


def test_missing_inputs_and_numbers_as_written(tmp_path, planlint):
    base = {"plans/a.yaml": plan("a", **{'release: "2026.11.03"': "release: 2026.10"})}
    head = {"plans/a.yaml": plan("a", **{
        'release: "2026.11.03"': "release: 2026.1",
        "  result: {metric: pass@1, value: 0.41, rollouts: 64}": "  status: planned\n  next_step: 64 rollouts on eval",
    })}
    repo = pull_request(tmp_path, base, head)
    card, = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo).json["changes"]
    assert card["fields"] == [
        {"yaml_path": "dataset.release", "old": "2026.10", "new": "2026.1"},
        {"yaml_path": "baseline.status", "old": None, "new": "planned"},
        {"yaml_path": "baseline.result.metric", "old": "pass@1", "new": None},
        {"yaml_path": "baseline.result.value", "old": 0.41, "new": None},
        {"yaml_path": "baseline.result.rollouts", "old": 64, "new": None},
    ]


def test_long_cards_are_collapsed_and_values_cannot_inject_markup(tmp_path, planlint):
    token = "ghp_" + "a1B2" * 9
    hostile = {
        'name: Qwen/Qwen3-8B\n  revision': 'name: "@everyone <img src=x> [x](https://evil.example) ' + token + '"\n  revision',
        "target_improvement: 0.10": "target_improvement: 0.2",
        "max_steps: 400, patience_evals: 3": "max_steps: 500, patience_evals: 4",
        "metric: pass@1\n  split: eval\n  target": "metric: pass@5\n  split: eval\n  target",
        "max_spend: 250": "max_spend: 260",
        "estimated_cost: 180": "estimated_cost: 200",
        "cutoff: 2026-08-01": "cutoff: 2026-09-01",
        "path: data/retail/train.jsonl": "path: data/retail/train-v2.jsonl",
        'approved_by: "@ml-leads"': 'approved_by: "@finance"',
    }
    repo = pull_request(tmp_path, {"plans/a.yaml": plan("a")}, {"plans/a.yaml": plan("a", **hostile)})
    summary = tmp_path / "summary.md"
    result = planlint("--diff-base", "main", "--format", "json", "--summary", summary, "--no-cache", cwd=repo)
    card, = result.json["changes"]
    assert len(card["fields"]) == 10
    assert {"yaml_path": "decision.target_improvement", "old": 0.1, "new": 0.2} in card["fields"]
    model = next(f for f in card["fields"] if f["yaml_path"] == "base_model.name")
    assert token not in json.dumps(result.json) and token not in summary.read_text(encoding="utf-8")
    assert model["new"].startswith("@everyone <img src=x>")  # JSON keeps the text (redacted), Markdown escapes it
    markdown = summary.read_text(encoding="utf-8")
    assert "<details><summary><b>plans/a.yaml · a</b> · changed · status approved · 10 fields</summary>" in markdown
    assert "</details>" in markdown
    assert not re.search(r"(?<!\\)<img", markdown) and "\\<img src=x\\>" in markdown  # shown as text, not an image
    assert "](https://" not in markdown and "@everyone" not in markdown  # no link, no mention


def test_a_comment_is_cut_to_size_keeping_the_spend_sentence(tmp_path, planlint):
    from planlint.core.model import Report
    from planlint.formats.markdown import render_within

    cards = [{"path": f"plans/p{i}.yaml", "plan": f"p{i}", "change": "added", "status": [None, "approved"],
              "fields": [{"yaml_path": f"x.f{j}", "old": None, "new": "v" * 150} for j in range(30)]} for i in range(400)]
    report = Report(files=400, changes=cards, committed_spend={"USD": {"base": 0, "head": 100000, "delta": 100000}})
    text = render_within(report, 65536)
    assert len(text) <= 65536
    assert "raises committed spend by 100,000 USD, to 100,000 USD" in text
    assert "more changed plans (the JSON report lists every change)" in text


# --------------------------------------------------------------------------- committed spend and PL507


def test_committed_spend_per_currency_and_uncounted_plans(tmp_path, planlint):
    base = {
        "plans/a.yaml": plan("a", status="running"),
        "plans/eur.yaml": plan("eur", status="approved", **{"currency: USD": "currency: EUR", "max_spend: 250": "max_spend: 900"}),
    }
    head = {
        "plans/eur.yaml": plan("eur", status="completed", **{"currency: USD": "currency: EUR", "max_spend: 250": "max_spend: 900"}),
        "plans/bad.yaml": plan("bad", status="approved", **{"max_spend: 250": 'max_spend: "$250"'}),
    }
    repo = pull_request(tmp_path, base, head)
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    assert result.json["committed_spend"] == {
        "EUR": {"base": 900, "head": 0, "delta": -900},
        "USD": {"base": 250, "head": 250, "delta": 0},
    }
    markdown = planlint("--diff-base", "main", "--format", "markdown", "--no-cache", cwd=repo).out
    assert "committed spend leaves out 1 approved or running plan(s)" in markdown  # not silent
    assert "💰 This pull request lowers committed spend by 900 EUR, to 0 EUR." in markdown
    assert "💰 This pull request leaves committed spend at 250 USD." in markdown


def test_pl507_at_the_plan_that_pushes_the_total_over(tmp_path, planlint):
    base = {
        ".planlint.yaml": "budget: {committed_limit: {USD: 12000}}\n",
        "plans/search.yaml": plan("search", status="running", **{"max_spend: 250": "max_spend: 10800"}),
        "plans/retail.yaml": plan("retail", status="draft", **DRAFT_600),
        "plans/zeta.yaml": plan("zeta", status="draft"),
    }
    head = {
        "plans/retail.yaml": plan("retail", status="approved", **{"max_spend: 250": "max_spend: 1600", "estimated_cost: 180": "estimated_cost: 500",
                                                                   'approved_by: "@ml-leads"': 'approved_by: "@cfo"'}),
        "plans/zeta.yaml": plan("zeta", status="approved"),
    }
    repo = pull_request(tmp_path, base, head)
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL507"]
    assert (finding["path"], finding["yaml_path"], finding["severity"]) == ("plans/retail.yaml", "budget.max_spend", "error")
    line = plan("retail", status="approved", **{"max_spend: 250": "max_spend: 1600"}).splitlines().index("  max_spend: 1600                      # number > 0") + 1
    assert (finding["line"], finding["column"]) == (line, 14)
    assert "12,650 USD" in finding["message"] and "12,000 USD" in finding["message"] and "1,600 USD" in finding["message"]
    assert result.json["committed_spend"]["USD"] == {"base": 10800, "head": 12650, "delta": 1850, "limit": 12000}
    markdown = planlint("--diff-base", "main", "--format", "markdown", "--no-cache", cwd=repo).out
    assert "raises committed spend by 1,850 USD, to 12,650 USD (limit 12,000 USD, exceeded)" in markdown


def test_pl507_when_the_base_is_already_over(tmp_path, planlint):
    base = {
        ".planlint.yaml": "budget: {committed_limit: {USD: 100}}\n",
        "plans/a.yaml": plan("a", status="running"),
        "plans/b.yaml": plan("b", status="draft"),
    }
    repo = pull_request(tmp_path, base, {"plans/b.yaml": plan("b", status="draft", **{"max_steps: 400": "max_steps: 300"})})
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    assert result.status == 0 and result.json["findings"] == []
    text = planlint("--diff-base", "main", "--no-cache", cwd=repo)
    assert "no plan checked in this run commits USD" in text.err  # not silent
    write(repo / "plans" / "b.yaml", plan("b", status="approved", **{"max_steps: 400": "max_steps: 300"}))
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL507"]
    assert finding["path"] == "plans/b.yaml" and "without this plan it is already 250 USD" in finding["message"]


def test_pl507_in_a_plain_run_counts_plans_in_path_order_and_can_be_suppressed(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "budget: {committed_limit: {USD: 400}}\n")
    for name in ("a", "b", "c"):
        write(tmp_path / "plans" / f"{name}.yaml", plan(name, status="running"))
    report = planlint("--format", "json", "--no-cache", cwd=tmp_path).json
    assert [(f["path"], f["code"]) for f in report["findings"]] == [("plans/b.yaml", "PL507")]
    assert "750 USD" in report["findings"][0]["message"]
    write(tmp_path / "plans" / "b.yaml", plan("b", status="running", **{
        "max_spend: 250                      # number > 0": "max_spend: 250  # planlint: disable=PL507 -- agreed with finance"}))
    report = planlint("--format", "json", cwd=tmp_path).json
    assert report["findings"] == []
    # the result cache keeps what PL507 needs
    report = planlint("--format", "json", cwd=tmp_path).json
    assert report["findings"] == []
    write(tmp_path / "plans" / "b.yaml", plan("b", status="running"))
    report = planlint("--format", "json", cwd=tmp_path).json
    assert [(f["path"], f["code"]) for f in report["findings"]] == [("plans/b.yaml", "PL507")]


@pytest.mark.parametrize("setting, problem", [
    ("budget: {committed_limit: {usd: 100}}", "budget.committed_limit: usd: expected a 3-letter currency code"),
    ("budget: {committed_limit: {USD: -1}}", "budget.committed_limit: USD: expected"),
    ("budget: {committed: 1}", "budget: expected a mapping with committed_limit"),
    ("budget: [1]", "budget: expected a mapping"),
    ("approvers: {'@org/team': alice bob}", "approvers: '@org/team': expected a list of GitHub logins"),
    ("approvers: {'@org/../x': [alice]}", "approvers: '@org/../x': expected a team"),
    ("approvers: [a]", "approvers: expected a mapping"),
])
def test_config_errors(setting, problem, tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", setting + "\n")
    write(tmp_path / "plans" / "a.yaml", plan("a"))
    result = planlint("--no-cache", cwd=tmp_path)
    assert result.status == 2 and problem in result.err, result


# --------------------------------------------------------------------------- the README shows a real card


def test_readme_shows_the_real_card(tmp_path, planlint):
    """The README's example card is this run's real Markdown (quoted): regenerate it from the message on failure."""
    import re

    from conftest import ROOT

    repo = done_when_repo(tmp_path)
    write(repo / ".planlint.yaml", "budget: {committed_limit: {USD: 20000}}\n")
    git(repo, "checkout", "-q", "main")
    commit(repo, "config")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "--no-edit", "main")
    markdown = planlint("--diff-base", "main", "--format", "markdown", "--no-cache", cwd=repo).out
    section = markdown[markdown.index("### What this pull request changes"):markdown.index("### By rule")].rstrip("\n")
    block = "\n".join(("> " + line).rstrip() for line in section.splitlines()) + "\n"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- card:start -->\n(.*?)<!-- card:end -->", readme, re.S)
    assert match, "README lost its card markers"
    assert match.group(1) == block, "README card is stale; put this between the card markers:\n" + block


def test_a_collapsed_cards_title_cannot_link_mention_or_typeset():
    from planlint.core.model import Report
    from planlint.formats.markdown import render

    card = {"path": "plans/fix-#12-GH-7-$x$-@team.yaml", "plan": "p", "change": "added", "status": [None, "draft"],
            "fields": [{"yaml_path": f"x.f{j}", "old": None, "new": j} for j in range(9)]}
    text = render(Report(files=1, changes=[card], committed_spend={}))
    (title,) = [line for line in text.splitlines() if line.startswith("<details>")]
    assert "#12" not in title and "GH-7" not in title and "$x$" not in title and "@team" not in title
    assert "#\u200b12" in title and "GH-\u200b7" in title and "&#36;x&#36;" in title and "@\u200bteam" in title


def test_the_plans_missing_inputs_are_a_field_of_the_card(tmp_path, planlint):
    """Issue 15 lists "missing inputs" among the fields a reviewer sees: the plan's `missing_inputs` list (issue 13)."""
    base = {"plans/a.yaml": plan("a", status="draft") + "missing_inputs: [price quote for the hosted runtime]\n"}
    head = {"plans/a.yaml": plan("a", status="draft") + "missing_inputs: [price quote for the hosted runtime, baseline on 2026.11.03]\n",
            "plans/b.yaml": plan("b", status="draft") + "missing_inputs: [baseline on 2026.11.03]\n"}
    repo = pull_request(tmp_path, base, head)
    a, b = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo).json["changes"]
    assert a["fields"] == [{"yaml_path": "missing_inputs", "old": ["price quote for the hosted runtime"],
                            "new": ["price quote for the hosted runtime", "baseline on 2026.11.03"]}]
    assert b["change"] == "added" and b["fields"][-1] == {"yaml_path": "missing_inputs", "old": None, "new": ["baseline on 2026.11.03"]}


def test_pl507_for_a_named_file_counts_the_repositorys_other_plans(tmp_path, planlint):
    """The pre-commit hook names only the staged plan: the committed plans under plans/ still count for PL507."""
    repo = new_repo(tmp_path / "repo")
    write(repo / ".planlint.yaml", "budget: {committed_limit: {USD: 12000}}\n")
    write(repo / "plans" / "search.yaml", plan("search-ranking", status="running", **{"max_spend: 250": "max_spend: 10800"}))
    done = plan("done-plan", status="completed", **{"max_spend: 250": "max_spend: 5000"}) + "outcome: {value: 0.55, verdict: met}\n"  # PL615
    write(repo / "plans" / "done.yaml", done)
    write(repo / "plans" / "retail.yaml", plan("retail-refund-window", status="draft"))
    commit(repo, "base")
    write(repo / "plans" / "retail.yaml", plan("retail-refund-window", status="approved", **{"max_spend: 250": "max_spend: 1600"}))
    report = planlint("--format", "json", "--no-cache", "plans/retail.yaml", cwd=repo).json
    assert [(f["path"], f["code"], f["yaml_path"]) for f in report["findings"]] == [("plans/retail.yaml", "PL507", "budget.max_spend")]
    assert "12,400 USD" in report["findings"][0]["message"]
    # the same total as a full run (which counts in path order, so reports it at plans/search.yaml)
    full = planlint("--format", "json", "--no-cache", "plans/", cwd=repo).json
    assert [f["code"] for f in full["findings"]] == ["PL507"] and "12,400 USD" in full["findings"][0]["message"]
    # a plan that commits nothing is not reported, whatever the others commit
    write(repo / "plans" / "retail.yaml", plan("retail-refund-window", status="draft", **{"max_spend: 250": "max_spend: 1600"}))
    assert planlint("--format", "json", "--no-cache", "plans/retail.yaml", cwd=repo).json["findings"] == []
