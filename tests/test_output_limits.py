"""Output GitHub would drop or misread (issue 10 item 11).

* GitHub drops a step's job summary over 1 MiB whole, findings and all (320
  broken plans made 1.7 MB), and refuses a comment over 65,536 characters.
  Both are cut down to fit, always keeping the counts and the first findings,
  and say that they were.
* In Markdown, `#123`, `owner/repo#123` and `GH-123` link (and notify the
  issue) and `$...$` is math: text from a pull request must be neither.

Attacks run through the real CLI (and, for the comment, against the GitHub
imitation on 127.0.0.1); the Markdown is rendered with cmarkgfm, GitHub's
own renderer, and read as GitHub's reference filter would read its text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import write
from github_server import FakeGitHub
from plan_overlay import REFERENCE
from planlint.core.model import Finding, Report
from planlint.formats.markdown import (
    COMMENT_LIMIT,
    STICKY_MARKER,
    SUMMARY_LIMIT,
    render,
    render_summary,
    render_within,
    utf8_size,
)

TOKEN = "ghp_" + "Lm4" * 12
HOSTILE_RELEASE = "latest #123 acme/plans#45 GH-67 gh-8 $x^2$ $$y$$ $`z`$"
# What GitHub's reference filter and math would pick out of rendered text.
REFERENCES = re.compile(r"(?:^|[^\w/])#\d|[\w.-]+/[\w.-]+#\d|\bGH-\d", re.I)


def gfm(markdown: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def text_of(html: str) -> str:
    import html as html_module

    return html_module.unescape(re.sub(r"<[^>]+>", " ", html))


def bulky_report(plans: int = 320) -> Report:
    """Many broken plans in deep directories with escape-heavy names, long messages and a note per plan:
    the by-plan table alone (it lists every plan) is over 1 MiB."""
    findings = []
    for i in range(plans):
        path = f"plans/team-{i:03d}/" + "/".join(["d_*" * 60] * 8) + f"/p{i}.yaml"
        for line in (21, 22, 23):
            findings.append(Finding(
                code="PL102", name="dataset-release-floating", severity="error", path=path, line=line, column=12,
                end_line=line, end_column=18, yaml_path="dataset.release",
                message=f"dataset.release '{'@|<&$#1' * 60}' is floating"))
    notes = [f"plans/team-{i:03d}/p{i}.yaml: splits: data checks skipped: " + "\x1b[31m" * 200 for i in range(plans)]
    return Report(files=plans, findings=findings, notes=notes)


def test_the_bulky_report_would_be_dropped_whole():
    """The attack's size: rendered as before the limit (every plan, 200 findings), GitHub would drop the summary."""
    assert utf8_size(render(bulky_report())) > SUMMARY_LIMIT


def test_a_summary_fits_in_1_mib_with_counts_and_first_findings():
    report = bulky_report()
    text = render_summary(report)
    assert utf8_size(text) <= SUMMARY_LIMIT
    assert "**960 errors**, 0 warnings in 320 of 320 plans." in text
    assert "| PL102 | dataset-release-floating | error | 960 |" in text
    assert "**This report was shortened to fit GitHub's limit of 1 MiB for a job summary:**" in text
    rows = [line for line in text.splitlines() if line.startswith("| ❌ error |")]
    assert rows and "team-000" in rows[0]  # the first findings are the ones listed
    assert re.search(r"… and [\d,]+ more findings? not shown here", text)
    # Something fits however little room is left, and it still says it was cut.
    tiny = render_summary(report, 600)
    assert utf8_size(tiny) <= 600 and "**960 errors**" in tiny and "cut here to fit" in tiny


def test_a_comment_fits_in_65536_characters():
    text = render_within(bulky_report(), COMMENT_LIMIT, marker=STICKY_MARKER)
    assert len(text) <= COMMENT_LIMIT and text.startswith(STICKY_MARKER + "\n## planlint")
    assert "**960 errors**" in text and "| PL102 | dataset-release-floating | error | 960 |" in text
    assert "This report was shortened to fit" in text
    assert sum(line.startswith("| ❌ error |") for line in text.splitlines()) >= 1


