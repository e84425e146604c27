"""The process pool and the result cache change how fast findings come, never which.

Every path (serial, parallel, cold cache, warm cache) must print the same
report as a serial uncached run, and a cached result must never outlive a
change to the file, the config or planlint. No timings here: bench/lint_speed.py
measures speed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import pickle
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_process, write
from planlint.core.config import Config, load_config
from planlint.core.loader import load_text, read_text
from planlint.core.model import FileResult, Finding
from planlint.core.yaml_values import YamlFloat, YamlInt
from planlint.engine import result_cache as cache_module
from planlint.engine import parallel
from planlint.engine.result_cache import ResultCache
from planlint.engine.lint import lint_file
from planlint.engine.run import lint_paths
from planlint.rules.base import Services
from planlint.core.cache_seal import machine_key, seal

sys.path.insert(0, str(ROOT / "bench"))
from corpus import DEFECTS, make_plan, write_corpus  # noqa: E402

sys.path.remove(str(ROOT / "bench"))

EXPECTED_CODES = {
    "release-latest": "PL102", "no-baseline": "PL401", "grader-range": "PL302", "spend-string": "PL502",
    "eval-not-frozen": "PL205", "typo-key": "PL003", "decision-on-train": "PL604", "duplicate-key": "PL002",
    "estimate-over-cap": "PL504", "judge-uncalibrated": "PL305", "stopping-empty": "PL603", "revision-main": "PL103",
    "syntax-error": "PL001", "secret": "PL801", "bare-suppression": "PL009",
}

SUPPRESSED = """\
# planlint: disable-file=PL305 -- judge calibration tracked in JIRA-123
# planlint: disable=PL999 -- suppresses nothing: PL010
"""


def make_tree(root: Path, plans: int = 120) -> Path:
    """A repository: generated plans plus the cases finish() and discovery care about."""
    write_corpus(root / "plans", plans, seed=11)
    reference = (ROOT / "tests" / "fixtures" / "reference_plan.yaml").read_text(encoding="utf-8")
    write(root / "plans" / "dup" / "a.yaml", reference)  # the same metadata.name twice: PL005
    write(root / "plans" / "dup" / "b.yaml", reference)
    write(root / "plans" / "dup" / "c.yaml", SUPPRESSED + reference.replace("retail-refund-window", "c-plan").replace("frozen: true", "frozen: false  # planlint: disable=PL205"))
    write(root / "plans" / "dup" / "d.yaml", reference.replace("retail-refund-window", "d-plan").replace('release: "2026.11.03"', "release: latest").replace("  owner:", "  ownr:"))
    write(root / "plans" / "ci" / "workflow.yaml", "on: push\njobs: {}\n")  # not a plan: skipped
    write(root / "plans" / "ci" / "broken.yaml", "kind: ExperimentPlan\nmetadata: [\n")  # broken plan: PL001
    (root / "plans" / "ci" / "binary.yaml").write_bytes(b"kind: ExperimentPlan\x00\xff")  # PL006
    write(root / "notes.yaml", "just: notes\n")  # named explicitly: PL004
    return root


def lint(root: Path, *args: str) -> str:
    proc = run_process("--format", "json", *args, "plans", "notes.yaml", cwd=root)
    assert proc.status in (0, 1), proc
    return proc.out


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("repo"))


@pytest.fixture(scope="module")
def reference(tree) -> str:
    return lint(tree, "--jobs", "1", "--no-cache")


def test_the_reference_run_covers_the_interesting_cases(reference):
    codes = {f["code"] for f in json.loads(reference)["findings"]}
    assert {"PL001", "PL004", "PL005", "PL006", "PL009", "PL010", "PL102", "PL003"} <= codes
    assert json.loads(reference)["files"] > 120


@pytest.mark.integration
def test_parallel_cold_and_warm_runs_print_the_serial_report(tree, reference, tmp_path):
    cache_dir = tmp_path / "cache"
    assert lint(tree, "--jobs", "2", "--no-cache") == reference
    assert lint(tree, "--jobs", "2", "--cache-dir", str(cache_dir)) == reference  # cold: fills the cache
    assert len(cached_entries(cache_dir)) > 120
    assert lint(tree, "--jobs", "2", "--cache-dir", str(cache_dir)) == reference  # warm
    assert lint(tree, "--jobs", "1", "--cache-dir", str(cache_dir)) == reference  # warm, serial


def test_text_output_is_the_same_from_the_cache(tree, tmp_path, planlint):
    cache_dir = tmp_path / "cache"
    first = planlint("--no-cache", "--jobs", "1", "plans", cwd=tree)
    cold = planlint("--cache-dir", cache_dir, "plans", cwd=tree)
    warm = planlint("--cache-dir", cache_dir, "plans", cwd=tree)
    assert first.out == cold.out == warm.out
    assert " | " in warm.out and "^" in warm.out  # source excerpts come back with cached findings


def test_the_pool_is_used_and_keeps_the_order(tree, monkeypatch):
    calls = []
    real = parallel._in_pool

    def counting(work, config, services, cache, workers):
        calls.append((len(work), workers))
        return real(work, config, services, cache, workers)

    monkeypatch.chdir(tree)
    monkeypatch.setattr(parallel, "_in_pool", counting)
    config = load_config()
    serial = lint_paths(["plans"], config, jobs=1)
    pooled = lint_paths(["plans"], config, jobs=2)
    assert calls and calls[0][1] == 2
    assert pooled.findings == serial.findings and pooled.files == serial.files
    assert pooled.sources == serial.sources


def test_the_spawned_pool_gives_the_same_results(tree, monkeypatch):
    """macOS and Windows have no safe fork: the same run through a pool of spawned processes."""
    monkeypatch.chdir(tree)
    monkeypatch.setattr(parallel, "_can_fork", lambda: False)
    config = load_config()
    serial = lint_paths(["plans"], config, jobs=1)
    spawned = lint_paths(["plans"], config, jobs=2)
    assert spawned.findings == serial.findings and spawned.sources == serial.sources


def test_an_error_in_a_worker_reaches_the_parent(tree, monkeypatch):
    monkeypatch.chdir(tree)

    def broken(display, path, explicit, config, services=None):
        if display.endswith("plan-00007.yaml"):
            raise ValueError("a bug in a rule")
        return lint_file(display, path, explicit, config, services)

    monkeypatch.setattr(parallel, "lint_file", broken)
    with pytest.raises(ValueError, match="a bug in a rule"):
        lint_paths(["plans"], load_config(), jobs=2)


def test_a_worker_that_dies_is_an_error_not_a_hang(tree, monkeypatch):
    monkeypatch.chdir(tree)

    def dying(display, path, explicit, config, services=None):
        if display.endswith("plan-00007.yaml"):
            os._exit(3)
        return lint_file(display, path, explicit, config, services)

    monkeypatch.setattr(parallel, "lint_file", dying)
    with pytest.raises(RuntimeError, match="exit status 3"):
        lint_paths(["plans"], load_config(), jobs=2)


def test_small_inputs_stay_in_process():
    assert parallel.worker_count(8, 1) == 1
    assert parallel.worker_count(8, parallel.MIN_FILES_PER_WORKER * 2 - 1) == 1
    assert parallel.worker_count(2, 10_000) == 2
    assert parallel.worker_count(None, 10_000) == parallel.available_cpus()
    assert parallel.worker_count(1, 10_000) == 1


def test_available_cpus_follow_the_affinity_mask():
    if hasattr(os, "sched_getaffinity"):
        assert parallel.available_cpus() == len(os.sched_getaffinity(0))
    assert parallel.available_cpus() >= 1


# --------------------------------------------------------------------------- the cache


def run_cached(root: Path, cache_dir: Path, *paths: str, config: Config | None = None) -> tuple[list[Finding], ResultCache]:
    old = Path.cwd()
    os.chdir(root)
    try:
        config = config or load_config()
        cache = ResultCache(cache_dir, config)
        report = lint_paths(list(paths) or ["plans"], config, cache=cache)
    finally:
        os.chdir(old)
    return report.findings, cache


def test_warm_run_is_served_entirely_from_the_cache(tree, tmp_path):
    cold, first = run_cached(tree, tmp_path / "c")
    warm, second = run_cached(tree, tmp_path / "c")
    assert warm == cold
    assert first.hits == 0 and first.stores > 120
    # Every file is a hit except the unreadable one (PL006 is never cached).
    assert second.hits == first.stores and second.stores == 0


def test_a_changed_file_is_linted_again(tmp_path):
    root = tmp_path / "repo"
    defects = write_corpus(root / "plans", 30, seed=11)
    target = root / "plans" / next(name for name, defect in sorted(defects.items()) if not defect)
    _, first = run_cached(root, tmp_path / "c")
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace("frozen: true", "frozen: false"), encoding="utf-8")
    findings, second = run_cached(root, tmp_path / "c")
    assert any(f.code == "PL205" and f.path.endswith(target.name) for f in findings)
    assert second.hits == first.stores - 1 and second.stores == 1
    target.write_text(text, encoding="utf-8")  # back as it was: the old entry serves again
    findings, third = run_cached(root, tmp_path / "c")
    assert not any(f.path.endswith(target.name) for f in findings)
    assert third.stores == 0


def test_a_config_change_misses(tmp_path):
    root = make_tree(tmp_path / "repo", plans=30)
    before, _ = run_cached(root, tmp_path / "c")
    assert any(f.code == "PL205" for f in before)
    write(root / ".planlint.yaml", "ignore: [PL205]\nseverity: {PL102: warning}\n")
    after, cache = run_cached(root, tmp_path / "c")
    assert cache.hits == 0
    assert not any(f.code == "PL205" for f in after)
    assert all(f.severity == "warning" for f in after if f.code == "PL102")
    # Each effective config has its own entries; going back hits the first ones.
    (root / ".planlint.yaml").unlink()
    again, cache = run_cached(root, tmp_path / "c")
    assert again == before and cache.stores == 0


def test_command_line_selection_is_part_of_the_key(tree, tmp_path, planlint):
    cache_dir = tmp_path / "cache"
    everything = planlint("--format", "json", "--cache-dir", cache_dir, "plans", cwd=tree).json["findings"]
    only = planlint("--format", "json", "--cache-dir", cache_dir, "--select", "PL1", "plans", cwd=tree).json["findings"]
    assert only and all(f["code"].startswith("PL1") for f in only)
    assert len(only) < len(everything)
    assert planlint("--format", "json", "--cache-dir", cache_dir, "plans", cwd=tree).json["findings"] == everything


def test_a_catalog_change_misses(tmp_path):
    root = make_tree(tmp_path / "repo", plans=5)
    write(root / "catalog.yaml", "datasets: {}\n")
    write(root / ".planlint.yaml", "catalog: catalog.yaml\n")
    _, first = run_cached(root, tmp_path / "c")
    write(root / "catalog.yaml", "datasets: {retail-refunds: {releases: ['2026.11.03']}}\n")
    _, second = run_cached(root, tmp_path / "c")
    assert first.stores > 0 and second.hits == 0


def test_a_new_planlint_version_misses(tmp_path, monkeypatch):
    root = make_tree(tmp_path / "repo", plans=5)
    _, first = run_cached(root, tmp_path / "c")
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    _, second = run_cached(root, tmp_path / "c")
    assert first.stores > 0 and second.hits == 0
    monkeypatch.undo()
    _, third = run_cached(root, tmp_path / "c")
    assert third.hits == first.stores


def test_edited_planlint_files_change_the_key(tmp_path, monkeypatch):
    config = Config(root=tmp_path)
    before = cache_module.run_key(config)
    monkeypatch.setattr(cache_module, "_package_fingerprint", lambda: "another build")
    assert cache_module.run_key(config) != before


def test_the_same_text_elsewhere_or_named_explicitly_is_another_entry(tmp_path):
    root = tmp_path / "repo"
    write(root / "plans" / "notes.yaml", "just: notes\n")
    findings, first = run_cached(root, tmp_path / "c", "plans")
    assert findings == [] and first.stores == 1  # discovered, not a plan: skipped, and that is cached
    findings, second = run_cached(root, tmp_path / "c", "plans/notes.yaml")
    assert [f.code for f in findings] == ["PL004"] and second.hits == 0
    findings, third = run_cached(root, tmp_path / "c", "plans")
    assert findings == [] and third.hits == 1


def segments(cache_dir: Path) -> list[Path]:
    return sorted(p for p in cache_dir.rglob("*.json") if not p.name.startswith("."))


def cached_entries(cache_dir: Path) -> dict:
    entries: dict = {}
    for segment in segments(cache_dir):
        entries.update(json.loads(segment.read_bytes())["entries"])
    return entries


def test_damaged_segments_and_entries_are_ignored(tree, reference, tmp_path):
    cache_dir = tmp_path / "cache"
    lint(tree, "--cache-dir", str(cache_dir))
    found = segments(cache_dir)
    assert len(found) >= 2
    garbage = [b"", b"{", b"null", b"[]", b"\x00\xff", b'{"run": 1, "entries": {}}', b'{"format": 2}']
    for index, segment in enumerate(found):
        if index % 2 == 0:
            segment.write_bytes(garbage[index % len(garbage)])
        else:  # well-formed JSON, entries of the wrong shape
            content = json.loads(segment.read_bytes())
            keys = sorted(content["entries"])
            for n, key in enumerate(keys):
                content["entries"][key] = [None, {"r": {"findings": [[1, 2]]}}, {"r": {"is_plan": True, "bogus": 1}}, {"t": 0}][n % 4]
            segment.write_text(json.dumps(content), encoding="utf-8")
    assert lint(tree, "--cache-dir", str(cache_dir)) == reference
    assert lint(tree, "--cache-dir", str(cache_dir)) == reference  # now from the segment the last run wrote
    assert not list(cache_dir.rglob(".tmp-*"))


def test_a_segment_of_another_run_key_is_not_served(tmp_path):
    root = make_tree(tmp_path / "repo", plans=4)
    _, first = run_cached(root, tmp_path / "c")
    write(root / ".planlint.yaml", "ignore: [PL1]\n")
    _, second = run_cached(root, tmp_path / "c")
    assert first.directory != second.directory
    for segment in first.directory.glob("s-*.json"):  # as if renamed into the other run's directory
        (second.directory / segment.name).write_bytes(segment.read_bytes())
    _, third = run_cached(root, tmp_path / "c")
    assert third.hits == second.stores


def test_many_segments_are_merged_and_old_entries_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "MAX_SEGMENTS", 3)
    root = tmp_path / "repo"
    names = sorted(write_corpus(root / "plans", 6, seed=4))
    cache_dir = tmp_path / "c"
    for name in names:  # one run per file: one segment each
        run_cached(root, cache_dir, f"plans/{name}")
    assert len(segments(cache_dir)) <= 3  # merged along the way
    entries = cached_entries(cache_dir)
    assert len(entries) == 6

    def key_of(name: str) -> str:
        monkeypatch.chdir(root)  # the working directory is part of the key
        cache = ResultCache(cache_dir, load_config())
        return cache.file_key(f"plans/{name}", True, (root / "plans" / name).read_text(encoding="utf-8"))

    used_old, unused_old = key_of(names[0]), key_of(names[1])
    assert {used_old, unused_old} <= set(entries)
    for segment in segments(cache_dir):  # both last used long ago
        content = json.loads(segment.read_bytes())
        del content["mac"]
        for key in (used_old, unused_old):
            if key in content["entries"]:
                content["entries"][key]["t"] -= cache_module.MAX_AGE + 10
        segment.write_text(seal(machine_key(), "results", content["run"], content), encoding="utf-8")  # as this machine would
    while len(segments(cache_dir)) < 3:  # the next new segment makes four: a merge
        extra = root / "plans" / f"extra-{len(segments(cache_dir))}.yaml"
        write(extra, f"note: {extra.name}\n")
        run_cached(root, cache_dir, f"plans/{extra.name}")
    write(root / "plans" / "new.yaml", "note: new\n")
    _, cache = run_cached(root, cache_dir, f"plans/{names[0]}", "plans/new.yaml")
    assert cache.hits == 1 and cache.stores == 1
    assert len(segments(cache_dir)) == 1
    remaining = cached_entries(cache_dir)
    assert used_old in remaining and remaining[used_old]["t"] >= entries[used_old]["t"]  # used now: kept, refreshed
    assert unused_old not in remaining
    assert set(entries) - {unused_old} <= set(remaining)
    findings, _ = run_cached(root, cache_dir)
    assert findings == run_cached(root, tmp_path / "fresh")[0]


@pytest.mark.integration
@pytest.mark.slow
def test_concurrent_runs_share_a_cache_safely(tree, reference, tmp_path):
    import subprocess

    cache_dir = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("GITHUB_ACTIONS", None)
    command = [sys.executable, "-m", "planlint", "--format", "json", "--cache-dir", str(cache_dir), "plans", "notes.yaml"]
    for _ in range(2):  # cold and concurrent, then warm and concurrent
        procs = [subprocess.Popen(command + ["--jobs", str(1 + n % 2)], cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for n in range(4)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode in (0, 1) for p in procs), [err.decode() for _, err in outs]
        assert all(out.decode() == reference for out, _ in outs)
    assert not list(cache_dir.rglob(".tmp-*"))


def test_the_cache_directory_is_marked_and_ignored_by_git(tree, tmp_path):
    lint(tree, "--cache-dir", str(tmp_path / "cache"))
    assert (tmp_path / "cache" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert (tmp_path / "cache" / "CACHEDIR.TAG").read_text(encoding="utf-8").startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_default_location_is_the_project_root_and_config_can_move_it(tmp_path, planlint):
    root = make_tree(tmp_path / "repo", plans=3)
    write(root / ".planlint.yaml", "ignore: [PL205]\n")
    (root / "plans" / "team-00").mkdir(exist_ok=True)
    result = planlint("team-00", cwd=root / "plans")  # run from a subdirectory
    assert result.status in (0, 1), result
    assert (root / ".planlint_cache").is_dir()
    assert not (root / "plans" / ".planlint_cache").exists()
    write(root / ".planlint.yaml", "cache_dir: build/lint-cache\n")
    planlint("plans", cwd=root)
    assert cached_entries(root / "build" / "lint-cache")
    planlint("--cache-dir", tmp_path / "elsewhere", "plans", cwd=root)
    assert cached_entries(tmp_path / "elsewhere")


def test_no_cache_writes_nothing(tmp_path, planlint):
    root = make_tree(tmp_path / "repo", plans=3)
    planlint("--no-cache", "plans", cwd=root)
    assert not (root / ".planlint_cache").exists()


def test_an_unusable_cache_directory_does_not_stop_the_lint(tree, reference, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache would go\n", encoding="utf-8")
    assert lint(tree, "--cache-dir", str(blocker)) == reference
    assert lint(tree, "--cache-dir", str(blocker / "below")) == reference


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="needs a user that permissions apply to")
def test_a_read_only_cache_directory_does_not_stop_the_lint(tree, reference, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert lint(tree, "--cache-dir", str(locked)) == reference
    finally:
        locked.chmod(0o700)


def test_time_budget_hits_are_not_cached(tmp_path):
    root = tmp_path / "repo"
    write_corpus(root / "plans", 3, seed=2)
    write(root / ".planlint.yaml", "limits: {time_budget: 0.000001}\n")
    big = "apiVersion: planlint/v1\nkind: ExperimentPlan\nmetadata: {name: big}\nlabels:\n" + "".join(f"  k{i}: v{i}\n" for i in range(2000))
    write(root / "plans" / "big.yaml", big)
    findings, cache = run_cached(root, tmp_path / "c")
    assert any(f.code == "PL006" and f.path.endswith("big.yaml") for f in findings)  # past it while parsing
    # The budget covers the rules too: the small plans are past it before their first rule.
    budget_hits = {f.path for f in findings if f.code == "PL006" and "rules after it did not run" in f.message}
    assert len(budget_hits) == 3 and cache.stores == 0
    _, again = run_cached(root, tmp_path / "c")
    assert again.hits == 0 and again.stores == 0


def test_runs_with_services_the_key_cannot_describe_do_not_use_the_cache(tree, tmp_path):
    config = Config(root=tree)
    cache = ResultCache(tmp_path / "c", config)
    old = Path.cwd()
    os.chdir(tree)
    try:
        # --fix's re-pins: a field of Services without `cache` metadata
        lint_paths(["plans"], config, cache=cache, services=Services(repinned={"plans/a.yaml": {"judge": ("1.0", "1.1")}}))
    finally:
        os.chdir(old)
    assert cache.stores == 0 and not (tmp_path / "c").exists()


def test_rules_that_read_more_than_the_plan_switch_the_cache_off(tree, tmp_path, monkeypatch):
    from planlint import rules
    from planlint.rules.base import ERROR, Rule, no_check

    online_rule = Rule("PL299", "asks-a-server", ERROR, no_check, "Asks a server.", scope="registry")
    monkeypatch.setitem(rules.RULES, "PL299", online_rule)
    assert not parallel.cache_safe(Config())
    assert parallel.cache_safe(Config(ignore=["PL299"]))
    _, cache = run_cached(tree, tmp_path / "c")
    assert cache.stores == 0 and cache.hits == 0


def test_diff_rules_do_not_switch_the_cache_off():
    """PL7xx have their own scope but run only in diff mode, never through lint_paths."""
    from planlint.rules import RULES

    assert any(rule.scope == "diff" for rule in RULES.values())
    assert parallel.cache_safe(Config())


CATALOG = """\
datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}
graders:
  tau-retail-db-state: {versions: ["1.4.1", "1.4.2"]}
  polite-tone-judge: {versions: ["3.0.0"]}
