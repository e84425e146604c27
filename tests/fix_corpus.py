"""Which rules attach a fix to what they report, seen by running every plan rule on a corpus.

The corpus is every rule fixture, every `--fix` fixture (`fix/`, `fix_passes/`)
and every rule's docstring examples. `FIXABLE` is the codes whose problems carried a
`Problem.fix` there: what the rules really do, to hold the `fixable=True`
registrations (and so `planlint rules`, `explain`, SARIF) against.
"""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES


def corpus() -> list[tuple[str, str]]:
    """(name, YAML text) of every plan and plan fragment the rules are shown on."""
    from planlint.rules import RULES

    files = sorted((FIXTURES / "rules").glob("*.yaml")) + sorted((FIXTURES / "fix").glob("*.input.yaml")) + sorted((FIXTURES / "fix_passes").glob("*.input.yaml"))
    texts = [(str(p.relative_to(FIXTURES)), p.read_text(encoding="utf-8")) for p in files]
    for code, rule in RULES.items():
        sections = rule.sections()
        texts += [(f"{code} fails", sections["fails"]), (f"{code} passes", sections["passes"])]
    return texts


def problems_with_fixes(services=None) -> dict[str, list[tuple[str, object]]]:
    """code -> [(corpus name, Problem)] for every problem that carried a fix (`services`: the rules' Services)."""
    from planlint.core.config import Config
    from planlint.core.loader import load_text
    from planlint.rules import PLAN_RULES
    from planlint.rules.base import Note, PlanContext, Services

    found: dict[str, list[tuple[str, object]]] = {}
    for name, text in corpus():
        loaded = load_text(text)
        if loaded.fatal or not isinstance(loaded.data, dict):
            continue
        ctx = PlanContext(data=loaded.data, path=name, config=Config(root=Path(FIXTURES)), services=services or Services())
        for rule in PLAN_RULES:
            for problem in rule.check(ctx):
                if not isinstance(problem, Note) and problem.fix is not None:
                    found.setdefault(problem.code or rule.code, []).append((name, problem))
    return found


FIXABLE = tuple(sorted(problems_with_fixes()))
