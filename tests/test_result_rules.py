"""PL611-PL615, PL108, PL407, PL310: exact positions, severities by status, the numbers in messages,
the unknown-metric note, and the counted size a data check can hand PL611."""

from __future__ import annotations

import re

import pytest
from conftest import REFERENCE_PLAN, write

from planlint.core.loader import load_text
from planlint.rules import RULES
from planlint.rules.base import Note, PlanContext
from planlint.rules.power import COUNTED_EVAL_ITEMS, proportion_metric

REF = REFERENCE_PLAN.read_text(encoding="utf-8")


def lint(planlint, tmp_path, text: str):
    write(tmp_path / "plan.yaml", text)
    result = planlint("--format", "json", "--no-cache", "plan.yaml", cwd=tmp_path)
    assert result.status in (0, 1), result
    return result


def at(text: str, needle: str) -> tuple[int, int]:
    """(line, column) of the first `needle` in `text`, 1-based."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(needle)


def sized(size: int, **extra: str) -> str:
    text = REF.replace("    frozen: true\n", f"    frozen: true\n    size: {size}\n").replace("rollouts: 64", f"rollouts: {max(size, 4000)}")
    for old, new in extra.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("status, severity", [("approved", "error"), ("running", "error"), ("draft", "warning"), ("completed", "warning")])
def test_pl611_position_numbers_and_severity(planlint, tmp_path, status, severity):
    text = sized(300, **{"status: approved": f"status: {status}"})
    if status == "completed":
        text += "outcome: {value: 0.53, verdict: met}\n"
    (finding,) = [f for f in lint(planlint, tmp_path, text).json["findings"] if f["code"] == "PL611"]
    assert (finding["line"], finding["column"]) == at(text, "0.10            # > 0")
    assert finding["severity"] == severity and finding["yaml_path"] == "decision.target_improvement"
    assert "it needs 392 items" in finding["message"] and "300 eval items (splits.eval.size) can show an improvement of 0.115 or more" in finding["message"]
    assert "paired" in finding["message"] and "Connor (1987)" in finding["message"]


def test_pl611_quiet_with_enough_items_and_the_overrides_count(planlint, tmp_path):
    assert [f["code"] for f in lint(planlint, tmp_path, sized(392)).json["findings"]] == []
    assert [f["code"] for f in lint(planlint, tmp_path, sized(391)).json["findings"]] == ["PL611"]
    stricter = sized(400, **{"  split: eval\n  target": "  split: eval\n  power: 0.9\n  target"})
    assert [f["code"] for f in lint(planlint, tmp_path, stricter).json["findings"]] == ["PL611"]


def test_pl611_unpaired_needs_389(planlint, tmp_path):
    base = {"frozen: true": "frozen: false  # planlint: disable=PL205 -- rotates"}
    assert lint(planlint, tmp_path, sized(389, **base)).json["findings"] == []
    (finding,) = lint(planlint, tmp_path, sized(388, **base)).json["findings"]
    assert finding["code"] == "PL611" and "it needs 389 items" in finding["message"] and "Fleiss" in finding["message"]


def test_pl611_a_discordance_below_the_target_can_show_nothing(planlint, tmp_path):
    text = sized(5000, **{"  split: eval\n  target": "  split: eval\n  discordance: 0.05\n  target"})
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["yaml_path"], finding["severity"]) == ("PL611", "decision.discordance", "error")
    assert (finding["line"], finding["column"]) == at(text, "0.05")
    assert "is below decision.target_improvement 0.10" in finding["message"] and "cannot hold" in finding["message"]


def test_pl611_an_unknown_metric_is_a_note(planlint, tmp_path):
    text = sized(20, **{"metric: pass@1": "metric: rouge_l"}).replace("metric: pass@1", "metric: rouge_l")
    result = lint(planlint, tmp_path, text)
    assert result.json["findings"] == []
    assert any("PL611 did not check" in note and "'rouge_l'" in note for note in result.json["notes"])


def test_pl611_uses_a_counted_size_before_the_declared_one():
    data = load_text(sized(1000)).data
    ctx = PlanContext(data=data, path="p.yaml")
    assert list(RULES["PL611"].check(ctx)) == []
    ctx = PlanContext(data=data, path="p.yaml", memo={COUNTED_EVAL_ITEMS: 40})
    (problem,) = list(RULES["PL611"].check(ctx))
    assert "40 eval items (counted in the eval split)" in problem.message


def test_pl611_without_a_number_of_items_says_nothing(planlint, tmp_path):
    result = lint(planlint, tmp_path, REF)
    assert result.json["findings"] == [] and not any("PL611" in n for n in result.json["notes"])


@pytest.mark.parametrize("name, known", [
    ("pass@1", True), ("pass@16", True), ("pass^4", True), ("Accuracy", True), ("judge_pass_rate", True),
    ("Success Rate", True), ("db_state_accuracy", True), ("win-rate", True), ("exact_match", True),
    ("error_rate", False), ("bleu", False), ("pass@0", False), ("loss", False), ("", False), (3, False),
])
def test_the_metrics_planlint_knows(name, known):
    assert proportion_metric(name) is known


def test_pl612_positions(planlint, tmp_path):
    text = REF.replace("value: 0.41", "value: 0.93").replace("target_improvement: 0.10", "target_improvement: 0.5")
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("PL612", *at(text, "0.5 "))
    assert "is 1.43" in finding["message"] and "at most 0.07 is left" in finding["message"]
    text = REF.replace("value: 0.41", "value: 41")
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["yaml_path"], finding["line"], finding["column"]) == ("PL612", "baseline.result.value", *at(text, "41, rollouts"))


def test_pl613_position(planlint, tmp_path):
    text = REF.replace("    frozen: true\n", "    frozen: true\n    size: 400\n")
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["severity"], finding["line"], finding["column"]) == ("PL613", "warning", *at(text, "64}"))


def test_pl614_without_an_evaluation_block_is_at_line_1(planlint, tmp_path):
    text = REF.replace("status: approved", "status: running").split("evaluation:")[0]
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["line"], finding["column"], finding["yaml_path"]) == ("PL614", 1, 1, "evaluation")


def test_pl614_finds_a_seed_in_the_run_config(planlint, tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "rollouts" / "r" / "main.py", "")
    toml = ('[experiment]\nrollout = "r"\nentrypoint = "main.py"\nmodel_path = "Qwen/Qwen3-8B"\ndataset = "retail-refunds"\n'
            'commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"\n')
    write(tmp_path / "configs" / "training" / "t.toml", toml)
    text = REF.replace("status: approved", "status: running").split("evaluation:")[0] + "run: {platform: osmosis, training_config: configs/training/t.toml}\n"
    # (the run rules judge this minimal workspace too: only PL614 is looked at here)
    (finding,) = [f for f in lint(planlint, tmp_path, text).json["findings"] if f["code"] == "PL614"]
    assert "'configs/training/t.toml'" in finding["message"]
    write(tmp_path / "configs" / "training" / "t.toml", toml + "[advanced]\nseed = 7\n")
    assert [f for f in lint(planlint, tmp_path, text).json["findings"] if f["code"] == "PL614"] == []


def test_pl615_missing_outcome_is_at_line_1_and_a_verdict_at_its_value(planlint, tmp_path):
    text = REF.replace("status: approved", "status: completed")
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("PL615", 1, 1)
    text += "outcome: {value: 0.49, verdict: met}\n"
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("PL615", *at(text, "met}"))
    assert "'met'" in finding["message"] and "give not_met" in finding["message"] and "0.08" in finding["message"]


def test_pl407_severity_follows_the_status(planlint, tmp_path):
    block = ("evaluation:\n  decoding: {temperature: 0.7}\n  seed: 1\n")
    baseline = "  result: {metric: pass@1, value: 0.41, rollouts: 64}\n  evaluation: {decoding: {temperature: 1.0}}\n"
    text = REF.split("evaluation:")[0].replace("  result: {metric: pass@1, value: 0.41, rollouts: 64}\n", baseline) + block
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["severity"], finding["yaml_path"]) == ("PL407", "error", "evaluation.decoding.temperature")
    assert (finding["line"], finding["column"]) == at(text, "0.7}")
    assert "0.7" in finding["message"] and "1.0" in finding["message"]
    (finding,) = lint(planlint, tmp_path, text.replace("status: approved", "status: draft")).json["findings"]
    assert finding["severity"] == "warning"


def test_pl108_a_harness_without_a_version_is_at_its_key(planlint, tmp_path):
    text = REF.split("evaluation:")[0] + "evaluation:\n  harness: {name: lighteval}\n  seed: 1\n"
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert (finding["code"], finding["yaml_path"], finding["line"], finding["column"]) == ("PL108", "evaluation.harness.version", *at(text, "harness:"))
    text = text.replace("{name: lighteval}", "{name: lighteval, version: null}")
    (finding,) = lint(planlint, tmp_path, text).json["findings"]
    assert finding["code"] == "PL108" and "empty" in finding["message"]  # not also PL003


def test_pl310_disabled_leaves_pl305(planlint, tmp_path):
    text = REF.replace("    calibration: {labels: 200, agreement: 0.87}\n", "").replace("graders: [db-state, tone]", "graders: [tone]")
    codes = sorted(f["code"] for f in lint(planlint, tmp_path, text).json["findings"])
    assert codes == ["PL310"]
    write(tmp_path / "plan.yaml", text)
    result = planlint("--format", "json", "--no-cache", "--ignore", "PL310", "plan.yaml", cwd=tmp_path)
    assert [f["code"] for f in result.json["findings"]] == ["PL305"]


def test_notes_are_yielded_not_findings():
    data = load_text(sized(50, **{"metric: pass@1": "metric: bleu"}).replace("metric: pass@1", "metric: bleu")).data
    (note,) = list(RULES["PL611"].check(PlanContext(data=data, path="p.yaml")))
    assert isinstance(note, Note) and re.match(r"p\.yaml: PL611 did not check", note.text)