"""


@pytest.mark.integration
def test_a_catalog_run_is_cached_and_parallel_like_any_other(tmp_path):
    root = make_tree(tmp_path / "repo", plans=60)
    write(root / "catalog.yaml", CATALOG)
    write(root / ".planlint.yaml", "catalog: catalog.yaml\n")
    cache_dir = tmp_path / "cache"
    serial = lint(root, "--jobs", "1", "--no-cache")

    def tone_judge_unpublished(report: str) -> bool:  # polite-tone-judge 3.0.1 (in plans/dup) is not in the catalog
        return any(f["code"] == "PL106" and "polite-tone-judge" in f["message"] for f in json.loads(report)["findings"])

    assert tone_judge_unpublished(serial)
    assert lint(root, "--jobs", "2", "--no-cache") == serial
    assert lint(root, "--jobs", "2", "--cache-dir", str(cache_dir)) == serial
    assert cached_entries(cache_dir)
    assert lint(root, "--jobs", "2", "--cache-dir", str(cache_dir)) == serial
    # A new catalog: new answers, not the cached ones.
    write(root / "catalog.yaml", CATALOG.replace('["3.0.0"]', '["3.0.0", "3.0.1"]'))
    fixed = lint(root, "--cache-dir", str(cache_dir))
    assert fixed == lint(root, "--no-cache") and not tone_judge_unpublished(fixed)


def test_the_catalog_as_messages_name_it_is_part_of_the_key(tmp_path, planlint):
    """From a subdirectory the catalog is ../catalog.yaml in messages: not the cached wording."""
    root = tmp_path / "repo"
    reference = (ROOT / "tests" / "fixtures" / "reference_plan.yaml").read_text(encoding="utf-8")
    write(root / "plans" / "p.yaml", reference)
    write(root / "catalog.yaml", CATALOG)
    write(root / ".planlint.yaml", "catalog: catalog.yaml\n")
    cache_dir = tmp_path / "cache"
    top = planlint("--format", "json", "--cache-dir", cache_dir, "plans", cwd=root).json["findings"]
    below = planlint("--format", "json", "--cache-dir", cache_dir, ".", cwd=root / "plans").json["findings"]
    fresh = planlint("--format", "json", "--no-cache", ".", cwd=root / "plans").json["findings"]
    assert any("catalog.yaml" in f["message"] for f in top)
    assert below == fresh and [f["message"] for f in below] != [f["message"] for f in top]


# --------------------------------------------------------------------------- split files (PL207-PL209)


def data_plan(root: Path, name: str, train: str = "data/train.jsonl", eval_: str = "data/eval.jsonl") -> Path:
    reference = (ROOT / "tests" / "fixtures" / "reference_plan.yaml").read_text(encoding="utf-8")
    text = reference.replace("retail-refund-window", name).replace("data/retail/train.jsonl", train).replace("data/retail/eval.jsonl", eval_)
    # No time boundary: the rows below carry no created_at (which would be PL210).
    return write(root / "plans" / f"{name}.yaml", re.sub(r"\n    time_key: .*\n    cutoff: .*", "", text))


def rows(*customers: str) -> str:
    return "".join(json.dumps({"customer_id": c, "prompt": f"refund order {i} for {c}"}) + "\n" for i, c in enumerate(customers))


@pytest.fixture
def data_repo(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "RACY_SECONDS", 0)  # the files below are seconds old, not minutes
    root = tmp_path / "repo"
    data_plan(root, "leaky")
    write(root / "data" / "train.jsonl", rows("c-1", "c-2", "c-3"))
    write(root / "data" / "eval.jsonl", rows("c-3", "c-9"))
    data_plan(root, "no-files", "data/absent-train.jsonl", "data/absent-eval.jsonl")
    write_corpus(root / "plans" / "generated", 5, seed=3)
    return root


def run_with_data(root: Path, cache_dir: Path) -> tuple[object, ResultCache]:
    old = Path.cwd()
    os.chdir(root)
    try:
        config = load_config()
        cache = ResultCache(cache_dir, config)
        report = lint_paths(["plans"], config, cache=cache, services=Services(cache_dir=str(cache_dir)))
    finally:
        os.chdir(old)
    return report, cache


def test_split_files_are_part_of_a_cached_result(data_repo, tmp_path):
    cache_dir = tmp_path / "c"
    first, cold = run_with_data(data_repo, cache_dir)
    assert [f.path for f in first.findings if f.code == "PL207"] == ["plans/leaky.yaml"]
    assert any("skipped" in note and "plans/no-files.yaml" in note for note in first.notes)
    again, warm = run_with_data(data_repo, cache_dir)
    assert warm.hits == cold.stores == 7 and warm.stores == 0
    assert again.findings == first.findings and again.notes == first.notes
    # The leak is fixed in the data, not in the plan: the plan's result must not be reused.
    write(data_repo / "data" / "eval.jsonl", rows("c-8", "c-9"))
    fixed, third = run_with_data(data_repo, cache_dir)
    assert third.hits == 6 and not [f for f in fixed.findings if f.code == "PL207"]
    assert fixed.findings == run_with_data(data_repo, tmp_path / "fresh")[0].findings


def test_an_edit_that_keeps_size_and_mtime_is_still_noticed(data_repo, tmp_path):
    cache_dir = tmp_path / "c"
    run_with_data(data_repo, cache_dir)
    eval_file = data_repo / "data" / "eval.jsonl"
    before = os.stat(eval_file)
    eval_file.write_text(rows("c-8", "c-9"), encoding="utf-8")  # the same length as c-3, c-9
    os.utime(eval_file, ns=(before.st_atime_ns, before.st_mtime_ns))  # as rsync -t or a restore would
    assert os.stat(eval_file).st_size == before.st_size and os.stat(eval_file).st_mtime_ns == before.st_mtime_ns
    report, cache = run_with_data(data_repo, cache_dir)
    assert cache.hits == 6 and not [f for f in report.findings if f.code == "PL207"]


def test_a_split_file_that_appears_earlier_in_the_lookup_order_is_used(data_repo, tmp_path):
    """data/... is looked up in the working directory, then the project root, then beside the plan."""
    cache_dir = tmp_path / "c"
    plans = data_repo / "plans"
    data_plan(data_repo, "beside", "beside-data/train.jsonl", "beside-data/eval.jsonl")
    write(plans / "beside-data" / "train.jsonl", rows("c-1", "c-2"))
    write(plans / "beside-data" / "eval.jsonl", rows("c-5"))
    first, _ = run_with_data(data_repo, cache_dir)
    assert not [f for f in first.findings if f.path == "plans/beside.yaml"]
    write(data_repo / "beside-data" / "train.jsonl", rows("c-5"))  # in the project root: found first now
    write(data_repo / "beside-data" / "eval.jsonl", rows("c-5"))
    second, cache = run_with_data(data_repo, cache_dir)
    assert "PL207" in [f.code for f in second.findings if f.path == "plans/beside.yaml"]
    assert cache.hits == 7


def test_the_working_directory_is_part_of_the_key(tmp_path, monkeypatch):
    """Relative split paths are looked up in the working directory first: another one, another answer."""
    monkeypatch.setattr(parallel, "RACY_SECONDS", 0)
    plan = data_plan(tmp_path / "repo", "p", "d/train.jsonl", "d/eval.jsonl")
    for place, eval_rows in (("clean", rows("c-8")), ("leaky", rows("c-1"))):
        write(tmp_path / place / "d" / "train.jsonl", rows("c-1", "c-2"))
        write(tmp_path / place / "d" / "eval.jsonl", eval_rows)
    config = Config(root=tmp_path / "repo")
    codes = {}
    for place in ("clean", "leaky"):
        monkeypatch.chdir(tmp_path / place)
        cache = ResultCache(tmp_path / "c", config)
        report = lint_paths([str(plan)], config, cache=cache)  # an absolute path: the same display either way
        codes[place] = {f.code for f in report.findings}
        assert cache.hits == 0
    assert "PL207" not in codes["clean"] and "PL207" in codes["leaky"]


def test_split_files_changed_just_before_the_run_are_not_cached(data_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "RACY_SECONDS", 60)  # as if the data were written a moment ago
    _, cache = run_with_data(data_repo, tmp_path / "c")
    assert cache.stores == 6  # everything but the plan whose split files are "racy"


def test_every_file_result_field_is_cached_or_deliberately_not():
    """A field added to FileResult must be added to the cache entry (cache._encode) or to _RESULT_NOT_STORED."""
    fields = {f.name for f in dataclasses.fields(FileResult)}
    assert fields == {
        "path", "is_plan", "findings", "suppressions", "plan_name", "name_span", "text", "notes", "data_skipped", "data", "positions", "diff_checked",
        "committed_currency", "committed_amount", "spend_span", "committed_per_month", "uncounted",
        "missing_inputs",
        "attached", "repo_root", "run_configs", "status",
    }
    assert cache_module._RESULT_NOT_STORED < fields


def test_cli_rejects_bad_job_counts(tmp_path):
    for value in ("0", "-1", "many"):
        result = run_process("--jobs", value, "plans/", cwd=tmp_path)
        assert result.status == 2 and "--jobs" in result.err and "Traceback" not in result.err


# --------------------------------------------------------------------------- pieces


def test_yaml_numbers_survive_pickling_with_their_text():
    data = load_text("a: 0o17\nb: 2026.10\nc: [007]\n").data
    copy = pickle.loads(pickle.dumps(data))
    assert copy == data
    assert isinstance(copy["a"], YamlInt) and copy["a"].text == "0o17"
    assert isinstance(copy["b"], YamlFloat) and copy["b"].text == "2026.10"
    assert copy["c"][0].text == "007"


def test_read_text_at_the_size_limit(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes(b"a" * 100)
    assert read_text(path, 100) == ("a" * 100, None)
    text, problem = read_text(path, 99)
    assert text is None and "over the 99-byte limit" in problem.message
    assert read_text(Path(os.devnull), 100) == ("", None)


def test_the_benchmark_corpus_is_what_it_claims(tmp_path):
    """Clean plans are clean under every rule; each planted defect gives its finding."""
    defects = write_corpus(tmp_path / "corpus", 400, seed=5)
    config = Config(root=tmp_path)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        report = lint_paths(["corpus"], config)
    finally:
        os.chdir(old)
    found: dict[str, set[str]] = {}
    for f in report.findings:
        found.setdefault(f.path.split("/", 1)[1], set()).add(f.code)
    assert set(found) == {name for name, defect in defects.items() if defect}
    for name, defect in defects.items():
        if defect:
            also = {"PL310"} if defect == "judge-uncalibrated" else set()  # the whole reward of an approved GRPO plan
            assert ({EXPECTED_CODES[defect]} | also) & found[name], (name, defect, found[name])
    assert set(EXPECTED_CODES) == set(DEFECTS)
    assert 0.02 < len(found) / len(defects) < 0.09
    assert make_plan(5, 17) == make_plan(5, 17)  # deterministic


def test_the_cache_keys_on_the_fields_of_services_and_refuses_one_it_cannot_describe():
    """services_fingerprint reads the fields of Services: a neutral one adds nothing, --fix's
    re-pins turn the cache off, and a field added without `cache` metadata does too."""
    import dataclasses

    assert parallel.services_fingerprint(None) == parallel.services_fingerprint(Services()) == ""
    assert parallel.services_fingerprint(Services(cache_dir="somewhere")) == ""
    assert parallel.services_fingerprint(Services(repinned={"plans/a.yaml": {"judge": ("1.0", "1.1")}})) is None

    @dataclasses.dataclass(frozen=True)
    class MoreServices(Services):
        pull_request_reviews: object = None

    assert parallel.services_fingerprint(MoreServices()) == ""
    assert parallel.services_fingerprint(MoreServices(pull_request_reviews=["an approval"])) is None
