"""Trainer runs (TRL, verl, axolotl) beyond one lint: diff mode on real git repositories (PL708, PL706's
twin, the change card), unplanned configs (PL904), secrets and placeholders in their values (PL801,
PL008), `planlint init --trainer`, and the launch-script reader on its own."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES
from test_diff_mode import commit, git, new_repo
from test_trainer_configs import lay_out

CASES = FIXTURES / "trainers"
DATA_RULES = "PL207,PL208,PL209,PL210,PL211"


def _findings(result) -> list[tuple]:
    return [(f["path"], f["line"], f["code"]) for f in result.json["findings"]]


def _report(result) -> str:
    return "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['code']} {f['message']}" for f in result.json["findings"])


@pytest.fixture
def git_env(monkeypatch, tmp_path):
    for name, value in (("GIT_CONFIG_GLOBAL", os.devnull), ("GIT_CONFIG_NOSYSTEM", "1"), ("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.invalid"),
                        ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@example.invalid"), ("GIT_CEILING_DIRECTORIES", str(tmp_path))):
        monkeypatch.setenv(name, value)


def _running_repo(tmp_path: Path, case: str) -> Path:
    """A repository whose plan is `running` from the case's trainer config, committed on main; a branch pr."""
    repo = tmp_path / "repo"
    lay_out(repo, CASES / case)
    shutil.rmtree(repo / ".git")
    new_repo(repo)
    plan = repo / "plans" / "plan.yaml"
    plan.write_text(plan.read_text(encoding="utf-8").replace("status: approved", "status: running"), encoding="utf-8")
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


# --------------------------------------------------------------------------- diff mode


def test_a_running_plans_script_override_changed(tmp_path, planlint, git_env):
    """A pull request that edits only the launch script of a running verl plan: PL708 at the override, and the card shows it."""
    repo = _running_repo(tmp_path, "verl/agrees.case")
    script = repo / "configs" / "verl" / "retail-refund-window.sh"
    script.write_text(script.read_text(encoding="utf-8").replace("actor_rollout_ref.actor.optim.lr=1e-6", "actor_rollout_ref.actor.optim.lr=3e-6")
                      .replace("trainer.total_epochs=15", "trainer.total_epochs=15 \\\n    trainer.experiment_name=second-try"), encoding="utf-8")
    commit(repo, "a higher learning rate")
    summary = tmp_path / "summary.md"
    result = planlint("--diff-base", "main", "--format", "json", "--summary", summary, "--no-cache", "--ignore", DATA_RULES, cwd=repo)
    assert _findings(result) == [("configs/verl/retail-refund-window.sh", 7, "PL708")], _report(result)
    message = result.json["findings"][0]["message"]
    assert "actor_rollout_ref.actor.optim.lr changed from '1e-06' to '3e-06'" in message or "actor_rollout_ref.actor.optim.lr changed from 1e-06 to 3e-06" in message, message
    assert "experiment_name" not in message  # an operational key: where it logs, not what it trains
    [card] = result.json["changes"]
    paths = [field["yaml_path"] for field in card["fields"]]
    assert "configs/verl/retail-refund-window.sh: actor_rollout_ref.actor.optim.lr" in paths
    assert "| configs/verl/retail-refund-window.sh: actor\\_rollout\\_ref.actor.optim.lr | 1e-06 → 3e-06 |" in summary.read_text(encoding="utf-8")


def test_a_running_plans_yaml_changed_and_a_key_removed(tmp_path, planlint, git_env):
    repo = _running_repo(tmp_path, "axolotl/agrees.case")
    config = repo / "configs" / "axolotl" / "retail-refund-window.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("seed: 7\n", "").replace("lora_r: 32", "lora_r: 64")
                      .replace("output_dir: ./outputs/retail-refund-window", "output_dir: ./outputs/second"), encoding="utf-8")
    commit(repo, "a bigger adapter")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", "--ignore", DATA_RULES, cwd=repo)
    assert _findings(result) == [("configs/axolotl/retail-refund-window.yaml", 5, "PL708")], _report(result)
    message = result.json["findings"][0]["message"]
    assert "lora_r changed from 32 to 64" in message and "seed was removed (was 7)" in message and "output_dir" not in message


