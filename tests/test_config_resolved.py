"""The configuration is resolved once per run (issue 11): which rules run and at what
severity is decided once, not per file or per rule check. Proved by counting the
prefix matches (Config.enabled), never by timing."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

from planlint.core.config import Config
from planlint.engine.lint import lint_file
from planlint.engine.run import lint_paths
from planlint.rules import RULES, resolved

ROOT = Path(__file__).resolve().parent.parent


def _plans(tmp_path: Path, copies: int) -> Path:
    plans = tmp_path / "plans"
    plans.mkdir()
    sources = sorted((ROOT / "plans").glob("*.yaml")) + sorted((ROOT / "examples").glob("*.yaml"))
    for index in range(copies):
        source = sources[index % len(sources)]
        shutil.copyfile(source, plans / f"{index:02d}-{source.name}")
    return plans


def _counting(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = Config.enabled

    def enabled(self, code):
        calls.append(code)
        return real(self, code)

    monkeypatch.setattr(Config, "enabled", enabled)
    return calls


def test_a_run_matches_select_and_ignore_once_per_rule_however_many_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _plans(tmp_path, 12)
    calls = _counting(monkeypatch)
    report = lint_paths(["plans"], Config(root=tmp_path, ignore=["PL2"]), jobs=1)
    assert report.files == 12 and report.findings
    assert sorted(calls) == sorted(RULES)  # once per rule for the whole run, not per file
    assert not any(f.code.startswith("PL2") for f in report.findings)


def test_a_resolved_config_is_not_resolved_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plans = _plans(tmp_path, 3)
    config = resolved(Config(root=tmp_path, severity={"PL506": "warning"}))
    assert resolved(config) is config
    calls = _counting(monkeypatch)
    for path in sorted(plans.iterdir()):
        lint_file(f"plans/{path.name}", path, True, config)
    lint_paths(["plans"], config, jobs=1)
    assert calls == []


def test_the_selection_is_frozen_and_travels_to_worker_processes():
    config = resolved(Config(select=["PL1", "PL5"], ignore=["PL105"], severity={"PL101": "warning"}))
    rules = config.rules
    assert "PL101" in rules and "PL105" not in rules and "PL201" not in rules
    assert rules.severity("PL101", "error") == "warning" and rules.severity("PL102", "error") == "error"
    try:
        rules.enabled = frozenset()  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("a RuleSelection can be changed")
    copy = pickle.loads(pickle.dumps(config))  # a spawned worker receives the config pickled
    assert copy.rules == rules and copy == config
