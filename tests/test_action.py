"""action.yml: schema, zizmor, and its steps run as the runner would run them (tests/action_harness.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from action_harness import copy_project, git, load_action, python_on_path, run_action
from conftest import ROOT, write
from github_server import FakeGitHub
from plan_overlay import REFERENCE
from planlint.formats.markdown import STICKY_MARKER

BIN = Path(sys.executable).parent
TOKEN = "ghp_" + "Ac7" * 12


def tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    assert found, f"{name} is a test dependency (pip install -e '.[test]')"
    return found


def readme_workflow() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- workflow:start -->\n```yaml\n(.*?)```\n<!-- workflow:end -->", readme, re.S)
    assert match, "README lost its workflow markers"
    return match.group(1)


def zizmor(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([tool("zizmor"), "--offline", "--no-config", "--color", "never", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


# --------------------------------------------------------------------------- static checks


def test_action_matches_the_schemastore_schema():
    proc = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ROOT / "action.yml")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_can_fail(tmp_path):
    broken = write(tmp_path / "action.yml", "name: x\ndescription: y\nruns:\n  using: composite\n  steps:\n    - run: echo hi\n")
    proc = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(broken)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0  # a composite run step without `shell:`


def test_zizmor_finds_nothing_in_the_action(tmp_path):
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    proc = zizmor("action.yml", cwd=tmp_path)
    assert proc.returncode == 0 and "No findings" in proc.stdout, proc.stdout + proc.stderr


def test_zizmor_would_catch_an_input_pasted_into_a_script(tmp_path):
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    text = text.replace('        case "$PLANLINT_FAIL_ON" in\n          error|warning|never) ;;',
                        '        echo "${{ inputs.paths }}"\n        case "$PLANLINT_FAIL_ON" in\n          error|warning|never) ;;', 1)
    write(tmp_path / "action.yml", text)
    proc = zizmor("action.yml", cwd=tmp_path)
    assert proc.returncode != 0 and "template-injection" in proc.stdout


def test_zizmor_and_schema_accept_the_readme_workflow(tmp_path):
    workflow = readme_workflow()
    assert "PLANLINT_COMMIT_SHA" in workflow  # the one value a user fills in
    write(tmp_path / ".github" / "workflows" / "planlint.yml", workflow.replace("PLANLINT_COMMIT_SHA", "5" * 40))
    proc = zizmor("--min-severity", "low", ".github/workflows/planlint.yml", cwd=tmp_path)
    assert proc.returncode == 0 and "No findings" in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                           str(tmp_path / ".github" / "workflows" / "planlint.yml")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_workflow_is_least_privilege():
    from ruamel.yaml import YAML

    workflow = YAML(typ="safe").load(readme_workflow())
    triggers = workflow[True] if True in workflow else workflow["on"]
    assert list(triggers) == ["pull_request", "pull_request_review", "push"]  # never pull_request_target
    assert triggers["pull_request_review"] == {"types": ["submitted", "dismissed"]}  # PL707 re-runs when a review arrives
    assert triggers["push"] == {"branches": ["main"]}
    assert workflow["permissions"] == {}
    lint = workflow["jobs"]["planlint"]
    assert lint["if"] == "github.event_name != 'push'"
    assert lint["permissions"] == {"contents": "read", "pull-requests": "read", "security-events": "write"}
    checkout = lint["steps"][0]
    assert checkout["with"] == {"persist-credentials": False, "fetch-depth": 0}
    assert "comment" not in lint["steps"][1]["with"]  # the job that reads the pull request's files cannot write to it
    comment = workflow["jobs"]["comment"]
    assert comment["permissions"] == {"pull-requests": "write"}  # write only where the comment is posted
    assert comment["needs"] == "planlint"
    assert not any("checkout" in step.get("uses", "") for step in comment["steps"])
    assert comment["steps"][-1]["with"]["comment"] is True and comment["steps"][-1]["with"]["report"]


def test_readme_workflow_analyses_main_for_code_scanning():
    """Code scanning compares a pull request's alerts with the base branch's analysis in the same category."""
    from ruamel.yaml import YAML

    workflow = YAML(typ="safe").load(readme_workflow())
    job = workflow["jobs"]["code-scanning"]
    assert job["if"] == "github.event_name == 'push'"
    assert job["permissions"] == {"contents": "read", "security-events": "write"}  # no comment, no pull-requests
    steps = job["steps"]
    assert steps[0]["with"] == {"persist-credentials": False}
    assert "comment" not in steps[1]["with"] and steps[1]["uses"].startswith("planlint/planlint@")
    pr_upload = next(step for step in workflow["jobs"]["planlint"]["steps"] if "upload-sarif" in step.get("uses", ""))
    assert steps[-1]["uses"] == pr_upload["uses"] and steps[-1]["uses"].startswith("github/codeql-action/upload-sarif@")
    assert steps[-1]["with"]["category"] == pr_upload["with"]["category"] == "planlint"


def test_inputs_reach_scripts_only_through_env_and_uses_are_pinned():
    raw = (ROOT / "action.yml").read_text(encoding="utf-8")
    action = load_action(ROOT / "action.yml")
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]
    uses = re.findall(r"uses: (\S+)@(\S+) # (v\d+\.\d+\.\d+)$", raw, re.M)
    assert [u[0] for u in uses] == ["actions/setup-python"]
    assert all(re.fullmatch(r"[0-9a-f]{40}", sha) for _, sha, _ in uses)
    assert set(action["inputs"]) == {
        "paths", "config", "diff-base", "fail-on", "sarif-file", "summary", "comment", "report", "github-token",
        "comment-author", "registry-url", "registry-token", "extras", "require-data", "python-version",
    }
    assert set(action["outputs"]) == {"errors", "warnings", "sarif-file", "report"}
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"


# --------------------------------------------------------------------------- the harness


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """The action as the runner downloads it, and a RUNNER_TEMP shared by the runs (planlint installed once)."""
    base = tmp_path_factory.mktemp("runner")
    action_dir = copy_project(ROOT, base / "_actions" / "planlint" / "planlint" / "main")
    temp = base / "temp"
    temp.mkdir()
    return {"action": action_dir, "temp": temp, "python": python_on_path(base / "hostedtoolcache" / "bin")}


def workspace(tmp_path: Path, base_plans: dict[str, str], head_plans: dict[str, str] | None = None) -> tuple[Path, str, str]:
    """A git repository: a base commit, then a head commit (the pull request). Returns (path, base, head)."""
    repo = tmp_path / "workspace"
    repo.mkdir()
    git(repo, "init", "-q")
    for name, text in base_plans.items():
        write(repo / "plans" / name, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for name, text in (head_plans or {}).items():
        write(repo / "plans" / name, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    return repo, base, git(repo, "rev-parse", "HEAD")


def run(runner, repo: Path, event: dict, event_name: str = "push", env: dict | None = None, **inputs):
    event_path = write(repo.parent / "event.json", json.dumps(event))
    return run_action(
        runner["action"], workspace=repo, runner_temp=runner["temp"], event_path=event_path, event_name=event_name,
        inputs={k.replace("_", "-"): v for k, v in inputs.items()}, python_bin=runner["python"],
        github={"token": TOKEN, "sha": git(repo, "rev-parse", "HEAD")}, env=env,
    )


LOOSENED = REFERENCE.replace('release: "2026.11.03"', "release: latest")
WARNED = REFERENCE.replace("frozen: true", "frozen: false")


@pytest.mark.integration
@pytest.mark.slow
def test_errors_fail_the_step_with_annotations_outputs_and_summary(runner, tmp_path):
    repo, _, _ = workspace(tmp_path, {"retail.yaml": REFERENCE, "other.yaml": WARNED.replace("name: ", "name: o-", 1)},
                           {"retail.yaml": LOOSENED})
    result = run(runner, repo, {"ref": "refs/heads/main"}, comment="true")
    assert result.status == 1, result
    assert result.step("Apply fail-on").status == 1
    lint = result.step("Lint plans")
    assert lint.status == 0
    assert "::error file=plans/retail.yaml,line=21,col=12,endLine=21,endColumn=18,title=PL102 dataset-release-floating::" in lint.stdout
    assert "::warning file=plans/other.yaml,line=30," in lint.stdout
    assert "diff mode" not in lint.stdout  # a push has no base: everything is linted
    assert result.outputs["errors"] == "1" and result.outputs["warnings"] == "1"
    sarif = json.loads(Path(result.outputs["sarif-file"]).read_text(encoding="utf-8"))
    assert sorted(r["ruleId"] for r in sarif["runs"][0]["results"]) == ["PL102", "PL205"]
    assert "| PL102 | dataset-release-floating | error | 1 |" in result.summary
    sha = git(repo, "rev-parse", "HEAD")
    assert f"(https://github.com/acme/plans/blob/{sha}/plans/retail.yaml#L21)" in result.summary
    assert "not a pull request" in result.step("Comment on the pull request").stderr


@pytest.mark.integration
@pytest.mark.slow
def test_fail_on_levels(runner, tmp_path):
    repo, _, _ = workspace(tmp_path, {"a.yaml": WARNED})
    push = {"ref": "refs/heads/main"}
    assert run(runner, repo, push).status == 0  # default fail-on: error; a warning passes
    warned = run(runner, repo, push, fail_on="warning")
    assert warned.status == 1 and warned.step("Apply fail-on").status == 1
    assert "errors: 0, warnings: 1 (fail-on: warning)" in warned.step("Apply fail-on").stdout
    write(repo / "plans" / "a.yaml", LOOSENED)
    never = run(runner, repo, push, fail_on="never", summary="false")
    assert never.status == 0 and never.outputs["errors"] == "1"
    assert never.summary == ""
    bad = run(runner, repo, push, fail_on="sometimes")
    assert bad.status == 2 and "fail-on must be error, warning or never" in bad.step("Lint plans").stdout
    assert bad.step("Apply fail-on").status is None


@pytest.mark.integration
@pytest.mark.slow
def test_a_broken_config_fails_the_step(runner, tmp_path):
    repo, _, _ = workspace(tmp_path, {"a.yaml": REFERENCE})
    write(repo / "ci.yaml", "select: 3\n")
    result = run(runner, repo, {"ref": "refs/heads/main"}, config="ci.yaml", sarif_file="out/p.sarif", paths="plans/a.yaml  plans/")
    assert result.status == 2 and "could not lint the plans (exit status 2)" in result.step("Lint plans").stdout
    assert "ci.yaml" in result.step("Lint plans").stderr


def pull_request_event(base: str, head: str, number: int = 7) -> dict:
    return {"action": "synchronize", "number": number,
            "pull_request": {"number": number, "base": {"sha": base, "ref": "main"}, "head": {"sha": head, "ref": "loosen"}}}


@pytest.mark.integration
@pytest.mark.slow
def test_missing_base_commit_is_explained(runner, tmp_path):
    repo, _, head = workspace(tmp_path, {"a.yaml": REFERENCE})
    result = run(runner, repo, pull_request_event("f" * 40, head), event_name="pull_request")
    assert result.status == 2
    assert f"the base revision {'f' * 40} is not in the checkout: use actions/checkout with fetch-depth: 0" in result.step("Lint plans").stdout


@pytest.mark.integration
@pytest.mark.slow
def test_pull_request_diff_mode_annotations_and_sticky_comment(runner, tmp_path):
    """The README's promise: a PR that loosens a release and raises the spend cap gets annotations on those
    lines, a summary, SARIF, a failing check, and one comment that the next push updates."""
    raised = LOOSENED.replace("max_spend: 250", "max_spend: 900")
    repo, base, head = workspace(tmp_path, {"retail.yaml": REFERENCE, "other.yaml": REFERENCE.replace("name: ", "name: o-", 1)},
                                 {"retail.yaml": raised})
    with FakeGitHub(TOKEN) as github:
        env = {"GITHUB_API_URL": github.url}
        first = run(runner, repo, pull_request_event(base, head), event_name="pull_request", env=env, comment="true")
        assert first.status == 1, first
        lint = first.step("Lint plans")
        assert f"diff mode against {base}" in lint.stdout
        annotations = [line for line in lint.stdout.splitlines() if line.startswith("::error ")]
        assert any("file=plans/retail.yaml,line=21," in a and "PL102" in a for a in annotations)
        assert any("file=plans/retail.yaml,line=61," in a and "PL703" in a for a in annotations)
        assert not any("plans/other.yaml" in a for a in annotations)  # unchanged plans are not linted
        assert len(github.comments) == 1 and github.comments[0]["body"].startswith(STICKY_MARKER)
        assert "PL703" in github.comments[0]["body"]

        write(repo / "plans" / "retail.yaml", REFERENCE.replace("max_spend: 250", "max_spend: 900"))
        git(repo, "commit", "-qam", "pin the release again")
        second = run(runner, repo, pull_request_event(base, git(repo, "rev-parse", "HEAD")), event_name="pull_request",
                     env=env, comment="true")
        assert second.outputs["errors"] != first.outputs["errors"]
        assert len(github.comments) == 1  # updated, not duplicated
        assert [r.method for r in github.requests].count("POST") == 1 and "PATCH" in [r.method for r in github.requests]
        assert "PL102" not in github.comments[0]["body"]
        for text in (first.stdout, first.stderr, second.stdout, second.stderr):
            assert TOKEN not in text


@pytest.mark.integration
@pytest.mark.slow
def test_attack_the_pr_author_posts_the_sticky_marker_first(runner, tmp_path):
    """Issue 10 item 7, as the runner runs the action: the author comments planlint's marker with "all
    clear" before the workflow runs. planlint writes its own comment (as github-actions[bot], the
    workflow token's identity) and never edits or adopts the author's."""
    repo, _, head = workspace(tmp_path, {"a.yaml": LOOSENED})
    event = {"ref": "refs/heads/x", "pull_request": {"number": 7}}
    forged = STICKY_MARKER + "\n## planlint\n\n✅ No findings in 1 plan."
    with FakeGitHub(TOKEN) as github:
        theirs = github.add_comment(forged, login="mallory")
        result = run(runner, repo, event, event_name="pull_request", env={"GITHUB_API_URL": github.url}, comment="true")
        step = result.step("Comment on the pull request")
        assert step.status == 0 and "::warning" not in step.stdout, step
        assert theirs["body"] == forged and "PATCH" not in [r.method for r in github.requests]
        ours = [c for c in github.comments if c is not theirs]
        assert len(ours) == 1 and ours[0]["user"]["login"] == "github-actions[bot]" and "PL102" in ours[0]["body"]
        assert "written by @mallory" in step.stderr
    assert result.status == 1 and TOKEN not in result.stdout + result.stderr


@pytest.mark.integration
@pytest.mark.slow
def test_attack_the_checkouts_config_cannot_route_the_registry_token(runner, tmp_path):
    """Issue 10 item 8, as the runner runs the action: the pull request's .planlint.yaml names its own
    server and AWS_SECRET_ACCESS_KEY (present in the job's environment) as the token's variable. The
    workflow names the real registry and token through the action's inputs."""
    from registry_server import RegistryServer, Reply

    secret = "aws-" + "Wk7" * 12
    repo, _, _ = workspace(tmp_path, {"a.yaml": REFERENCE.replace('release: "2026.11.03"', 'release: "2026.11.30"')})
    trusted, attacker = RegistryServer().start(), RegistryServer().start()
    attacker.default = Reply(200)  # "everything is published"
    trusted.published |= {("graders", "tau-retail-db-state", "1.4.2"), ("graders", "polite-tone-judge", "3.0.1")}
    try:
        config = {"registry": {"url": attacker.url, "token_env": "AWS_SECRET_ACCESS_KEY", "online": True, "timeout": 2}}
        write(repo / ".planlint.yaml", json.dumps(config))
        inputs = {"registry_url": trusted.url, "registry_token": TOKEN}
        refused = run(runner, repo, {"ref": "refs/heads/x"}, env={"AWS_SECRET_ACCESS_KEY": secret}, **inputs)
        assert refused.status == 2 and "the config does not choose the token's variable" in refused.step("Lint plans").stderr
        assert attacker.requests == [] and trusted.requests == []

        del config["registry"]["token_env"]
        write(repo / ".planlint.yaml", json.dumps(config))
        result = run(runner, repo, {"ref": "refs/heads/x"}, env={"AWS_SECRET_ACCESS_KEY": secret}, **inputs)
        assert result.status == 1 and result.outputs["errors"] == "1", result
        assert "PL105" in result.step("Lint plans").stdout  # the real registry answered: not published
        assert attacker.requests == []
        assert trusted.requests and {r.authorization for r in trusted.requests} == {f"Bearer {TOKEN}"}
        for text in (refused.stdout, refused.stderr, result.stdout, result.stderr, result.summary):
            assert secret not in text and TOKEN not in text
    finally:
        trusted.stop()
        attacker.stop()


@pytest.mark.integration
@pytest.mark.slow
def test_a_failing_comment_leaves_the_lint_result(runner, tmp_path):
    repo, _, head = workspace(tmp_path, {"a.yaml": LOOSENED})
    event = {"ref": "refs/heads/x", "pull_request": {"number": 9}}  # a PR number without a base: lint everything
    with FakeGitHub("ghp_" + "o" * 36) as github:  # the action's token is not this one: 401
        result = run(runner, repo, event, event_name="pull_request", env={"GITHUB_API_URL": github.url}, comment="true")
    step = result.step("Comment on the pull request")
    assert step.status == 0 and "::warning title=planlint comment::" in step.stdout and "401" in step.stdout
    assert result.status == 1 and result.step("Apply fail-on").status == 1
    assert TOKEN not in result.stdout + result.stderr


# --------------------------------------------------------------------------- a hostile checkout

SHADOWS = {
    # Each would run if an interpreter of the action imported from the workspace: it leaves a mark and,
    # where it can, lies about the result as the attack did (0 errors).
    "planlint/__init__.py": "{mark}\n__version__ = '0'\n",
    "planlint/__main__.py": "{mark}\nimport os\nopen(os.environ.get('GITHUB_OUTPUT', os.devnull), 'a').write('errors=0\\nwarnings=0\\n')\n",
    "planlint/github_event.py": "{mark}\nprint('')\n",
    "json.py": "{mark}\nraise SystemExit(0)\n",
    "venv/__init__.py": "{mark}\n",
    "venv/__main__.py": "{mark}\n",
    "pip/__init__.py": "{mark}\n",
    "pip/__main__.py": "{mark}\n",
    "ruamel/__init__.py": "{mark}\n",
    "argparse.py": "{mark}\n",
    "sitecustomize.py": "{mark}\n",
    "usercustomize.py": "{mark}\n",
}


def plant_shadows(repo: Path, marks: Path) -> None:
    for rel, body in SHADOWS.items():
        mark = f"open({str(marks / rel.replace('/', '_'))!r}, 'w').write('ran')"
        write(repo / rel, body.format(mark=mark))


@pytest.mark.integration
@pytest.mark.slow
def test_modules_in_the_checkout_never_run_inside_the_action(tmp_path):
    """Issue 10, hole 1: a pull request that adds `planlint/`, `json.py`, `venv/`, `pip/` (...) at the repository
    root must not get them imported by any interpreter the action starts: not while installing, not while linting,
    not in the step that holds the token. The counts are the true ones."""
    marks = tmp_path / "marks"
    marks.mkdir()
    repo, base, _ = workspace(tmp_path, {"retail.yaml": REFERENCE})
    plant_shadows(repo, marks)
    write(repo / "plans" / "retail.yaml", LOOSENED)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a pull request with shadow modules")
    head = git(repo, "rev-parse", "HEAD")

    # The shadows are live: an interpreter started in the workspace the old way imports them.
    probe = subprocess.run([sys.executable, "-c", "import json"], cwd=repo, capture_output=True, timeout=60)
    assert probe.returncode == 0 and (marks / "json.py").exists()
    (marks / "json.py").unlink()

    # A fresh runner: the install step runs too, in this workspace's presence.
    base_dir = tmp_path / "runner"
    fresh = {"action": copy_project(ROOT, base_dir / "_actions" / "planlint" / "planlint" / "main"),
             "temp": base_dir / "temp", "python": python_on_path(base_dir / "hostedtoolcache" / "bin")}
    fresh["temp"].mkdir()
    with FakeGitHub(TOKEN) as github:
        result = run(fresh, repo, pull_request_event(base, head), event_name="pull_request",
                     env={"GITHUB_API_URL": github.url}, comment="true")
        assert sorted(p.name for p in marks.iterdir()) == [], result.stdout + result.stderr
        assert result.step("Install planlint").status == 0, result.step("Install planlint").stderr
        lint = result.step("Lint plans").stdout
        annotations = sorted(re.findall(r"^::error file=plans/retail\.yaml,line=21,.*?title=(PL\d+)", lint, re.M))
        assert annotations == ["PL102", "PL702"], lint  # the release loosened, without a new baseline
        assert result.outputs["errors"] == "2" and result.outputs["warnings"] == "0"
        assert result.status == 1 and result.step("Apply fail-on").status == 1
        assert f"diff mode against {base}" in result.step("Lint plans").stdout
        assert len(github.comments) == 1 and "PL102" in github.comments[0]["body"]
    assert TOKEN not in result.stdout + result.stderr


def test_every_interpreter_the_action_starts_is_isolated():
    """The static half of the check above: each python command line in action.yml carries -I."""
    action = load_action(ROOT / "action.yml")
    commands = [line for step in action["runs"]["steps"] if "run" in step for line in step["run"].splitlines()
                if re.search(r"python3?\"? ", line)]
    assert commands
    for line in commands:
        for call in re.findall(r"python3?\"? (-\S+)?", line):
            assert call == "-I", line
    scripts = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert not re.search(r'^\s*"\$\w+/planlint"', scripts, re.M)  # no console script: python -I -m planlint


@pytest.mark.integration
@pytest.mark.slow
def test_the_readme_jobs_verify_the_approval_and_post_the_card(runner, tmp_path):
    """The README's two jobs: the lint job (pull-requests: read) runs PL707 against the reviews, red until an
    approval by a named approver arrives (pull_request_review); the comment job posts the card from its report."""
    draft = REFERENCE.replace("status: approved", "status: draft").replace("max_spend: 250", "max_spend: 600")
    approved = REFERENCE.replace("max_spend: 250", "max_spend: 1600").replace('approved_by: "@ml-leads"', 'approved_by: "@carol"')
    repo, base, head = workspace(tmp_path, {"retail.yaml": draft}, {"retail.yaml": approved})
    event = pull_request_event(base, head)
    event["pull_request"]["user"] = {"login": "bob"}
    with FakeGitHub(TOKEN) as github:
        github.add_pull(7, author="bob", head_sha=head)  # reviews are of the head the event names
        env = {"GITHUB_API_URL": github.url}
        github.add_review(7, "bob", "APPROVED")  # the author approving: not named, and would not count
        first = run(runner, repo, event, event_name="pull_request", env=env)
        assert first.status == 1, first
        lint = first.step("Lint plans")
        (annotation,) = [line for line in lint.stdout.splitlines() if line.startswith("::error ")]
        assert "PL707" in annotation and "@carol has not approved" in annotation
        assert [r.headers["Authorization"] for r in github.requests] == [f"Bearer {TOKEN}"]

        github.add_review(7, "carol", "APPROVED")
        review_event = dict(event, action="submitted", review={"state": "approved", "user": {"login": "carol"}})
        second = run(runner, repo, review_event, event_name="pull_request_review", env=env)
        assert second.status == 0 and second.outputs["errors"] == "0", second
        report = Path(second.outputs["report"])
        artifact = write(tmp_path / "artifact" / "planlint-report.json", report.read_text(encoding="utf-8"))

        posted = run(runner, repo, review_event, event_name="pull_request_review", env=env, report=str(artifact), comment="true")
        assert posted.status == 0, posted
        assert [s.name for s in posted.steps if s.status is not None and not s.uses] == ["Install planlint", "Comment on the pull request"]
        (comment,) = github.comments
        assert comment["body"].startswith(STICKY_MARKER)
        assert "💰 This pull request raises committed spend by 1,600 USD, to 1,600 USD." in comment["body"]
        assert "**plans/retail.yaml · retail-refund-window** · changed · status draft → approved" in comment["body"]
        assert "| budget.max\\_spend | 600 → 1,600 |" in comment["body"]
        for result in (first, second, posted):
            assert TOKEN not in result.stdout + result.stderr


@pytest.mark.integration
@pytest.mark.slow
def test_extras_are_checked_and_require_data_makes_a_missing_split_an_error(runner, tmp_path):
    repo, _, _ = workspace(tmp_path, {"a.yaml": REFERENCE})
    push = {"ref": "refs/heads/main"}
    bad = run(runner, repo, push, extras="s3, $(touch pwned)")
    assert bad.status == 2 and "extras: unknown extra" in bad.step("Install planlint").stdout
    assert not (runner["temp"] / "pwned").exists() and not (repo / "pwned").exists()  # never evaluated
    assert run(runner, repo, push).status == 0  # the reference plan's split files are not in the workspace: a note
    required = run(runner, repo, push, require_data="true")
    assert required.status == 1 and required.outputs["errors"] != "0"
    assert "PL006" in required.stdout
