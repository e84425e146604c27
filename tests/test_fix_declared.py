"""A rule declares its fix beside its check: `Problem(route, message, fix=...)`.

`fixable=True` on the registration (what `planlint rules`, `explain` and SARIF
say) must be exactly the rules that attach fixes; the fixes are symbolic
(`Replace`, `Insert`), turned into text by the rule-agnostic machinery; and a
fix that costs a lookup is worked out by `--fix` only, never by a plain lint.
"""

from __future__ import annotations

import shutil

from conftest import FIXTURES
from fix_corpus import problems_with_fixes

FIX = FIXTURES / "fix"


def test_fixable_registrations_are_the_rules_that_attach_fixes():
    from planlint.rules import RULES

    attached = set(problems_with_fixes())
    declared = {code for code, rule in RULES.items() if rule.fixable}
    assert not attached - declared, f"attach a Problem.fix but are not registered fixable=True: {sorted(attached - declared)}"
    assert not declared - attached, f"registered fixable=True but attach no fix on any fixture or docstring example: {sorted(declared - attached)}"


def test_attached_fixes_are_symbolic_changes(tmp_path):
    """Every fix a rule attaches, worked out with the fixtures' catalog, is Replace/Insert changes at routes;
    each fixable rule has a fixture or example where its fix works out."""
    from planlint.core.config import load_config
    from planlint.rules.base import Fix, Insert, Replace, Services, fix_of
    from planlint.services.publications import build

    shutil.copy(FIX / "catalog.yaml", tmp_path / "catalog.yaml")
    (tmp_path / ".planlint.yaml").write_text("catalog: catalog.yaml\n", encoding="utf-8")
    services = Services(publications=build(load_config(cwd=tmp_path), online=False, use_cache=False))
    worked_out = set()
    for code, found in problems_with_fixes(services).items():
        for name, problem in found:
            assert isinstance(problem.fix, Fix) or callable(problem.fix), (code, name)
            fix = fix_of(problem)
            if fix is None:  # not certain here (e.g. a currency that disagrees)
                continue
            worked_out.add(code)
            assert isinstance(fix, Fix) and fix.summary and fix.changes, (code, name)
            for change in fix.changes:
                assert isinstance(change, (Replace, Insert)), (code, name, change)
                assert isinstance(change.route, tuple) and change.route, (code, name, change)
    assert worked_out == set(problems_with_fixes())


def _counting(monkeypatch, module, name: str, calls: list) -> None:
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


def test_a_lint_without_fix_never_works_out_a_deferred_fix(tmp_path, monkeypatch):
    """The catalog lookup of PL102/PL302 and the parsing of PL502 run under --fix only (counted, not timed)."""
    from planlint.core.config import load_config
    from planlint.engine.lint import lint_file
    from planlint.modes.fixes import fix_paths
    from planlint.rules import budget, graders, pinning
    from planlint.rules.base import Services
    from planlint.services.publications import build

    calls: list[str] = []
    _counting(monkeypatch, pinning, "pin_newest", calls)
    monkeypatch.setattr(graders, "pin_newest", pinning.pin_newest)
    _counting(monkeypatch, budget, "_spend_fix", calls)
    shutil.copy(FIX / "catalog.yaml", tmp_path / "catalog.yaml")
    (tmp_path / ".planlint.yaml").write_text("catalog: catalog.yaml\n", encoding="utf-8")
    plan = tmp_path / "plan.yaml"
    shutil.copy(FIX / "indented.input.yaml", plan)
    config = load_config(cwd=tmp_path)
    services = Services(publications=build(config, online=False, use_cache=False))

    result = lint_file("plan.yaml", plan, True, config, services)
    assert {"PL102", "PL302", "PL502"} <= {f.code for f in result.findings}
    assert calls == []

    outcome = fix_paths([str(plan)], config, services)
    assert outcome.fixed and "pin_newest" in calls and "_spend_fix" in calls
    assert plan.read_bytes() == (FIX / "indented.expected.yaml").read_bytes()