def test_an_approved_plans_config_may_change(tmp_path, planlint, git_env):
    """PL708 is for running plans only: an approved plan's config changes under review, and the card shows it."""
    repo = _running_repo(tmp_path, "trl/agrees.case")
    plan = repo / "plans" / "plan.yaml"
    git(repo, "checkout", "-q", "main")
    plan.write_text(plan.read_text(encoding="utf-8").replace("status: running", "status: approved"), encoding="utf-8")
    commit(repo, "approved, not running")
    git(repo, "checkout", "-q", "-B", "pr")
    config = repo / "configs" / "trl" / "retail-refund-window.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("lora_r: 16", "lora_r: 8"), encoding="utf-8")
    commit(repo, "smaller adapter")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", "--ignore", DATA_RULES, cwd=repo)
    assert _findings(result) == [], _report(result)
    [card] = result.json["changes"]
    assert {"yaml_path": "configs/trl/retail-refund-window.yaml: lora_r", "old": 16, "new": 8} in card["fields"]


def test_reward_code_changed_without_a_version_bump(tmp_path, planlint, git_env):
    """PL706's twin: a pull request that edits only the reward code the TRL config scores with."""
    repo = _running_repo(tmp_path, "trl/agrees.case")
    git(repo, "checkout", "-q", "main")
    plan = repo / "plans" / "plan.yaml"
    plan.write_text(plan.read_text(encoding="utf-8").replace("status: running", "status: approved"), encoding="utf-8")
    commit(repo, "approved")
    git(repo, "checkout", "-q", "-B", "pr")
    rewards = repo / "rewards" / "retail.py"
    rewards.write_text(rewards.read_text(encoding="utf-8").replace("return [0.0 for _ in completions]", "return [1.0 for _ in completions]", 1), encoding="utf-8")
    commit(repo, "a kinder reward")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", "--ignore", DATA_RULES, cwd=repo)
    version_line = next(n for n, line in enumerate(plan.read_text(encoding="utf-8").splitlines(), 1) if "version: 1.4.2" in line)
    tone_line = next(n for n, line in enumerate(plan.read_text(encoding="utf-8").splitlines(), 1) if "version: 3.0.1" in line)
    # The file is the unit: both graders' functions live in rewards/retail.py, so both are told.
    assert _findings(result) == [("plans/plan.yaml", version_line, "PL706"), ("plans/plan.yaml", tone_line, "PL706")], _report(result)
    assert "rewards/retail.py" in result.json["findings"][0]["message"]
    # Bumping the graders' versions (and re-measuring the baseline) answers it.
    text = plan.read_text(encoding="utf-8").replace("version: 1.4.2", "version: 1.5.0").replace("db-state: 1.4.2", "db-state: 1.5.0").replace("value: 0.41", "value: 0.44")
    text = text.replace("version: 3.0.1", "version: 3.1.0").replace("tone: 3.0.1", "tone: 3.1.0")
    plan.write_text(text, encoding="utf-8")
    commit(repo, "bump the grader")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", "--ignore", DATA_RULES, cwd=repo)
    assert _findings(result) == [], _report(result)


# --------------------------------------------------------------------------- PL904


