"""planlint and the osmosis-ai SDK (0.3.8, its own code in a venv of the test's own) agree, case by case.

Every run fixture is laid out as a workspace (a real git repository) and
given to both sides. The SDK side runs its whole offline preflight, as
`osmosis train submit` / `osmosis eval submit` / `osmosis benchmark submit`
and `osmosis eval run` do before anything leaves the machine:

  the workspace contract     validate_workspace_directory_contract
  where the config lives     ensure_workspace_directory_config_path
  the loader                 load_train_submit_config / load_eval_submit_config / load_benchmark_submit_config
  the rollout's paths        validate_workspace_rollout_paths
  the backend preflight      validate_rollout_backend (the rollout's declared dependencies; then the
                             import of the entrypoint, which the SDK runs here, on these fixtures)
  the local commit check     workspace_repo._local_commit_exists (the remote one needs the network)
  eval-run values            eval_run.run up to its dataset: the [evaluation] values it types

planlint refuses a config when it reports a PL901 error, or a PL008 placeholder in a
run config (a blank the SDK would take literally). They must agree on every fixture;
the one kind of case they may not, an error only importing the code shows
(`# sdk: refuses at import`), must be refused by the SDK and not seen by planlint
(the documented limit, docs/plan-format.md). The pinned commit is compared with the
SDK's local signal; the rollout's pyproject.toml with what the SDK's own parsers
(tomllib, packaging) make of it.

`osmosis eval run` imports its runner (which needs the `eval` extra: fastapi,
litellm, ...) before it reads the values; the test gives it a stand-in runner that
stops the run where the real one would start, after every value was checked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from run_workspaces import WORKSPACES, _git, build_workspace, directives
from test_run_configs import CONFIGS, _template_repo, lay_out
from tool_venv import tool_python

from planlint.services.git_commits import ABSENT, AMBIGUOUS, FOUND, NOT_A_COMMIT, UNKNOWN, resolve_commit
from planlint.services.run_config import COMMIT_SHA

pytestmark = pytest.mark.integration

SDK = ["osmosis-ai==0.3.8"]

_SDK_PREFLIGHT = textwrap.dedent(
    r'''
    import json, math, os, sys, tomllib, types
    from pathlib import Path

    # `osmosis eval run` imports its runner (the `eval` extra) before it reads the values:
    # a stand-in that stops where the real runner would start.
    class Accepted(Exception):
        pass

    class _Stop:
        def __init__(self, *args, **kwargs):
            raise Accepted()

    runner = types.ModuleType("osmosis_ai.eval.local.runner")
    runner.EvalRunSpec = types.SimpleNamespace
    runner.LocalEvalOptions = types.SimpleNamespace
    runner.LocalEvalRunner = _Stop
    runner.LocalEvalError = type("LocalEvalError", (Exception,), {})
    sys.modules["osmosis_ai.eval.local.runner"] = runner

    from packaging.requirements import InvalidRequirement, Requirement
    from osmosis_ai.cli.errors import CLIError
    from osmosis_ai.platform.cli import eval_run
    from osmosis_ai.platform.cli.benchmark_config import load_benchmark_submit_config
    from osmosis_ai.platform.cli.eval_config import load_eval_submit_config
    from osmosis_ai.platform.cli.shared_config import validate_workspace_rollout_paths
    from osmosis_ai.platform.cli.training_config import load_train_submit_config
    from osmosis_ai.platform.cli.workspace_directory_contract import (
        _unsatisfied_rollout_requirements, ensure_workspace_directory_config_path,
        validate_rollout_backend, validate_workspace_directory_contract)
    from osmosis_ai.platform.cli.workspace_repo import _local_commit_exists

    LOAD = {"training": load_train_submit_config, "eval": load_eval_submit_config}
    DIRS = {"training": "configs/training", "eval": "configs/eval"}
    COMMANDS = {"training": "`osmosis train submit`", "eval": "`osmosis eval submit`"}
    LABELS = {"training": "Training", "eval": "Evaluation"}


    def pyproject(rollout_dir):
        """What the SDK's own parsers make of the rollout's pyproject.toml: the problems it reads past."""
        path = rollout_dir / "pyproject.toml"
        if not path.is_file():
            return None
        try:
            declared = tomllib.loads(path.read_text()).get("project", {}).get("dependencies")
        except (tomllib.TOMLDecodeError, AttributeError):
            return ["not TOML"]
        if declared is None:
            return []
        if not isinstance(declared, list):
            return ["dependencies not a list"]
        bad = []
        for raw in declared:
            try:
                Requirement(raw)
            except (InvalidRequirement, TypeError):
                bad.append(repr(raw))
        return bad


    def preflight(kind, config, workspace):
        ws = Path(workspace)
        os.chdir(ws)
        out = {"refused": None, "stage": None, "warnings": [], "local_commit": "n/a", "pyproject": None}
        stage = "load"
        try:
            if kind == "benchmark":
                load_benchmark_submit_config(Path(config).resolve())
                return out
            stage = "workspace contract"
            validate_workspace_directory_contract(ws)
            resolved = (ws / config).resolve()
            stage = "location"
            ensure_workspace_directory_config_path(resolved, ws, config_dir=DIRS[kind], command_label=COMMANDS[kind])
            stage = "load"
            loaded = LOAD[kind](resolved)
            stage = "rollout paths"
            validate_workspace_rollout_paths(rollout=loaded.experiment_rollout, entrypoint=loaded.experiment_entrypoint,
                                             workspace_directory=ws, command_label=LABELS[kind])
            rollout_dir = (ws / "rollouts" / loaded.experiment_rollout).resolve()
            out["pyproject"] = pyproject(rollout_dir)
            out["unsatisfied"] = [entry.problem for entry in _unsatisfied_rollout_requirements(rollout_dir)]
            stage = "backend preflight (import)"
            out["warnings"] = validate_rollout_backend(workspace_directory=ws, rollout=loaded.experiment_rollout,
                                                       entrypoint=loaded.experiment_entrypoint, command_label=COMMANDS[kind])
            if loaded.experiment_commit_sha:
                out["local_commit"] = _local_commit_exists(ws, loaded.experiment_commit_sha)
            if kind == "eval":
                stage = "eval run values"
                dataset = ws / ".sdk-agreement-rows.jsonl"
                dataset.write_text(json.dumps({"user_prompt": "a refund?", "ground_truth": "no"}) + "\n")
                try:
                    eval_run.run(resolved, dataset_file=str(dataset), yes=True)
                except Accepted:
                    pass
                else:
                    raise RuntimeError("osmosis eval run went past its stand-in runner")
                finally:
                    dataset.unlink()
        except Exception as exc:  # the SDK's refusals are CLIError; an import can raise anything
            out["refused"] = type(exc).__name__ + ": " + " ".join(str(exc).split())[:400]
            out["stage"] = stage
        return out


    jobs = json.loads(sys.stdin.read())
    print(json.dumps({job["id"]: preflight(job["kind"], job["config"], job["workspace"]) for job in jobs}))
    '''
)


def _git_workspace(root: Path) -> None:
    """A laid-out fixture as a git repository (`osmosis eval run` resolves its workspace with git)."""
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "the workspace")


def _planlint_view(result, configs: list[str]) -> dict:
    findings = result.json["findings"]
    refusing = [f for f in findings if (f["code"] == "PL901" and f["severity"] == "error") or (f["code"] == "PL008" and f["path"] in configs)]
    return {
        "refuses": bool(refusing),
        "why": [f"{f['path']}:{f['line']} {f['code']} {f['message']}" for f in refusing],
        "pyproject_warnings": [f for f in findings if f["code"] == "PL901" and f["path"].endswith("pyproject.toml")],
    }


@pytest.fixture(scope="module")
def sdk_python() -> Path:
    return tool_python("sdk", SDK, min_python=(3, 12))


def _cases(tmp_path: Path, planlint) -> list[dict]:
    """Every fixture, laid out, with planlint's view of it and the SDK jobs it asks for."""
    cases = []
    for index, config in enumerate(CONFIGS):
        root = tmp_path / f"toml-{index}"
        rel = lay_out(root, config)
        _git_workspace(root)
        cases.append({"id": f"{config.parent.name}/{config.name}", "root": root, "jobs": [(config.parent.name, rel)], "gap": False})
    templates = tmp_path / "templates"  # the SDK's own templates, as shipped
    _template_repo(templates, "draft")
    _git_workspace(templates)
    cases.append({"id": "templates", "root": templates, "jobs": [("training", "configs/training/t.toml"), ("eval", "configs/eval/t.toml")], "gap": False})
    for fixture in WORKSPACES:
        workspace = build_workspace(fixture, tmp_path / f"ws-{fixture.stem}")
        run = yaml.safe_load(workspace.files["plans/plan.yaml"])["run"]
        jobs = [(kind, run[key]) for kind, key in (("training", "training_config"), ("eval", "eval_config"), ("benchmark", "benchmark_config")) if key in run]
        assert jobs, fixture
        gap = "refuses at import" in " ".join(directives(fixture.read_text(encoding="utf-8")).get("sdk", []))
        cases.append({"id": f"workspaces/{fixture.stem}", "root": workspace.root, "jobs": jobs, "gap": gap})
    for case in cases:
        result = planlint("--format", "json", "--no-cache", "plans/", cwd=case["root"])
        assert result.status in (0, 1), result.err
        case["planlint"] = _planlint_view(result, [rel for _, rel in case["jobs"]])
    return cases


