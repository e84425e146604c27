"""`planlint init`: a commented plan that fails only until the author decides."""

from __future__ import annotations

import re

import pytest

# What the template leaves to the author, by method.
UNDECIDED = {"grpo": {"PL404", "PL501"}, "sft": {"PL404", "PL501", "PL605"}}


def _codes(planlint, path, cwd):
    result = planlint("--format", "json", path, cwd=cwd)
    return result, {f["code"] for f in result.json["findings"]}


@pytest.mark.parametrize("method", sorted(UNDECIDED))
def test_template_fails_only_on_the_decisions_left_open(method, tmp_path, planlint):
    result = planlint("init", "refund-window", "--method", method, cwd=tmp_path)
    assert result.status == 0, result
    assert result.out.startswith(f"Wrote plans/refund-window.yaml ({method}).")
    plan = tmp_path / "plans" / "refund-window.yaml"
    text = plan.read_text(encoding="utf-8")
    assert "  name: refund-window " in text and f"  type: {method} " in text
    assert "planlint plans/refund-window.yaml" in text
    assert text.count("#") > 20, "the template explains itself in comments"
    lint, codes = _codes(planlint, "plans/refund-window.yaml", tmp_path)
    assert lint.status == 1
    # The blanks are PL008, as warnings only while the plan is a draft; in particular no PL003.
    assert codes == UNDECIDED[method] | {"PL008"}, lint.json["findings"]
    assert {f["severity"] for f in lint.json["findings"] if f["code"] == "PL008"} == {"warning"}
    for placeholder in ("revision", "release", "version", "group_key", "owner"):
        assert any(f["code"] == "PL008" and f["yaml_path"].endswith(placeholder) for f in lint.json["findings"]), placeholder
    # The decision rule is the author's: the template sets no target and no stopping limit, only blanks PL008 reports.
    for placeholder in ("decision.target_improvement", "decision.stopping.max_steps", "decision.stopping.patience_evals"):
        assert [f["code"] for f in lint.json["findings"] if f["yaml_path"] == placeholder] == ["PL008"], placeholder
    assert not re.search(r"^  target_improvement: [0-9]|max_steps: [0-9]|patience_evals: [0-9]", text, re.M)
    # Past draft, every blank left is an error.
    plan.write_text(text.replace("  status: draft ", "  status: running "), encoding="utf-8")
    lint, codes = _codes(planlint, "plans/refund-window.yaml", tmp_path)
    assert {f["severity"] for f in lint.json["findings"] if f["code"] == "PL008"} == {"error"}


@pytest.mark.parametrize("method", sorted(UNDECIDED))
def test_template_passes_once_the_decisions_are_made(method, tmp_path, planlint):
    planlint("init", "--method", method, cwd=tmp_path)
    plan = tmp_path / "plans" / "new-experiment.yaml"
    text = plan.read_text(encoding="utf-8")
    text = re.sub(r"\n  # result: ", "\n  result: ", text)
    text = re.sub(r"\n  # max_spend: ", "\n  max_spend: ", text)
    text = text.replace("    reviewed: false ", "    reviewed: true  ")
    plan.write_text(text, encoding="utf-8")
    lint, codes = _codes(planlint, "plans/new-experiment.yaml", tmp_path)
    assert lint.status == 0 and codes == {"PL008"}, lint  # the blanks, as warnings while a draft


def test_refuses_to_overwrite(tmp_path, planlint):
    assert planlint("init", "x1", cwd=tmp_path).status == 0
    plan = tmp_path / "plans" / "x1.yaml"
    plan.write_text("my edits\n", encoding="utf-8")
    result = planlint("init", "x1", "--method", "sft", cwd=tmp_path)
    assert result.status == 2
    assert result.err == "planlint: error: plans/x1.yaml already exists: edit it, or choose another NAME\n"
    assert plan.read_text(encoding="utf-8") == "my edits\n"


@pytest.mark.parametrize("name", ["Refund", "répertoire", "refund_window", "a" * 64, "../escape", "x.yaml", ""])
def test_name_must_be_a_slug(name, tmp_path, planlint):
    result = planlint("init", name, cwd=tmp_path)
    assert result.status == 2 and "is not a valid plan name" in result.err
    assert not (tmp_path / "plans").exists()


def test_dir_chooses_another_directory(tmp_path, planlint):
    result = planlint("init", "exp-2", "--dir", "experiments/q3", cwd=tmp_path)
    assert result.status == 0
    assert (tmp_path / "experiments" / "q3" / "exp-2.yaml").is_file()
    assert "planlint experiments/q3/exp-2.yaml" in result.out


def test_unknown_method_is_a_usage_error(tmp_path, planlint):
    result = planlint("init", "--method", "dpo", cwd=tmp_path)
    assert result.status == 2 and "invalid choice: 'dpo'" in result.err
    assert not (tmp_path / "plans").exists()