def test_unplanned_trainer_configs(tmp_path, planlint):
    lay_out(tmp_path, CASES / "trl" / "agrees.case")
    for rel, text in (("configs/trl/sweep-lr.yaml", "model_name_or_path: Qwen/Qwen3-8B\n"), ("configs/verl/run.sh", "python3 -m verl.trainer.main_ppo\n"),
                      ("configs/axolotl/smoke.yaml", "# planlint: disable-file=PL904 -- a smoke test of the cluster, no experiment\nbase_model: Qwen/Qwen3-0.6B\n"),
                      ("configs/trl/notes.txt", "not a config\n")):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    result = planlint("--format", "json", "--no-cache", "--ignore", DATA_RULES, "plans/", cwd=tmp_path)
    found = [(f["path"], f["line"], f["code"], f["severity"]) for f in result.json["findings"]]
    assert found == [("configs/trl/sweep-lr.yaml", 1, "PL904", "warning"), ("configs/verl/run.sh", 1, "PL904", "warning")], _report(result)
    assert "run: {trainer: trl, config: configs/trl/sweep-lr.yaml}" in result.json["findings"][0]["message"]
    assert "run: {trainer: verl, script: configs/verl/run.sh}" in result.json["findings"][1]["message"]


# --------------------------------------------------------------------------- PL801, PL008


def test_secrets_and_placeholders_in_trainer_configs(tmp_path, planlint):
    lay_out(tmp_path, CASES / "trl" / "agrees.case")
    config = tmp_path / "configs" / "trl" / "retail-refund-window.yaml"
    token = "hf_" + "Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDc"  # 34 characters, as Hugging Face issues them
    config.write_text(config.read_text(encoding="utf-8") + f"env:\n  HF_TOKEN: {token}\nhub_model_id: <your-hub-repo>\n", encoding="utf-8")
    script = tmp_path / "configs" / "trl" / "retail-refund-window.sh"
    script.write_text(script.read_text(encoding="utf-8") + "  --run_name TODO-name\n", encoding="utf-8")
    script.write_text(script.read_text(encoding="utf-8").replace("--num_generations 8\n", "--num_generations 8 \\\n"), encoding="utf-8")
    for fmt in ("json", "text", "sarif", "github"):
        out = planlint("--format", fmt, "--no-cache", "--ignore", DATA_RULES, "plans/", cwd=tmp_path).out
        assert token not in out, fmt
    result = planlint("--format", "json", "--no-cache", "--ignore", DATA_RULES, "plans/", cwd=tmp_path)
    found = sorted((f["path"], f["line"], f["code"]) for f in result.json["findings"])
    assert found == [("configs/trl/retail-refund-window.sh", 6, "PL008"), ("configs/trl/retail-refund-window.yaml", 16, "PL801"),
                     ("configs/trl/retail-refund-window.yaml", 17, "PL008")]
    assert "osmosis" not in result.json["findings"][1]["message"]  # a trainer's config: the job's environment, not the platform's secrets, _report(result)


# --------------------------------------------------------------------------- planlint init --trainer


@pytest.mark.parametrize("trainer,method", [("trl", "grpo"), ("trl", "sft"), ("verl", "grpo"), ("axolotl", "grpo"), ("axolotl", "sft")])
def test_init_writes_a_plan_and_its_trainer_config(tmp_path, planlint, trainer, method):
    result = planlint("init", "refund-window", "--trainer", trainer, "--method", method, cwd=tmp_path)
    assert result.status == 0, result
    config, script = tmp_path / "configs" / trainer / "refund-window.yaml", tmp_path / "configs" / trainer / "refund-window.sh"
    assert config.is_file() and script.is_file()
    lint = planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path)
    run = [f for f in lint.json["findings"] if f["path"].startswith("configs/") or f["code"].startswith("PL9")]
    assert all(f["severity"] == "warning" and f["code"] in ("PL008", "PL902") for f in run), _report(lint)  # blanks, while draft
    # Fill the blanks the same way in the plan and the config; add the reward code.
    commit_sha = "9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345"
    filled = {"<hub-cache>/models--TODO-org--TODO-model/snapshots/TODO-commit": f"/models/hub/models--Qwen--Qwen3-8B/snapshots/{commit_sha}",
              "TODO-org/TODO-model": "Qwen/Qwen3-8B", "TODO-commit": commit_sha, "<your-reward-file.py>": "rewards.py"}
    for path in (tmp_path / "plans" / "refund-window.yaml", config):
        text = path.read_text(encoding="utf-8")
        for blank, value in filled.items():
            text = text.replace(blank, value)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "rewards.py").write_text("def outcome(*args, **kwargs):\n    return 0.0\n", encoding="utf-8")
    lint = planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path)
    run = [f for f in lint.json["findings"] if f["path"].startswith("configs/") or f["code"].startswith("PL9")]
    assert run == [], _report(lint)
    # ... and they really agree: another model in the config is drift.
    config.write_text(config.read_text(encoding="utf-8").replace("Qwen/Qwen3-8B", "Qwen/Qwen3-4B").replace("models--Qwen--Qwen3-8B", "models--Qwen--Qwen3-4B"), encoding="utf-8")
    codes = [f["code"] for f in planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path).json["findings"] if f["path"].startswith("configs/")]
    assert codes == ["PL903"]