def test_planlint_and_the_sdk_agree_on_every_fixture(sdk_python, tmp_path, planlint, monkeypatch):
    cases = _cases(tmp_path, planlint)
    assert all(case["jobs"] for case in cases)
    jobs = [{"id": f"{case['id']}#{n}", "kind": kind, "config": str(case["root"] / rel) if kind == "benchmark" else rel, "workspace": str(case["root"])}
            for case in cases for n, (kind, rel) in enumerate(case["jobs"])]
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GIT_", "PYTHON", "OSMOSIS"))}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", HOME=str(tmp_path / "home"), NO_COLOR="1")
    (tmp_path / "home").mkdir()
    proc = subprocess.run([str(sdk_python), "-I", "-c", _SDK_PREFLIGHT], input=json.dumps(jobs), capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sdk = json.loads(proc.stdout.strip().splitlines()[-1])
    disagree, gaps = {}, []
    for case in cases:
        answers = [sdk[f"{case['id']}#{n}"] for n in range(len(case["jobs"]))]
        sdk_refuses = any(answer["refused"] for answer in answers)
        mine = case["planlint"]
        if case["gap"]:
            gaps.append(case["id"])
            assert sdk_refuses and not mine["refuses"], (case["id"], answers, mine)
            assert any(answer["stage"] == "backend preflight (import)" for answer in answers), answers
            continue
        if sdk_refuses != mine["refuses"]:
            disagree[case["id"]] = {"sdk": [(a["stage"], a["refused"]) for a in answers], "planlint": mine["why"]}
        # The rollout's pyproject.toml: planlint warns where the SDK's own parsers find what they read past.
        sdk_pyproject = [answer["pyproject"] for answer in answers if answer["pyproject"] is not None]
        if any(sdk_pyproject) != bool(mine["pyproject_warnings"]):
            disagree[case["id"] + " (pyproject.toml)"] = {"sdk": sdk_pyproject, "planlint": mine["pyproject_warnings"]}
        # The pinned commit: planlint's resolution against the SDK's local signal.
        for (_kind, rel), answer in zip(case["jobs"], answers, strict=True):
            if answer["local_commit"] == "n/a":
                continue
            sha = _commit_sha(case["root"], rel)
            found = resolve_commit(case["root"], sha)
            expected = {FOUND: True, ABSENT: False, AMBIGUOUS: False, NOT_A_COMMIT: False, UNKNOWN: None}[found.state]
            if found.state == UNKNOWN and found.why and "shallow" in found.why:
                expected = False  # the SDK's signal is a plain miss there; planlint will not call it absent
            if answer["local_commit"] != expected:
                disagree[f"{case['id']} (commit {sha})"] = {"sdk": answer["local_commit"], "planlint": found}
    assert not disagree, json.dumps(disagree, indent=1, default=str)
    assert gaps == ["workspaces/entrypoint-import-error"]
    stages = {answer["stage"] for answer in sdk.values() if answer["refused"]}
    # every stage of the preflight refused at least one fixture: the cases reach all of it
    assert stages >= {"workspace contract", "location", "load", "rollout paths", "backend preflight (import)", "eval run values"}, stages


def _commit_sha(root: Path, rel: str) -> str:
    from planlint.services.toml_file import tomllib

    sha = tomllib.loads((root / rel).read_text(encoding="utf-8"))["experiment"]["commit_sha"]
    assert COMMIT_SHA.match(sha)
    return sha


def test_the_venv_helper_says_why_it_skips(monkeypatch):
    """No interpreter new enough: a skip with the reason, never a silent pass."""
    from tool_venv import find_python

    monkeypatch.setenv("PLANLINT_NOPE_PYTHON", str(Path(shutil.which("true") or "/bin/true")))
    python, why = find_python((3, 99), "PLANLINT_NOPE_PYTHON")
    assert python is None and "PLANLINT_NOPE_PYTHON" in why
    monkeypatch.delenv("PLANLINT_NOPE_PYTHON")
    python, why = find_python((3, 99), "PLANLINT_NOPE_PYTHON")
    assert python is None and "no Python >= 3.99" in why
