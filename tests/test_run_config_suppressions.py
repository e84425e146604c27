"""Suppressions in run configs: only real TOML comments suppress, PL708 none, and every one a pull
request adds is shown.

Attacks, end to end on real git repositories and the real CLI (`--diff-base`),
against the outputs a reviewer reads: the JSON report, the job summary and
the pull-request comment (`planlint comment --dry-run`).
"""

from __future__ import annotations

import pytest

from conftest import write
from test_running_configs import edit, repository
from test_diff_mode import hermetic_git  # noqa: F401 - an autouse fixture
from test_diff_mode import commit, git

pytestmark = pytest.mark.integration

CONFIG = "configs/training/retail.toml"
OTHER_MODEL = ('model_path = "Qwen/Qwen3-8B"', 'model_path = "Qwen/Qwen3-4B"')  # PL903 (drift) and, while running, PL708


def codes(result) -> list[tuple[str, str]]:
    return sorted((f["path"], f["code"]) for f in result.json["findings"])


def test_attack_a_toml_string_holding_a_suppression_silences_nothing(tmp_path, planlint):
    repo, _ = repository(tmp_path)
    edit(repo, CONFIG, *OTHER_MODEL)
    edit(repo, CONFIG, 'LOG_LEVEL = "INFO"', 'LOG_LEVEL = "INFO # planlint: disable-file=PL708,PL903 -- tuned"')
    commit(repo, "a string that looks like a comment")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    assert result.status == 1 and codes(result) == [(CONFIG, "PL708"), (CONFIG, "PL903")], result.out
    assert result.json["suppressions_added"] == []
    plain = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)  # the same holds without --diff-base
    assert codes(plain) == [(CONFIG, "PL903")], plain.out
    # Multi-line strings, literal strings and quoted keys are values too.
    for text in ('NOTE = """\n# planlint: disable-file=PL903 -- x\n"""', "NOTE = '# planlint: disable-file=PL903 -- x'",
                 '"# planlint: disable-file=PL903 -- x" = "y"'):
        write(repo / CONFIG, (repo / CONFIG).read_text(encoding="utf-8").replace("[secrets]", text + "\n\n[secrets]", 1)
              if "NOTE" not in text else (repo / CONFIG).read_text(encoding="utf-8").replace('DEFAULT_REGION = "us-west-2"', text, 1))
        assert ("configs/training/retail.toml", "PL903") in codes(planlint("--format", "json", "--no-cache", "plans/", cwd=repo)), text
        commit(repo, "another try")


def test_attack_a_real_toml_comment_does_not_silence_pl708_and_is_shown(tmp_path, planlint):
    repo, _ = repository(tmp_path)
    edit(repo, CONFIG, *OTHER_MODEL)
    text = (repo / CONFIG).read_text(encoding="utf-8")
    write(repo / CONFIG, "# planlint: disable-file=PL708,PL903 -- the smaller model is fine\n" + text)
    commit(repo, "silence the gate")
    report, summary = tmp_path / "report.json", tmp_path / "summary.md"
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", "--output", f"json={report}", "--summary", str(summary), cwd=repo)
    assert result.status == 1 and (CONFIG, "PL708") in codes(result) and (CONFIG, "PL903") not in codes(result), result.out
    assert result.json["suppressions_added"] == [{
        "path": CONFIG, "line": 1, "kind": "disable-file", "codes": ["PL708", "PL903"],
        "reason": "the smaller model is fine", "silences": ["PL903"],
    }]
    row = "| configs/training/retail.toml:1 | disable-file=PL708,PL903 | the smaller model is fine | PL903 |"
    assert row in summary.read_text(encoding="utf-8")
    comment = planlint("comment", "--report", str(report), "--dry-run")
    assert comment.status == 0 and row in comment.out


def test_only_the_suppressions_the_pull_request_adds_are_listed(tmp_path, planlint):
    repo, _ = repository(tmp_path, status="approved")
    text = (repo / CONFIG).read_text(encoding="utf-8")
    write(repo / CONFIG, text.replace("[training]", "# planlint: disable=PL903 -- a distilled model\n[training]"))
    commit(repo, "a suppression in the pull request")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    assert [(entry["path"], entry["codes"]) for entry in result.json["suppressions_added"]] == [(CONFIG, ["PL903"])]
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "pr")
    git(repo, "checkout", "-q", "-b", "pr2")
    edit(repo, CONFIG, "lr = 1e-5", "lr = 2e-5")
    commit(repo, "the suppression was there before")
    assert planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo).json["suppressions_added"] == []