def test_init_refuses_what_cannot_run(tmp_path, planlint):
    assert planlint("init", "x", "--trainer", "verl", "--method", "sft", cwd=tmp_path).status == 2
    assert planlint("init", "x", "--trainer", "trl", "--platform", "osmosis", cwd=tmp_path).status == 2
    assert not (tmp_path / "plans").exists()


# --------------------------------------------------------------------------- the launch-script reader


def test_the_script_reader_never_runs_and_notes_what_it_cannot_read(tmp_path):
    from planlint.services.trainer_configs.launch_script import UNKNOWN, parse_script

    marker = tmp_path / "ran"
    text = (
        f"touch {marker}\n"
        "MODEL=Qwen/Qwen3-8B\n"
        "LR=$(python -c 'print(1e-6)')\n"
        "python3 -m verl.trainer.main_ppo \\\n"
        "    actor_rollout_ref.model.path=$MODEL \\\n"
        "    'data.train_files=[\"a b.parquet\",c.parquet]' \\\n"
        "    actor_rollout_ref.actor.optim.lr=$LR \\\n"
        "    +trainer.extra=1 ~trainer.logger \\\n"
        "    trainer.n_gpus_per_node=`nproc` \"$@\"\n"
        "python3 -m verl.trainer.main_ppo data.seed=1\n"
    )
    script = parse_script(text, "run.sh", "verl")
    assert not marker.exists()
    values = {".".join(o.route): o.value for o in script.overrides}
    assert values["actor_rollout_ref.model.path"] == "Qwen/Qwen3-8B"
    assert values["data.train_files"] == ["a b.parquet", "c.parquet"]
    assert values["actor_rollout_ref.actor.optim.lr"] is UNKNOWN and values["trainer.n_gpus_per_node"] is UNKNOWN
    assert [o.op for o in script.overrides if o.route == ("trainer", "extra")] == ["+"]
    assert [o.op for o in script.overrides if o.route == ("trainer", "logger")] == ["~"]
    assert "data.seed" not in values  # the second launch command is not read...
    notes = "\n".join(script.notes)
    assert "run.sh:10: a second verl launch command" in notes  # ... and says so
    assert "run.sh:7: actor_rollout_ref.actor.optim.lr=$LR depends on $LR" in notes
    assert "run.sh:9: trainer.n_gpus_per_node=`nproc` depends on a command substitution" in notes
    assert "passes on the script's own arguments" in notes
    span = script.document.positions.values[("actor_rollout_ref", "model", "path")]
    assert (span.line, span.column) == (5, 34)


def test_a_script_that_launches_nothing_is_a_note(tmp_path):
    from planlint.services.trainer_configs.launch_script import parse_script

    script = parse_script("echo hello\n", "run.sh", "trl")
    assert script.overrides == [] and script.notes == ["run.sh: no trl launch command found (planlint looks for `trl sft|grpo ...` or `trl/scripts/NAME.py`); no override was read from it"]


def test_json_schema_copies_agree():
    root = Path(__file__).resolve().parent.parent
    assert json.loads((root / "schemas" / "plan.schema.json").read_text()) == json.loads((root / "src" / "planlint" / "data" / "plan.schema.json").read_text())


# --------------------------------------------------------------------------- the cache and the language server


