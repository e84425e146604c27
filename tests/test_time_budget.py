"""The largest documents planlint accepts are linted, and rendered in every format, with work linear in their size.

The loader caps what a file can hold (1 MiB, 100,000 values after alias
expansion, 64 levels); past the parser, schema validation and every rule
walk the data once, so they are linear in that capped size, and
`limits.time_budget` is checked between the stages as the last line of
defence. These tests build the worst documents within the limits: many
values, many keys (one finding each), a 1 MiB string made of the
characters the credential patterns (PL801) react to, a 1 MiB suppression
comment, and 1 MiB of suppression comments (one per finding, or unused).

No test here reads a clock: speed is measured by bench/, side by side. A test
counts work instead (Python calls, at two sizes: linear work doubles, quadratic
work quadruples), or injects the budget.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from conftest import REFERENCE_PLAN, run_process, write
from planlint.core.config import Config
from planlint.core.loader import DEFAULT_MAX_FILE_SIZE
from planlint.engine.lint import lint_file
from planlint.engine.run import finish
from planlint.formats.reporters import REPORTERS

REF = REFERENCE_PLAN.read_text(encoding="utf-8")
MIB = DEFAULT_MAX_FILE_SIZE


def _lines(template: str, budget: int) -> str:
    count = budget // len(template % 0)
    return "".join(template % i for i in range(count))


# name -> (the document at a fraction of the largest size, the codes it gives)
CASES = {
    # just under max_nodes: the reference plan's values plus 99,500 more
    "99,5k-values": (lambda f: REF + "x-data: [" + ",".join(["0"] * int(99_500 * f)) + "]\n", set()),
    # 1 MiB of unknown keys: one PL003 each (47,000 findings)
    "1MiB-of-keys": (lambda f: REF + _lines("unknown-key-%06d: 1\n", int((MIB - len(REF)) * f)), {"PL003"}),
    # 1 MiB string of what the PL801 patterns and the loader react to, never completing a match
    "1MiB-credential-prefixes": (
        lambda f: REF + "x-s: '" + "-----BEGIN A B C sk-gh" + ("p_AKIA xox- hf_ AIza sk-proj- github_pat_ -----BEGIN RSA " * int(14_000 * f)) + "'\n", set(),
    ),
    "1MiB-credential-prefixes-as-keys": (lambda f: REF + "x-k:\n" + _lines("  sk-%06d ghp github_pat -----BEGIN A B: 1\n", int((MIB - len(REF) - 10) * f)), set()),
    # one suppression comment of 1 MiB (spaces where the pattern has optional spaces)
    "1MiB-suppression-comment": (lambda f: REF + "# planlint: disable=" + " " * int((MIB - len(REF) - 40) * f) + "x\n", {"PL009", "PL010"}),
    "1MiB-suppression-reason": (lambda f: REF + "# planlint: disable=PL003 --" + " a" * int((MIB - len(REF) - 60) // 2 * f) + " #x\n", {"PL010"}),
    # 1 MiB of findings each silenced by its own comment, and of comments silencing nothing
    "1MiB-of-used-suppressions": (lambda f: REF + _lines("k%06d: 1  # planlint: disable=PL003 -- r\n", int((MIB - len(REF)) * f)), set()),
    "1MiB-of-unused-suppressions": (lambda f: REF + _lines("x-k%06d: 1  # planlint: disable=PL801\n", int((MIB - len(REF)) * f)), {"PL009", "PL010"}),
}


def _lint_and_render(path: Path, config: Config):
    report = finish([lint_file("plan.yaml", path, True, config)], config)
    for reporter in REPORTERS.values():
        reporter(report, color=False, quiet=False, statistics=True)
    return report


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_largest_documents_are_linted_and_rendered(case, tmp_path):
    """At full size: exactly the expected findings. The per-file budget is set out of
    reach, so that a busy machine cannot turn this into a PL006; the budget itself is
    tested below, and the work is counted by the next test."""
    build, codes = CASES[case]
    text = build(1.0)
    assert len(text.encode()) <= MIB, len(text.encode())
    path = write(tmp_path / "plan.yaml", text)
    report = _lint_and_render(path, Config(root=tmp_path, limits={"time_budget": 3600.0}))
    assert {f.code for f in report.findings} == codes, sorted({f.code for f in report.findings})


def _calls(path: Path, config: Config) -> int:
    """Python and builtin function calls made while linting and rendering `path`."""
    _lint_and_render(path, config)  # once first: imports and compiled schema are not the document's work
    count = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(profile)
    try:
        _lint_and_render(path, config)
    finally:
        sys.setprofile(None)
    return count[0]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_work_grows_linearly_with_the_document(case, tmp_path):
    """Twice the document, at most about twice the calls (quadratic work would be four times)."""
    build, _ = CASES[case]
    config = Config(root=tmp_path, limits={"time_budget": 3600.0})
    small = _calls(write(tmp_path / "small" / "plan.yaml", build(1 / 16)), config)
    large = _calls(write(tmp_path / "large" / "plan.yaml", build(1 / 8)), config)
    assert large <= 2.5 * small, (case, small, large)


def test_the_time_budget_bounds_the_rules_not_only_the_parser(tmp_path):
    """A budget that parsing fits in but the rules do not: the rest is skipped with a PL006."""
    write(tmp_path / ".planlint.yaml", "limits: {time_budget: 0.000001}\n")
    write(tmp_path / "plans" / "a.yaml", REF.replace('release: "2026.11.03"', "release: latest"))
    result = run_process("--format", "json", "plans", cwd=tmp_path)
    assert result.status == 1, result
    findings = result.json["findings"]
    assert [f["code"] for f in findings] == ["PL006"], findings
    assert re.match(r"checking took longer than 1e-06s \(limit time_budget\): PL\d{3} and the rules after it did not run$", findings[0]["message"])


@pytest.mark.parametrize("bad", [".nan", ".inf", "0", "-1", "true"])
def test_a_limit_must_be_a_finite_positive_number(bad, tmp_path):
    write(tmp_path / ".planlint.yaml", f"limits: {{time_budget: {bad}}}\n")
    write(tmp_path / "plans" / "a.yaml", REF)
    result = run_process("plans", cwd=tmp_path)
    assert result.status == 2 and "limits.time_budget" in result.err and "expected a positive number" in result.err, result


@pytest.mark.parametrize("pattern_source", ["suppressions", "secrets"])
def test_no_pattern_backtracks_on_a_long_line(pattern_source):
    """Every pattern that reads plan text, against 200,000-character near-misses: no backtracking."""
    from planlint.core import suppressions
    from planlint.rules import secrets

    patterns = [suppressions._COMMENT, suppressions._CODE] if pattern_source == "suppressions" else [p for _, p in secrets._PATTERNS]
    n = 200_000
    near_misses = [
        "# planlint: disable=" + " " * n + "x",
        "# planlint: disable=" + "A, " * (n // 3) + "-",
        "# planlint: disable=A --" + " " * n + "\t#",
        "# planlint: disable=A --" + " a #" * (n // 4) + "\x0b",
        "#" * n + " planlint:",
        "-----BEGIN " + "A " * (n // 2) + "PUBLIC KEY-----",
        "-----BEGIN " * (n // 11),
        "sk-" * (n // 3),
        "sk-proj-" + "a" * 15 + "!" + "sk-" * (n // 3),
        "ghp_" * (n // 4),
        "xoxb-" * (n // 5),
        "AKIA" + "A" * n,
        "AIza" * (n // 4),
    ]
    # The regex engine's steps cannot be counted from Python, so this one test reads a
    # clock: the CPU time of this process (a busy neighbour does not add to it), with a
    # bound that only catches a hang. A linear search here takes about a millisecond;
    # a backtracking one, quadratic in 200,000 characters, takes minutes.
    for pattern in patterns:
        for text in near_misses:
            start = time.process_time()
            pattern.search(text)
            assert time.process_time() - start < HANG_CPU_SECONDS, (pattern.pattern, text[:40])


HANG_CPU_SECONDS = 10.0


def test_the_data_rules_time_is_bounded_by_data_time_budget_not_the_per_file_budget(planlint, tmp_path, monkeypatch):
    """Issue 16 review: a data check that takes longer than `limits.time_budget` (5 s) must not
    cut the file short: the data rules are bounded by `data.time_budget`, and the rules after
    them still run under their own 5 s. The data check is made to take 30 s on an injected
    clock (the engine's), so no real time is needed."""
    import types

    import planlint.engine.lint as engine
    import planlint.services.split_data as split_data

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    row = '{"customer_id": "%s", "created_at": "2026-01-01", "prompt": "p %s"}\n'
    write(repo / "data" / "train-0.jsonl", row % ("c1", 1) + row % ("shared", 2))
    write(repo / "data" / "train-1.jsonl", row % ("c3", 3))
    write(repo / "data" / "eval.jsonl", row % ("shared", 4) + row % ("c5", 5))
    plan = REF.replace("path: data/retail/train.jsonl", "path: data/train-*.jsonl").replace("path: data/retail/eval.jsonl", "path: data/eval.jsonl")
    plan = plan.replace("estimated_cost: 180", "estimated_cost: 300")  # over max_spend: a PL5xx finding
    write(repo / "plans" / "a.yaml", plan)
    write(repo / ".planlint.yaml", "data: {time_budget: 3600}\n")  # the default limits.time_budget: 5 s

    offset = [0.0]
    monkeypatch.setattr(engine, "time", types.SimpleNamespace(monotonic=lambda: time.monotonic() + offset[0]))
    real = split_data.check_split_data
    calls = []

    def slow_check(*args, **kwargs):
        calls.append(1)
        result = real(*args, **kwargs)
        offset[0] += 30.0  # the check took 30 s, well within data.time_budget
        return result

    monkeypatch.setattr(split_data, "check_split_data", slow_check)
    result = planlint("--no-cache", "--format", "json", "plans", cwd=repo)
    findings = result.json["findings"]
    codes = {f["code"] for f in findings}
    assert calls == [1], calls
    assert not [f for f in findings if "took longer than" in f["message"]], findings
    assert "PL006" not in codes, findings
    assert "PL207" in codes, findings  # the data rules report
    assert any(code.startswith("PL5") for code in codes), findings  # and so do the rules after them
    assert result.status == 1, result


def test_the_per_file_budget_still_counts_the_rules_after_the_data_rules(planlint, tmp_path, monkeypatch):
    """The data rules' time is not counted; the time of every other rule still is: a rule after
    them that blows the budget (here: the clock jumps 30 s during the PL5xx rules) still stops the file."""
    import types

    import planlint.engine.lint as engine
    import planlint.rules as rules

    write(tmp_path / ".git" / "HEAD", "")
    write(tmp_path / "plans" / "a.yaml", REF)
    offset = [0.0]
    monkeypatch.setattr(engine, "time", types.SimpleNamespace(monotonic=lambda: time.monotonic() + offset[0]))
    slow = next(rule for rule in rules.PLAN_RULES if rule.code.startswith("PL5"))
    after = rules.PLAN_RULES[rules.PLAN_RULES.index(slow) + 1]
    real_check = slow.check

    def check(ctx):
        offset[0] += 30.0
        return real_check(ctx)

    monkeypatch.setattr(slow, "check", check, raising=True)
    result = planlint("--no-cache", "--format", "json", "plans", cwd=tmp_path)
    messages = [f["message"] for f in result.json["findings"] if f["code"] == "PL006"]
    assert messages == [f"checking took longer than 5s (limit time_budget): {after.code} and the rules after it did not run"], result
