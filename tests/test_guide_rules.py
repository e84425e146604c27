"""What the planning guide asks of a plan (issue 13): the new keys, rules and where they show.

The rules' own fixtures are in tests/fixtures/rules/ (`# expect:` markers) and
their docstring examples are linted by test_rule_docs.py; this file covers
what crosses the rules: the catalog, explain, the config thresholds, the
Markdown and JSON reports, the predefined boundary's note, the schema and the
example plans.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from conftest import ROOT, write
from plan_overlay import REFERENCE, build
from planlint.core.model import Report
from planlint.formats.markdown import render
from planlint.integrations.pr_comment import load_report

NEW_RULES = {
    "PL308": ("judge-calibration-weak", "warning"),
    "PL309": ("grader-not-qualified", "warning"),
    "PL406": ("baseline-model-differs", "warning"),
    "PL506": ("approval-missing", "error"),
    "PL607": ("split-undeclared", "error"),
    "PL608": ("reward-weights-invalid", "error"),
    "PL609": ("method-format-mismatch", "error"),
    "PL610": ("missing-inputs-open", "error"),
}

# The planning guide's words behind each rule, as `planlint explain` prints them.
GUIDE = {
    "PL308": "Resolve execution and calibration blockers before approving training",
    "PL309": "A local verifier check does not qualify execution in another hosted environment",
    "PL406": "establish whether the reward and trajectory are usable",
    "PL506": "price and maximum spend before Start",
    "PL607": "separate evaluation set or split",
    "PL608": "If the signal rewards a shortcut, revise it before proposing training",
    "PL609": "SFT needs reviewed desired answers; GRPO needs tasks whose fresh attempts can be scored by an executable reward",
    "PL610": "Return a concrete experiment and the missing inputs that affect it",
}


def test_rules_json_lists_each_new_rule_with_its_severity(planlint):
    rows = {r["code"]: r for r in json.loads(planlint("rules", "--format", "json").out)}
    for code, (name, severity) in NEW_RULES.items():
        assert (rows[code]["name"], rows[code]["severity"]) == (name, severity)


@pytest.mark.parametrize("code", sorted(GUIDE))
def test_explain_gives_the_guides_reason(code, planlint):
    result = planlint("explain", code)
    assert result.status == 0
    assert GUIDE[code] in " ".join(result.out.split()), result.out


# --------------------------------------------------------------------------- config thresholds


def _judge_plan(labels: int, agreement: float) -> str:
    return REFERENCE.replace("calibration: {labels: 200, agreement: 0.87}", f"calibration: {{labels: {labels}, agreement: {agreement}}}")


@pytest.mark.parametrize(
    ("config", "labels", "agreement", "fired"),
    [
        ("", 49, 0.8, ["calibration.labels"]),
        ("", 50, 0.79, ["calibration.agreement"]),
        ("", 50, 0.8, []),
        ("calibration: {min_labels: 200}\n", 150, 0.9, ["calibration.labels"]),
        ("calibration: {min_agreement: 0.9}\n", 300, 0.85, ["calibration.agreement"]),
        ("calibration: {min_labels: 1, min_agreement: 0}\n", 1, 0.0, []),
    ],
)
def test_calibration_thresholds_come_from_the_config(config, labels, agreement, fired, planlint, tmp_path):
    if config:
        write(tmp_path / ".planlint.yaml", config)
    write(tmp_path / "plan.yaml", _judge_plan(labels, agreement))
    result = planlint("--format", "json", "plan.yaml", cwd=tmp_path)
    assert [f["yaml_path"].removeprefix("graders[1].") for f in result.json["findings"] if f["code"] == "PL308"] == fired


@pytest.mark.parametrize(
    "setting",
    ["calibration: 50", "calibration: {min_labels: 0}", "calibration: {min_labels: 2.5}", "calibration: {min_agreement: 1.5}",
     "calibration: {min_agreement: .nan}", "calibration: {min_agreement: true}", "calibration: {labels: 50}"],
)
def test_broken_calibration_config_is_exit_2(setting, planlint, tmp_path):
    write(tmp_path / ".planlint.yaml", setting + "\n")
    write(tmp_path / "plan.yaml", REFERENCE)
    result = planlint("plan.yaml", cwd=tmp_path)
    assert result.status == 2 and "calibration" in result.err and "Traceback" not in result.err


# --------------------------------------------------------------------------- missing inputs in the reports

DRAFT = REFERENCE.replace("  status: approved ", "  status: draft    ").replace(
    "behavior:\n", "missing_inputs:\n  - baseline on release 2026.11.03\n  - price quote for the hosted runtime\nbehavior:\n", 1
)


def test_markdown_lists_missing_inputs_under_the_plan_also_from_the_cache(planlint, tmp_path):
    write(tmp_path / "plans" / "draft.yaml", DRAFT)
    write(tmp_path / "plans" / "other.yaml", REFERENCE.replace("name: retail-refund-window", "name: other"))
    for _ in range(2):  # the second run reads the cached results
        result = planlint("--format", "markdown", "plans", cwd=tmp_path)
        assert result.status == 0
        section = result.out.split("### Missing inputs\n", 1)[1]
        assert section.startswith("\n**plans/draft.yaml**\n\n- baseline on release 2026.11.03\n- price quote for the hosted runtime\n")
        assert "other" not in section
    assert list((tmp_path / ".planlint_cache").rglob("*")), "the second run was served by the cache"


def test_no_missing_inputs_section_without_missing_inputs(planlint, tmp_path):
    write(tmp_path / "plans" / "plan.yaml", REFERENCE.replace("behavior:\n", "missing_inputs: []\nbehavior:\n", 1))
    result = planlint("--format", "markdown", "plans", cwd=tmp_path)
    assert "Missing inputs" not in result.out
    assert "missing_inputs" not in planlint("--format", "json", "plans", cwd=tmp_path).json


def test_missing_inputs_are_escaped_and_capped():
    hostile = "<img src=x> [click](https://evil.example) @org/team | cell\n::error::forged"
    report = Report(files=1, missing_inputs={"plans/a.yaml": [hostile] + [f"item {i}" for i in range(30)]})
    text = render(report)
    assert not re.search(r"(?<!\\)[<>\[\]]", text.split("### Missing inputs", 1)[1])
    assert "](https://" not in text and "@org" not in text and "\n::error" not in text
    assert "\\| cell" in text
    assert text.count("\n- ") == 21 and "- … and 11 more inputs" in text


def test_json_report_carries_missing_inputs_to_the_comment(planlint, tmp_path):
    write(tmp_path / "plans" / "draft.yaml", DRAFT)
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    assert result.json["missing_inputs"] == {"plans/draft.yaml": ["baseline on release 2026.11.03", "price quote for the hosted runtime"]}
    (tmp_path / "report.json").write_text(result.out, encoding="utf-8")
    comment = render(load_report(str(tmp_path / "report.json")))
    assert "**plans/draft.yaml**\n\n- baseline on release 2026.11.03\n" in comment


def test_comment_refuses_a_report_with_malformed_missing_inputs(tmp_path):
    from planlint.integrations.pr_comment import UsageError

    report = {"version": 1, "files": 1, "findings": [], "summary": {"errors": 0, "warnings": 0}, "missing_inputs": {"a.yaml": [1]}}
    (tmp_path / "report.json").write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(UsageError, match="missing_inputs"):
        load_report(str(tmp_path / "report.json"))


def test_missing_inputs_open_once_approved(planlint, tmp_path):
    write(tmp_path / "plan.yaml", DRAFT.replace("  status: draft    ", "  status: running  "))
    findings = planlint("--format", "json", "plan.yaml", cwd=tmp_path).json["findings"]
    assert [(f["code"], f["yaml_path"], f["severity"]) for f in findings] == [("PL610", "missing_inputs[0]", "error")]


# --------------------------------------------------------------------------- predefined boundary

PREDEFINED = REFERENCE.replace("path: data/retail/train.jsonl", "path: data/train.jsonl").replace(
    "path: data/retail/eval.jsonl", "path: data/eval.jsonl"
)
PREDEFINED = re.sub(r"  boundary:\n(    .*\n)+", '  boundary:\n    predefined: "tau-bench retail: official test split"\n', PREDEFINED)


def _leaky_files(tmp_path):
    write(tmp_path / "data" / "train.jsonl", json.dumps({"customer_id": "c-1", "created_at": "2026-09-01", "prompt": "same"}) + "\n")
    write(tmp_path / "data" / "eval.jsonl", json.dumps({"customer_id": "c-1", "created_at": "2026-01-01", "prompt": "same"}) + "\n")


def test_predefined_boundary_satisfies_pl203_and_the_data_checks_say_they_did_not_run(planlint, tmp_path):
    _leaky_files(tmp_path)
    write(tmp_path / "plans" / "plan.yaml", PREDEFINED)
    json_run = planlint("--format", "json", "plans", cwd=tmp_path)
    assert json_run.status == 0 and json_run.json["findings"] == []
    text = planlint("plans", cwd=tmp_path)
    assert text.status == 0
    assert "planlint: note: plans/plan.yaml: splits.boundary.predefined 'tau-bench retail: official test split'" in text.err
    assert "PL207-PL211" in text.err and "did not run" in text.err
    summary = planlint("--format", "markdown", "plans", cwd=tmp_path).out
    assert "splits.boundary.predefined" in summary


def test_predefined_with_a_key_still_runs_the_data_checks(planlint, tmp_path):
    _leaky_files(tmp_path)
    write(tmp_path / "plans" / "plan.yaml", PREDEFINED.replace("  boundary:\n", "  boundary:\n    group_key: customer_id\n"))
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    assert [f["code"] for f in result.json["findings"]] == ["PL207", "PL209"]


# --------------------------------------------------------------------------- schema


def _schema() -> dict:
    return json.loads((ROOT / "schemas" / "plan.schema.json").read_text(encoding="utf-8"))


NEW_KEYS = {
    ("missing_inputs",): lambda s: s["properties"],
    ("graders", "qualified_on"): lambda s: s["properties"]["graders"]["items"]["properties"],
    ("splits", "boundary", "predefined"): lambda s: s["properties"]["splits"]["properties"]["boundary"]["properties"],
}


def test_new_keys_are_described_for_editors():
    schema = _schema()
    for key, where in NEW_KEYS.items():
        entry = where(schema)[key[-1]]
        assert len(entry["description"]) > 60, key
        assert entry.get("examples"), key


def test_schema_change_is_additive():
    """A plan using the new keys was rejected before only for those keys, and is valid now."""
    from jsonschema import Draft202012Validator

    from planlint.core.loader import load_text

    plan = build(
        "missing_inputs: [baseline on release 2026.11.03]\n"
        "graders:\n"
        "  - {id: db-state, type: code, name: tau-retail-db-state, version: 1.4.2, qualified_on: [local, verl]}\n"
        "  - {id: tone, type: llm_judge, name: polite-tone-judge, version: 3.0.1, judge_model: {name: gpt-5-mini, revision: \"2026-08-07\"}, calibration: {labels: 200, agreement: 0.87}}\n"
        "splits:\n"
        "  train: {selector: {field: split, equals: train}}\n"
        "  eval: {selector: {field: split, equals: test}, frozen: true}\n"
        "  boundary: {predefined: \"tau-bench retail: official test split\"}\n"
    )
    data = load_text(plan).data
    schema = _schema()
    assert list(Draft202012Validator(schema).iter_errors(data)) == []
    before = copy.deepcopy(schema)
    for key, where in NEW_KEYS.items():
        del where(before)[key[-1]]
    errors = sorted(Draft202012Validator(before).iter_errors(data), key=lambda e: list(e.absolute_path))
    assert [(e.validator, list(e.absolute_path)) for e in errors] == [
        ("additionalProperties", []),
        ("additionalProperties", ["graders", 0]),
        ("additionalProperties", ["splits", "boundary"]),
    ]
    assert all(("missing_inputs" in e.message) or ("qualified_on" in e.message) or ("predefined" in e.message) for e in errors)


def test_both_schema_copies_are_identical():
    packaged = (ROOT / "src" / "planlint" / "data" / "plan.schema.json").read_text(encoding="utf-8")
    assert packaged == (ROOT / "schemas" / "plan.schema.json").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- example plans and templates


def test_example_plans_are_clean_and_use_the_new_fields(planlint):
    result = planlint("--format", "json", str(ROOT / "plans"), cwd=ROOT)
    assert result.status == 0 and result.json["findings"] == []
    statuses = {}
    for path in sorted((ROOT / "plans").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        statuses[path.name] = re.search(r"^  status: (\w+)", text, re.M).group(1)
    drafts = [name for name, status in statuses.items() if status == "draft"]
    assert len(drafts) == 1
    assert "\nmissing_inputs:\n  - " in (ROOT / "plans" / drafts[0]).read_text(encoding="utf-8")
    assert set(result.json["missing_inputs"]) == {f"{ROOT / 'plans' / drafts[0]}"}
    for name, status in statuses.items():
        text = (ROOT / "plans" / name).read_text(encoding="utf-8")
        if "\nruntime:" in text and status in ("approved", "running"):
            assert "qualified_on: [" in text, name


@pytest.mark.parametrize("method", ["grpo", "sft"])
def test_init_templates_include_the_new_fields(method, planlint, tmp_path):
    planlint("init", "--method", method, cwd=tmp_path)
    text = (tmp_path / "plans" / "new-experiment.yaml").read_text(encoding="utf-8")
    for key in ("missing_inputs:", "qualified_on:", "predefined:", "approved_by:", "size:", "evaluation:", "seed:", "outcome:"):
        assert key in text, key