def test_cached_results_follow_the_trainer_config_script_and_reward_code(tmp_path, planlint):
    lay_out(tmp_path, CASES / "trl" / "agrees.case")
    run = ("--format", "json", "--ignore", DATA_RULES, "plans/")
    assert _findings(planlint(*run, cwd=tmp_path)) == []
    config = tmp_path / "configs" / "trl" / "retail-refund-window.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("model_name_or_path: Qwen/Qwen3-8B", "model_name_or_path: Qwen/Qwen3-4B"), encoding="utf-8")
    assert [code for _, _, code in _findings(planlint(*run, cwd=tmp_path))] == ["PL903"]
    assert [code for _, _, code in _findings(planlint(*run, cwd=tmp_path))] == ["PL903"]  # from the cache now
    script = tmp_path / "configs" / "trl" / "retail-refund-window.sh"
    script.write_text(script.read_text(encoding="utf-8").replace("--seed 7", "--model_name_or_path Qwen/Qwen3-8B --seed 7"), encoding="utf-8")
    assert _findings(planlint(*run, cwd=tmp_path)) == []  # the script's override wins
    (tmp_path / "rewards" / "retail.py").unlink()
    assert sorted(code for _, _, code in _findings(planlint(*run, cwd=tmp_path))) == ["PL902", "PL902"]  # reward code no longer in the repository


def test_the_language_server_reports_in_trainer_configs_as_in_osmosis_configs(tmp_path, monkeypatch):
    """server.lint_document (what the server publishes): a finding in the trainer's YAML carries the YAML's
    path and line, as one in an Osmosis TOML carries the TOML's."""
    from planlint.server import lint_document

    lay_out(tmp_path, CASES / "verl" / "disagrees.case")
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "plans" / "plan.yaml"
    linted = lint_document(plan, plan.read_text(encoding="utf-8"), data_checks=False, root=tmp_path)
    in_config = [(f.path, f.line, f.code) for f in linted.findings if f.path == "configs/verl/retail-refund-window.yaml"]
    assert ("configs/verl/retail-refund-window.yaml", 7, "PL901") in in_config
    assert ("configs/verl/run.sh", 1, "PL901") in [(f.path, f.line, f.code) for f in linted.findings]


def test_a_suppression_inside_a_quoted_string_suppresses_nothing(tmp_path, planlint):
    """The attack: a pull request hides `# planlint: disable=...` in a quoted value of the trainer's YAML, or in a
    quoted word of its launch script, on the line of the drift it wants silenced. Only real comments suppress."""
    lay_out(tmp_path, CASES / "trl" / "agrees.case")
    config = tmp_path / "configs" / "trl" / "retail-refund-window.yaml"
    config.write_text(
        "model_name_or_path: Qwen/Qwen3-8B\n"
        "model_revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345\n"
        "datasets: [{path: json, data_files: data/retail/train.jsonl}]\n"
        'reward_funcs: [rewards.retail.db_state, rewards.retail.tone, rewards.retail.bonus, "# planlint: disable=PL903 -- hidden in a string"]\n'
        "use_peft: true\n", encoding="utf-8")
    script = tmp_path / "configs" / "trl" / "retail-refund-window.sh"
    script.write_text("trl grpo --config configs/trl/retail-refund-window.yaml --model_name_or_path Qwen/Qwen3-4B "
                      "--logging_dir 'logs # planlint: disable=PL903 -- hidden in a word'\n", encoding="utf-8")
    result = planlint("--format", "json", "--no-cache", "--ignore", DATA_RULES, "plans/", cwd=tmp_path)
    found = sorted(_findings(result))
    assert ("configs/trl/retail-refund-window.sh", 1, "PL903") in found, _report(result)  # the script's model
    assert ("configs/trl/retail-refund-window.yaml", 4, "PL903") in found, _report(result)  # rewards.retail.bonus, no grader
    assert not [f for f in result.json["findings"] if f["code"] in ("PL009", "PL010")], _report(result)  # no comment there at all
