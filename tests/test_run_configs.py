"""The run family: a plan's Osmosis submit configs, checked where they are written.

Each TOML under fixtures/run/{training,eval,benchmark}/ is a config shaped
like the osmosis-ai SDK's own templates, with its expected findings marked
inline (`# expect: PL901`). The test lays out a workspace (the reference
plan naming that config, the rollout's entrypoint, the directories the SDK
requires) and compares the exact (path, line, code) set.
test_sdk_agreement.py then asks the SDK itself.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES
from plan_overlay import build
from test_rules_fixtures import expected

RUN_FIXTURES = FIXTURES / "run"
CONFIGS = sorted(RUN_FIXTURES.glob("training/*.toml")) + sorted(RUN_FIXTURES.glob("eval/*.toml")) + sorted(RUN_FIXTURES.glob("benchmark/*.toml"))
KEY = {"training": "training_config", "eval": "eval_config", "benchmark": "benchmark_config"}


def _ids(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


# The reference plan's dataset, with the platform datasets that hold its release (PL903).
DATASET = 'dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds, eval: retail-refunds-eval}}'
WORKSPACE_DIRS = ("rollouts", "configs/training", "configs/eval", "data")  # what the SDK's submit requires


def lay_out(root: Path, config: Path | None = None, *, status: str = "approved", run: str | None = None) -> str:
    """A workspace at `root`: plans/plan.yaml (the reference plan) naming `config`, the rollout's
    code and the directories the SDK requires."""
    (root / "rollouts" / "retail-refund").mkdir(parents=True)
    (root / "rollouts" / "retail-refund" / "main.py").write_text("# the agent workflow and its grader\n", encoding="utf-8")
    for directory in WORKSPACE_DIRS:
        (root / directory).mkdir(parents=True, exist_ok=True)
    if config is not None:
        kind = config.parent.name
        target = root / "configs" / kind / config.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(config, target)
        run = f"run: {{platform: osmosis, {KEY[kind]}: configs/{kind}/{config.name}}}"
    fragment = f"metadata: {{name: retail-refund-window, owner: \"@support-ml\", status: {status}}}\n{DATASET}\n" + (run + "\n" if run else "")
    (root / "plans").mkdir()
    (root / "plans" / "plan.yaml").write_text(build(fragment), encoding="utf-8")
    return f"configs/{config.parent.name}/{config.name}" if config is not None else ""


def _found(result) -> set:
    return {(f["path"], f["line"], f["code"]) for f in result.json["findings"]}


def _report(result) -> str:
    return "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['code']} {f['message']}" for f in result.json["findings"])


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_config_findings(config, tmp_path, planlint):
    rel = lay_out(tmp_path, config)
    result = planlint("--format", "json", "plans/", cwd=tmp_path)
    assert result.status in (0, 1), result
    want = {(rel, line, code) for (line, code) in expected(config.read_text(encoding="utf-8"))}
    assert _found(result) == want, _report(result)
    assert result.status == (1 if any(f["severity"] == "error" for f in result.json["findings"]) else 0)


def test_every_run_rule_has_a_fixture():
    seen = {code for config in CONFIGS for _, code in expected(config.read_text(encoding="utf-8"))}
    assert {"PL801", "PL901", "PL902", "PL903", "PL010"} <= seen


# --------------------------------------------------------------------------- positions and formats


def test_position_is_the_offending_key_in_every_format(tmp_path, planlint):
    rel = lay_out(tmp_path, RUN_FIXTURES / "training" / "unknown-key.toml")
    findings = planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"]
    assert [(f["path"], f["line"], f["column"], f["end_column"], f["yaml_path"]) for f in findings] == [
        (rel, 9, 1, 14, "training.learning_rate")
    ]
    text = planlint("--format", "text", "plans/", cwd=tmp_path).out
    assert f"{rel}:9:1: PL901 " in text and "learning_rate = 1e-5" in text
    github = planlint("--format", "github", "plans/", cwd=tmp_path).out
    assert f"::error file={rel},line=9,col=1,endLine=9,endColumn=14,title=PL901" in github
    sarif = json.loads(planlint("--format", "sarif", "plans/", cwd=tmp_path).out)
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith(rel)
    assert location["region"]["startLine"] == 9 and location["region"]["startColumn"] == 1
    junit = planlint("--format", "junit", "plans/", cwd=tmp_path).out
    assert f'name="{rel}"' in junit and "PL901" in junit


def test_the_secret_is_never_echoed(tmp_path, planlint):
    lay_out(tmp_path, RUN_FIXTURES / "training" / "env-secret.toml")
    for fmt in ("text", "json", "github", "sarif", "junit"):
        out = planlint("--format", fmt, "plans/", cwd=tmp_path).out
        assert "PL801" in out and "Zq9Xw8Vu7Ts6" not in out, fmt


def test_missing_and_escaping_configs_are_reported_in_the_plan(tmp_path, planlint):
    outside = tmp_path / "elsewhere.toml"
    outside.write_text((RUN_FIXTURES / "training" / "valid-full.toml").read_text(encoding="utf-8"), encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "configs" / "training").mkdir(parents=True)
    os.symlink(outside, repo / "configs" / "training" / "linked.toml")
    lay_out(repo, run="run:\n  platform: osmosis\n  training_config: configs/training/linked.toml\n  eval_config: ../elsewhere.toml")
    result = planlint("--format", "json", "plans/", cwd=repo)
    findings = [(f["path"], f["code"], f["yaml_path"]) for f in result.json["findings"]]
    assert findings == [("plans/plan.yaml", "PL901", "run.training_config"), ("plans/plan.yaml", "PL901", "run.eval_config")], _report(result)
    assert all("outside the repository" in f["message"] for f in result.json["findings"])
    (repo / "configs" / "training" / "linked.toml").unlink()
    result = planlint("--format", "json", "plans/", cwd=repo)
    assert "does not exist in the repository" in result.json["findings"][0]["message"]


def test_plan_and_configs_that_agree_are_clean(tmp_path, planlint):
    lay_out(tmp_path, run="run:\n  platform: osmosis\n  training_config: configs/training/valid-full.toml\n  eval_config: configs/eval/valid-filled.toml")
    for kind, name in (("training", "valid-full.toml"), ("eval", "valid-filled.toml")):
        (tmp_path / "configs" / kind).mkdir(parents=True, exist_ok=True)
        shutil.copy(RUN_FIXTURES / kind / name, tmp_path / "configs" / kind / name)
    result = planlint("--format", "json", "plans/", cwd=tmp_path)
    assert result.status == 0 and result.json["findings"] == [], _report(result)


def test_cached_results_follow_the_config(tmp_path, planlint):
    """A plan's result depends on its run config: editing only the TOML is seen on the next run."""
    lay_out(tmp_path, RUN_FIXTURES / "training" / "valid-full.toml")
    config = tmp_path / "configs" / "training" / "valid-full.toml"
    assert planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"] == []
    config.write_text(config.read_text(encoding="utf-8").replace('model_path = "Qwen/Qwen3-8B"', 'model_path = "Qwen/Qwen3-4B"'), encoding="utf-8")
    findings = planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"]
    assert [(f["path"], f["code"]) for f in findings] == [("configs/training/valid-full.toml", "PL903")]
    again = planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"]  # from the cache now
    assert again == findings
    (tmp_path / "rollouts" / "retail-refund" / "main.py").unlink()
    codes = [f["code"] for f in planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"]]
    assert sorted(codes) == ["PL901", "PL903"]


# --------------------------------------------------------------------------- PL904


def test_unplanned_training_config(tmp_path, planlint):
    lay_out(tmp_path, RUN_FIXTURES / "training" / "valid-full.toml")
    (tmp_path / ".git").mkdir()  # the repository root
    configs = tmp_path / "configs" / "training"
    (configs / "sweeps").mkdir()
    shutil.copy(configs / "valid-full.toml", configs / "sweeps" / "bigger-lr.toml")
    shutil.copy(configs / "valid-full.toml", configs / "other-plans.toml")
    shutil.copy(configs / "valid-full.toml", configs / "smoke.toml")
    (configs / "smoke.toml").write_text("# planlint: disable-file=PL904 -- a smoke test of the platform, no experiment\n" + (configs / "smoke.toml").read_text(encoding="utf-8"), encoding="utf-8")
    # A plan this run does not lint names other-plans.toml: it is planned.
    (tmp_path / "archive").mkdir()
    other = (tmp_path / "plans" / "plan.yaml").read_text(encoding="utf-8").replace("name: retail-refund-window", "name: other").replace("valid-full.toml", "other-plans.toml")
    (tmp_path / "archive" / "other.yaml").write_text(other, encoding="utf-8")
    result = planlint("--format", "json", "plans/", cwd=tmp_path)
    assert [(f["path"], f["line"], f["column"], f["code"], f["severity"]) for f in result.json["findings"]] == [
        ("configs/training/sweeps/bigger-lr.toml", 1, 1, "PL904", "warning")
    ], _report(result)
    assert result.json["files"] == 1 and result.status == 0


# --------------------------------------------------------------------------- planlint init --platform osmosis


def test_init_writes_a_plan_and_matching_run_configs(tmp_path, planlint):
    for directory in ("rollouts", "data"):  # an Osmosis workspace has them; init writes the configs
        (tmp_path / directory).mkdir()
    result = planlint("init", "refund-window", "--platform", "osmosis", cwd=tmp_path)
    assert result.status == 0, result
    plan = tmp_path / "plans" / "refund-window.yaml"
    training = tmp_path / "configs" / "training" / "refund-window.toml"
    evaluation = tmp_path / "configs" / "eval" / "refund-window.toml"
    assert "configs/training/refund-window.toml" in plan.read_text(encoding="utf-8")
    for config in (training, evaluation):
        assert "osmosis" in config.read_text(encoding="utf-8") and "<your-rollout>" in config.read_text(encoding="utf-8")
    lint = planlint("--format", "json", "plans/", cwd=tmp_path)
    run_findings = [f for f in lint.json["findings"] if f["path"].endswith(".toml") or f["code"].startswith("PL9")]
    assert all(f["code"] == "PL008" and f["severity"] == "warning" for f in run_findings), run_findings  # blanks, while draft

    # Fill the blanks: the same model and dataset in the plan and the training config, the rollout, the commit.
    (tmp_path / "rollouts" / "refund" / "main.py").parent.mkdir(parents=True)
    (tmp_path / "rollouts" / "refund" / "main.py").write_text("# agent workflow\n", encoding="utf-8")
    filled = {"TODO-org/TODO-model": "Qwen/Qwen3-8B", "TODO-dataset": "retail-refunds", "<your-rollout>": "refund",
              "<reviewed-commit>": "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b", "<your-eval-dataset>": "retail-refunds-heldout"}
    for path in (plan, training, evaluation):
        text = path.read_text(encoding="utf-8")
        for blank, value in filled.items():
            text = text.replace(blank, value)
        path.write_text(text, encoding="utf-8")
    lint = planlint("--format", "json", "plans/", cwd=tmp_path)
    run_findings = [f for f in lint.json["findings"] if f["path"].endswith(".toml") or f["code"].startswith("PL9")]
    assert run_findings == [], _report(lint)
    # ... and they really agree: another model in the training config is drift.
    training.write_text(training.read_text(encoding="utf-8").replace('"Qwen/Qwen3-8B"', '"Qwen/Qwen3-4B"'), encoding="utf-8")
    codes = [f["code"] for f in planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"] if f["path"].endswith(".toml")]
    assert codes == ["PL903"]


def test_init_with_a_platform_overwrites_nothing(tmp_path, planlint):
    existing = tmp_path / "configs" / "eval" / "x1.toml"
    existing.parent.mkdir(parents=True)
    existing.write_text("mine\n", encoding="utf-8")
    result = planlint("init", "x1", "--platform", "osmosis", cwd=tmp_path)
    assert result.status == 2 and result.err == "planlint: error: configs/eval/x1.toml already exists: edit it, or choose another NAME\n"
    assert existing.read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "plans").exists() and not (tmp_path / "configs" / "training").exists()


# --------------------------------------------------------------------------- diff mode: the change card


def test_change_card_shows_the_run_config_beside_the_plan(tmp_path, planlint, monkeypatch):
    """A pull request that edits only the training config of a running plan: PL708, and the card lists the change."""
    from test_diff_mode import commit, git, new_repo

    for name, value in (("GIT_CONFIG_GLOBAL", os.devnull), ("GIT_CONFIG_NOSYSTEM", "1"), ("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.invalid"),
                        ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@example.invalid"), ("GIT_CEILING_DIRECTORIES", str(tmp_path))):
        monkeypatch.setenv(name, value)
    repo = new_repo(tmp_path / "repo")
    lay_out(repo, RUN_FIXTURES / "training" / "valid-full.toml", status="running")
    git(repo, "add", "rollouts")
    git(repo, "commit", "-q", "-m", "the rollout")  # the commit the config pins (PL902 in diff mode: the reviewed history)
    config = repo / "configs" / "training" / "valid-full.toml"
    pinned = git(repo, "rev-parse", "HEAD").strip()
    config.write_text(config.read_text(encoding="utf-8").replace("4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b", pinned), encoding="utf-8")
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    config.write_text(config.read_text(encoding="utf-8").replace("lr = 1e-5", "lr = 3e-5").replace('LOG_LEVEL = "INFO"', 'LOG_LEVEL = "DEBUG"'), encoding="utf-8")
    commit(repo, "tune the learning rate")
    summary = tmp_path / "summary.md"
    result = planlint("--diff-base", "main", "--format", "json", "--summary", summary, "--no-cache", cwd=repo)
    # The config pins a commit of the repository (the one holding the rollout): no PL902, beside PL708.
    assert [(f["path"], f["line"], f["code"]) for f in result.json["findings"]] == [("configs/training/valid-full.toml", 9, "PL708")], _report(result)
    assert "training.lr changed from 1e-05 to 3e-05" in result.json["findings"][0]["message"]
    [card] = result.json["changes"]
    assert card["path"] == "plans/plan.yaml" and card["status"] == ["running", "running"]
    assert card["fields"] == [
        {"yaml_path": "configs/training/valid-full.toml: training.lr", "old": 1e-05, "new": 3e-05},
        {"yaml_path": "configs/training/valid-full.toml: env.LOG_LEVEL", "old": "INFO", "new": "DEBUG"},
    ]
    markdown = summary.read_text(encoding="utf-8")
    assert "| configs/training/valid-full.toml: training.lr | 1e-05 → 3e-05 |" in markdown


# --------------------------------------------------------------------------- the position scanner


def _leaves(value, route=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, route + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, route + (index,))
    else:
        yield route, value


TRICKY_TOML = (
    'a = [1, [2, "x]"], {b = "}", c = [\n 3, # c\n]}]\n"q.k" = 1979-05-27 07:32:00Z\nd.e . f = \'lit\'\n'
    '[[arr]]\nx = """m\n"quoted" ""\n"""\n[[arr]]\ny = \'\'\'l\'\'\'\n[arr.sub]\nz = -1_000\n[ "t" . u ]\nv = +inf\n'
)


def test_every_value_the_scanner_places_reads_back_as_that_value():
    """scan() on TOML that tomllib accepted: each leaf's span, parsed alone, is the value tomllib read.
    Seeded mutations of the fixtures and the SDK-shaped templates, so odd layouts are covered too."""
    import random

    from planlint.services.run_config import parse, tomllib

    texts = [p.read_text(encoding="utf-8") for p in CONFIGS] + [TRICKY_TOML]
    alphabet = list("[]{}=\"'.,#\n \\abcXYZ_-019") + ['"""', "'''"]
    rng = random.Random(19)
    checked = 0
    for attempt in range(1500):
        text = rng.choice(texts)
        if attempt % 2:
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(text) + 1)
                text = text[:at] + rng.choice(alphabet) + text[at:]
        document = parse(text, "x.toml", "training")
        if document.data is None:
            continue
        lines = text.split("\n")
        for route, value in _leaves(document.data):
            span = document.positions.values.get(route)
            assert span is not None, (route, text)
            if span.line == span.end_line:
                source = lines[span.line - 1][span.column - 1 : span.end_column - 1]
            else:
                middle = lines[span.line : span.end_line - 1]
                source = "\n".join([lines[span.line - 1][span.column - 1 :], *middle, lines[span.end_line - 1][: span.end_column - 1]])
            read = tomllib.loads("v = " + source)["v"]
            assert read == value or (read != read and value != value), (route, source, text)  # nan is nan
            checked += 1
    assert checked > 5000


# --------------------------------------------------------------------------- the SDK's templates, left with their placeholders

TEMPLATES = RUN_FIXTURES / "templates"  # osmosis-ai 0.3.8's training.toml.tpl and eval.toml.tpl, verbatim


def _template_repo(root: Path, status: str) -> None:
    lay_out(root, run="run:\n  platform: osmosis\n  training_config: configs/training/t.toml\n  eval_config: configs/eval/t.toml", status=status)
    for kind in ("training", "eval"):
        (root / "configs" / kind).mkdir(parents=True, exist_ok=True)
        shutil.copy(TEMPLATES / f"{kind}.toml", root / "configs" / kind / "t.toml")


def test_the_sdk_templates_as_shipped(tmp_path, planlint):
    """Left with their placeholders: no format error (the SDK accepts them), nothing compared or looked for
    on disk for a placeholder (PL008's), the unpinned code is PL902 (a warning while draft). The eval
    template's model, openai/gpt-5-mini, is not the plan's model under test: PL903."""
    from planlint.rules import RULES

    _template_repo(tmp_path, "draft")
    findings = planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"]
    want = [("configs/eval/t.toml", 4, "PL902", "warning"), ("configs/training/t.toml", 9, "PL902", "warning"), ("configs/eval/t.toml", 7, "PL903", "error")]
    if "PL008" in RULES:  # the placeholder rule reports the blanks in the run configs too (run.placeholder_problems)
        want += [("configs/eval/t.toml", 5, "PL008", "warning"), ("configs/eval/t.toml", 8, "PL008", "warning"),
                 ("configs/training/t.toml", 10, "PL008", "warning"), ("configs/training/t.toml", 12, "PL008", "warning"),
                 ("configs/training/t.toml", 13, "PL008", "warning")]
    assert sorted((f["path"], f["line"], f["code"], f["severity"]) for f in findings if f["path"].endswith(".toml")) == sorted(want), _report_findings(findings)


def test_placeholders_of_the_sdk_templates_are_found_where_they_are_written(tmp_path):
    """run.placeholder_problems: what PL008 reports in the run configs, at the template's blanks."""
    from planlint.core.config import Config
    from planlint.core.loader import load_file
    from planlint.rules.base import PlanContext
    from planlint.rules.run import placeholder_problems

    _template_repo(tmp_path, "approved")
    os.chdir(tmp_path)
    plan = tmp_path / "plans" / "plan.yaml"
    loaded = load_file(plan)
    config = Config(root=tmp_path)
    ctx = PlanContext(data=loaded.data, path="plans/plan.yaml", config=config, file=plan)
    problems = list(placeholder_problems(ctx))
    assert {p.code for p in problems} == {"PL008"}
    where = sorted((p.document.path, p.document.positions.values[p.route].line, ".".join(p.route)) for p in problems)
    assert where == [
        ("configs/eval/t.toml", 5, "experiment.rollout"),
        ("configs/eval/t.toml", 8, "experiment.dataset"),
        ("configs/training/t.toml", 10, "experiment.rollout"),
        ("configs/training/t.toml", 12, "experiment.model_path"),
        ("configs/training/t.toml", 13, "experiment.dataset"),
    ]
    assert all(p.severity is None for p in problems)  # errors: the plan is approved
    assert all("placeholder" in p.message for p in problems)


def _report_findings(findings) -> str:
    return "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['code']} {f['message']}" for f in findings)