def _broken_plans(tmp_path: Path, count: int) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for i in range(count):
        plan = REFERENCE.replace("name: retail-refund-window", f"name: plan-{i}").replace(
            'release: "2026.11.03"', 'release: "latest ' + "<@|&" * 100 + '"')
        write(repo / "plans" / f"p{i:03d}-{'x' * 120}.yaml", plan)
    return repo


def test_attack_320_broken_plans_on_a_step_summary_that_is_nearly_full(planlint, tmp_path, monkeypatch):
    """The real CLI under GitHub Actions: an earlier step left 1 MiB - 40 KiB in this step's summary file.
    planlint appends what fits, so GitHub keeps the summary (and the earlier step's part)."""
    repo = _broken_plans(tmp_path, 320)
    summary = write(tmp_path / "step_summary.md", "# earlier step\n" + "x" * (SUMMARY_LIMIT - 40 * 1024) + "\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = planlint("--no-cache", "plans/", cwd=repo)
    assert result.status == 1
    data = summary.read_bytes()
    assert len(data) <= SUMMARY_LIMIT
    ours = data.decode("utf-8").split("## planlint", 1)[1]
    assert "320 errors**, 0 warnings in 320 of 320 plans." in ours
    assert "| PL102 | dataset-release-floating | error | 320 |" in ours
    assert "This report was shortened to fit GitHub's limit of 1 MiB for a job summary" in ours
    assert "| ❌ error |" in ours  # the first findings are listed


def test_attack_a_huge_report_posts_a_comment_github_accepts(planlint, tmp_path, monkeypatch):
    """`planlint comment` with a report of 320 broken plans: GitHub (the imitation) gets at most 65,536 characters."""
    report = bulky_report()
    payload = {"version": 1, "files": report.files, "summary": {"errors": report.errors, "warnings": 0},
               "findings": [{k: getattr(f, k) for k in ("code", "name", "severity", "path", "line", "column", "end_line",
                                                      "end_column", "message", "yaml_path")} for f in report.findings]}
    report_file = write(tmp_path / "report.json", json.dumps(payload))
    event = write(tmp_path / "event.json", json.dumps({"number": 7, "pull_request": {"number": 7}}))
    with FakeGitHub(TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        monkeypatch.setenv("GITHUB_REPOSITORY", "acme/plans")
        monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        result = planlint("comment", "--report", report_file)
        assert result.status == 0 and "created the comment" in result.err, result
        body = github.comments[0]["body"]
    assert len(body) <= 65536 and "**960 errors**" in body
    assert "This report was shortened to fit GitHub's limit of 65,536 characters for a comment" in body


# --------------------------------------------------------------------------- references and math


@pytest.mark.parametrize("how", ["summary", "comment"])
def test_attack_references_and_math_in_plan_values_stay_plain_text(planlint, tmp_path, how):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "plans" / "a.yaml", REFERENCE.replace('release: "2026.11.03"', f'release: "{HOSTILE_RELEASE}"'))
    if how == "summary":
        planlint("plans/", "--summary", "summary.md", cwd=repo)
        markdown = (repo / "summary.md").read_text(encoding="utf-8")
    else:
        planlint("plans/", "--format", "json", "--output", "report.json", cwd=repo)
        markdown = planlint("comment", "--report", "report.json", "--dry-run", cwd=repo).out
    assert "is floating" in markdown
    # Math: no dollar sign reaches the Markdown parser; each is an entity, which reads as "$".
    assert "$" not in markdown and "&#36;x^2&#36;" in markdown
    text = text_of(gfm(markdown))
    assert "$x^2$" in text  # what a reader sees
    # References: GitHub links #123, owner/repo#123 and GH-123 in rendered text; a zero-width space breaks each.
    assert REFERENCES.findall(text) == [], REFERENCES.findall(text)
    visible = text.replace("\u200b", "")
    assert "#123" in visible and "acme/plans#45" in visible and "GH-67" in visible and "gh-8" in visible


def test_the_reference_pattern_would_catch_them():
    """The check above can fail: unescaped, the same text holds every kind of reference."""
    assert len(REFERENCES.findall(text_of(gfm(f"x {HOSTILE_RELEASE}")))) == 4
