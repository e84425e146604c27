"""The command line: output shapes, exit codes, colour, configuration."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REFERENCE_PLAN, ROOT, run_process, write

REF = REFERENCE_PLAN.read_text(encoding="utf-8")


def plan(name: str = "retail-refund-window", **replace: str) -> str:
    text = REF.replace("name: retail-refund-window", f"name: {name}")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


FLOATING = {'release: "2026.11.03"': "release: latest"}


def test_shipped_plans_are_clean(planlint):
    result = planlint("--format", "json", cwd=ROOT)  # default path: plans/
    assert result.status == 0, result
    assert result.json["findings"] == []
    assert result.json["files"] >= 3


def test_json_shape_is_the_spec(tmp_path, planlint):
    write(tmp_path / "plans" / "a.yaml", plan(**FLOATING))
    result = planlint("--format", "json", "plans/", cwd=tmp_path)
    assert result.status == 1
    data = result.json
    assert list(data) == ["version", "files", "findings", "summary", "notes"]
    assert data["version"] == 1 and data["files"] == 1
    assert data["summary"] == {"errors": 1, "warnings": 0}
    (finding,) = data["findings"]
    assert list(finding) == ["code", "name", "severity", "path", "line", "column", "end_line", "end_column", "message", "yaml_path"]
    line = next(i for i, l in enumerate(plan(**FLOATING).splitlines(), 1) if "release: latest" in l)
    assert finding == {
        "code": "PL102", "name": "dataset-release-floating", "severity": "error", "path": "plans/a.yaml",
        "line": line, "column": 12, "end_line": line, "end_column": 18,
        "message": finding["message"], "yaml_path": "dataset.release",
    }
    assert "latest" in finding["message"] and "pin" in finding["message"]


def test_paths_are_as_given(tmp_path, planlint):
    write(tmp_path / "plans" / "sub" / "a.yaml", plan(**FLOATING))
    assert planlint("--format", "json", "plans", cwd=tmp_path).json["findings"][0]["path"] == "plans/sub/a.yaml"
    assert planlint("--format", "json", "./plans/sub/a.yaml", cwd=tmp_path).json["findings"][0]["path"] == "./plans/sub/a.yaml"
    assert planlint("--format", "json", "plans/sub", cwd=tmp_path / "plans" / ".." ).json["findings"][0]["path"] == "plans/sub/a.yaml"


def test_text_output(tmp_path, planlint):
    write(tmp_path / "a.yaml", plan(**FLOATING))
    result = planlint("a.yaml", cwd=tmp_path)
    lines = result.out.splitlines()
    assert lines[0].startswith("a.yaml:") and lines[0].endswith("[dataset-release-floating]")
    assert " PL102 " in lines[0]
    assert "release: latest" in lines[1]
    assert lines[2].rstrip().endswith("^^^^^^")
    assert lines[2].index("^") == lines[1].index("latest")
    assert lines[-1] == "1 file checked: 1 error, 0 warnings."
    assert "\x1b[" not in result.out


def test_quiet_and_statistics(tmp_path, planlint):
    write(tmp_path / "a.yaml", plan(**FLOATING))
    quiet = planlint("--quiet", "a.yaml", cwd=tmp_path)
    assert quiet.out.count("\n") == 1 and quiet.out.startswith("a.yaml:")
    stats = planlint("--statistics", "a.yaml", cwd=tmp_path)
    assert "1  PL102  dataset-release-floating" in stats.out


def _run_on_tty(args: list[str], cwd: Path, env: dict) -> str:
    master, slave = pty.openpty()
    full_env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    full_env.pop("GITHUB_ACTIONS", None)
    proc = subprocess.Popen([sys.executable, "-m", "planlint", *args], cwd=cwd, stdout=slave, stderr=slave, env=full_env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(master)
    return b"".join(chunks).decode()


def test_colour_only_on_a_tty_and_never_with_no_color(tmp_path):
    write(tmp_path / "a.yaml", plan(**FLOATING))
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    coloured = _run_on_tty(["a.yaml"], tmp_path, {})
    if "NO_COLOR" in os.environ:
        pytest.skip("NO_COLOR is set in this environment")
    assert "\x1b[31m" in coloured
    assert "\x1b[" not in _run_on_tty(["a.yaml"], tmp_path, {"NO_COLOR": "1"})
    assert "\x1b[" not in run_process("a.yaml", cwd=tmp_path).out  # a pipe


def test_exit_codes(tmp_path, planlint):
    write(tmp_path / "clean.yaml", plan())
    write(tmp_path / "warn.yaml", plan("warn-only", **{"    frozen: true": "    frozen: false"}))
    write(tmp_path / "bad.yaml", plan("bad", **FLOATING))
    assert planlint("clean.yaml", cwd=tmp_path).status == 0
    warn = planlint("--format", "json", "warn.yaml", cwd=tmp_path)
    assert warn.status == 0 and warn.json["summary"] == {"errors": 0, "warnings": 1}
    assert planlint("bad.yaml", cwd=tmp_path).status == 1
    missing = planlint("nope.yaml", cwd=tmp_path)
    assert missing.status == 2 and "nope.yaml" in missing.err
    assert planlint("--format", "xml", "clean.yaml", cwd=tmp_path).status == 2


def test_default_path_is_plans(tmp_path, planlint):
    write(tmp_path / "plans" / "a.yaml", plan(**FLOATING))
    result = planlint("--format", "json", cwd=tmp_path)
    assert result.json["findings"][0]["path"] == "plans/a.yaml"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert planlint(cwd=empty).status == 2  # no plans/ directory here


def test_not_a_plan_when_named(tmp_path, planlint):
    write(tmp_path / "list.yaml", "- a\n- b\n")
    write(tmp_path / "v2.yaml", "apiVersion: planlint/v2\nkind: ExperimentPlan\n")
    write(tmp_path / "nokind.yaml", "apiVersion: planlint/v1\n")
    write(tmp_path / "dir" / "other.yaml", "apiVersion: v1\nkind: ConfigMap\n")
    result = planlint("--format", "json", "list.yaml", "v2.yaml", "nokind.yaml", "dir", cwd=tmp_path)
    found = [(f["path"], f["code"], f["line"], f["column"], f["yaml_path"]) for f in result.json["findings"]]
    assert found == [
        ("list.yaml", "PL004", 1, 1, ""),
        ("nokind.yaml", "PL004", 1, 1, "kind"),
        ("v2.yaml", "PL004", 1, 13, "apiVersion"),
    ]
    assert result.json["files"] == 3


def test_duplicate_plan_names(tmp_path, planlint):
    write(tmp_path / "plans" / "a.yaml", plan("same"))
    write(tmp_path / "plans" / "b.yaml", plan("same"))
    write(tmp_path / "plans" / "c.yaml", plan("other"))
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    (finding,) = result.json["findings"]
    assert (finding["code"], finding["path"], finding["line"], finding["yaml_path"]) == ("PL005", "plans/b.yaml", 5, "metadata.name")
    assert "plans/a.yaml" in finding["message"]


def test_secret_value_is_never_repeated(tmp_path, planlint):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    write(tmp_path / "a.yaml", plan(**{"  approved_by: \"@ml-leads\"": f"  approved_by: {token}"}))
    for fmt in ("text", "json"):
        result = planlint("--format", fmt, "a.yaml", cwd=tmp_path)
        assert "PL801" in result.out and token not in result.out and token[:12] not in result.out


def test_internal_error_is_one_line_exit_2(tmp_path, planlint, monkeypatch):
    from planlint.rules import decision

    def boom(ctx):
        raise RuntimeError("rule exploded\nsecond line")
        yield  # pragma: no cover

    monkeypatch.setattr(decision.decision_on_train, "check", boom)
    write(tmp_path / "a.yaml", plan())
    result = planlint("a.yaml", cwd=tmp_path)
    assert result.status == 2
    assert result.err.count("\n") == 1 and "internal error" in result.err and "report" in result.err
    assert "Traceback" not in result.err


def test_output_file(tmp_path, planlint):
    write(tmp_path / "a.yaml", plan(**FLOATING))
    result = planlint("--format", "json", "--output", "out.json", "a.yaml", cwd=tmp_path)
    assert result.status == 1 and result.out == ""
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["errors"] == 1


def test_schema_command_prints_the_schema(planlint):
    result = planlint("schema")
    assert json.loads(result.out) == json.loads((ROOT / "schemas" / "plan.schema.json").read_text())


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag, tmp_path):
    from planlint import __version__

    result = run_process(flag, cwd=tmp_path)  # a directory without plans: the flag alone decides
    assert (result.status, result.out, result.err) == (0, f"planlint {__version__}\n", "")


def test_python_dash_m_and_console_script(tmp_path):
    write(tmp_path / "plans" / "a.yaml", plan())
    assert run_process(cwd=tmp_path).status == 0
    script = shutil.which("planlint")
    if script and Path(script).resolve().parent == Path(sys.executable).resolve().parent:
        assert subprocess.run([script, "rules"], capture_output=True).returncode == 0


# --------------------------------------------------------------------------- configuration


def test_config_discovered_upward_and_applied(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "ignore: [PL1]\nseverity: {PL205: error}\n")
    write(tmp_path / "plans" / "a.yaml", plan(**FLOATING, **{"    frozen: true": "    frozen: false"}))
    result = planlint("--format", "json", ".", cwd=tmp_path / "plans")
    assert [(f["code"], f["severity"]) for f in result.json["findings"]] == [("PL205", "error")]
    assert result.status == 1


def test_pyproject_tool_table(tmp_path, planlint):
    write(tmp_path / "pyproject.toml", "[project]\nname='x'\n\n[tool.planlint]\nselect = ['PL2']\n")
    write(tmp_path / "a.yaml", plan(**FLOATING, **{"    frozen: true": "    frozen: false"}))
    result = planlint("--format", "json", "a.yaml", cwd=tmp_path)
    assert [f["code"] for f in result.json["findings"]] == ["PL205"]


def test_planlint_yaml_wins_over_pyproject_and_pyproject_without_table_is_skipped(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "ignore: [PL102]\n")
    write(tmp_path / "sub" / "pyproject.toml", "[project]\nname='x'\n")
    write(tmp_path / "sub" / "a.yaml", plan(**FLOATING))
    assert planlint("--format", "json", "a.yaml", cwd=tmp_path / "sub").json["findings"] == []


def test_select_and_ignore_specificity(tmp_path, planlint):
    write(tmp_path / "a.yaml", plan(**FLOATING, **{"    frozen: true": "    frozen: false"}))
    codes = lambda *a: [f["code"] for f in planlint("--format", "json", *a, "a.yaml", cwd=tmp_path).json["findings"]]
    assert codes() == ["PL102", "PL205"]
    assert codes("--select", "PL1") == ["PL102"]
    assert codes("--ignore", "PL102") == ["PL205"]
    assert codes("--select", "PL205", "--ignore", "PL2") == ["PL205"]  # more specific select wins
    assert codes("--select", "PL2", "--ignore", "PL2") == []  # tie: ignore wins


def test_config_override_flag(tmp_path, planlint):
    write(tmp_path / "custom.yaml", "ignore: [PL102]\n")
    write(tmp_path / ".planlint.yaml", "select: [PL9]\n")
    write(tmp_path / "a.yaml", plan(**FLOATING))
    assert planlint("--format", "json", "--config", "custom.yaml", "a.yaml", cwd=tmp_path).json["findings"] == []
    result = planlint("--config", "missing.yaml", "a.yaml", cwd=tmp_path)
    assert result.status == 2 and "missing.yaml" in result.err


@pytest.mark.parametrize(
    "config, needle",
    [
        ("select: [PL102\n", ".planlint.yaml:"),
        ("colour: true\n", "unknown setting"),
        ("severity: {PL205: fatal}\n", "severity"),
        ("max_file_size: -1\n", "max_file_size"),
        ("max_spend_limit: {usd: 10}\n", "max_spend_limit"),
        ("- a\n", "mapping"),
        ("select: [E501]\n", "select"),
        ("exclude: 3\n", "exclude"),
    ],
)
def test_broken_config_is_exit_2_naming_file_and_problem(tmp_path, planlint, config, needle):
    write(tmp_path / ".planlint.yaml", config)
    write(tmp_path / "a.yaml", plan())
    result = planlint("a.yaml", cwd=tmp_path)
    assert result.status == 2, result
    assert ".planlint.yaml" in result.err and needle in result.err
    assert "Traceback" not in result.err


def test_broken_pyproject(tmp_path, planlint):
    write(tmp_path / "pyproject.toml", "[tool.planlint]\nselect = [\n")
    write(tmp_path / "a.yaml", plan())
    result = planlint("a.yaml", cwd=tmp_path)
    assert result.status == 2 and "pyproject.toml" in result.err


def test_exclude_globs(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", 'exclude: ["plans/archive/**", "**/*.draft.yaml"]\n')
    write(tmp_path / "plans" / "archive" / "old.yaml", plan("old", **FLOATING))
    write(tmp_path / "plans" / "x.draft.yaml", plan("draft", **FLOATING))
    write(tmp_path / "plans" / "live.yaml", plan("live", **FLOATING))
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    assert [f["path"] for f in result.json["findings"]] == ["plans/live.yaml"]
    named = planlint("--format", "json", "plans/archive/old.yaml", cwd=tmp_path)
    assert named.json["findings"] == [] and named.json["files"] == 0


def test_max_spend_limit(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "max_spend_limit: {USD: 100}\n")
    write(tmp_path / "a.yaml", plan(**{"  estimated_cost: 180 ": "  # estimated_cost: 180 "}))
    result = planlint("--format", "json", "a.yaml", cwd=tmp_path)
    assert [f["code"] for f in result.json["findings"]] == ["PL505"]


def test_exclude_patterns_without_a_slash_match_names_at_any_depth(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", 'exclude: ["*.yml", "archive", "old.yaml", "drafts/"]\n')
    for rel in ("plans/deep/er/c.yml", "plans/archive/x.yaml", "plans/team/old.yaml", "plans/drafts/d.yaml", "plans/live.yaml"):
        write(tmp_path / rel, plan(rel.replace("/", "-").replace(".", "-"), **FLOATING))
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    assert [f["path"] for f in result.json["findings"]] == ["plans/live.yaml"]


@pytest.mark.parametrize(
    "pyproject",
    [
        "[tool.planlint.severity]\nPL102 = 'warning'\n",
        "[tool]\nplanlint = {severity = {PL102 = 'warning'}}\n",
        "[ tool.planlint ]\nseverity = {PL102 = 'warning'}\n",
    ],
)
def test_every_toml_spelling_of_the_tool_table_is_found(tmp_path, planlint, pyproject):
    write(tmp_path / "pyproject.toml", pyproject)
    write(tmp_path / "a.yaml", plan(**FLOATING))
    result = planlint("--format", "json", "a.yaml", cwd=tmp_path)
    assert [f["severity"] for f in result.json["findings"]] == ["warning"]


def test_a_pyproject_that_mentions_planlint_but_does_not_parse_is_exit_2(tmp_path, planlint):
    write(tmp_path / "pyproject.toml", "[tool.planlint\nselect = ['PL1']\n")
    write(tmp_path / "a.yaml", plan())
    result = planlint("a.yaml", cwd=tmp_path)
    assert result.status == 2 and "pyproject.toml" in result.err


def test_select_naming_no_rule_is_exit_2(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "select: [PL999]\n")
    write(tmp_path / "a.yaml", plan())
    result = planlint("a.yaml", cwd=tmp_path)
    assert result.status == 2 and "PL999" in result.err


def test_select_and_ignore_repeat_like_ruff(tmp_path, planlint):
    write(tmp_path / "a.yaml", plan(**FLOATING, **{"    frozen: true": "    frozen: false"}))
    codes = lambda *a: [f["code"] for f in planlint("--format", "json", *a, "a.yaml", cwd=tmp_path).json["findings"]]
    assert codes("--ignore", "PL102", "--ignore", "PL205") == []
    assert codes("--select", "PL102", "--select", "PL205") == ["PL102", "PL205"]
    result = planlint("--select", "PL9999", "a.yaml", cwd=tmp_path)
    assert result.status == 2 and "PL9999" in result.err


def test_uppercase_suffixes_are_discovered(tmp_path, planlint):
    write(tmp_path / "plans" / "A.YAML", plan("upper-a", **FLOATING))
    write(tmp_path / "plans" / "b.Yml", plan("upper-b", **FLOATING))
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    assert sorted(f["path"] for f in result.json["findings"]) == ["plans/A.YAML", "plans/b.Yml"]
