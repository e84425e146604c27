#!/usr/bin/env python3
"""How long the pre-commit hook takes, as pre-commit runs it, on a repository of thousands of plans.

    python bench/hook_speed.py [--plans 2000] [--rounds 10] [--before PLANLINT --before-hooks FILE] [--json FILE]

Writes a git repository whose plans/ holds the corpus of bench/corpus.py
(2,000 plans by default) beside this repository's example plans with their
split files, run configs, rollout and catalog, commits it, and then times the
hook's entry, from `.pre-commit-hooks.yaml`, exactly as pre-commit runs it:
the command with the staged files its `files` (and `types`) select, started
in the repository's root, the result cache on (as a hook runs; one warm-up run
first, as on any commit after the first). Three commits are staged in turn:

  1. one plan of the corpus changed (the common commit);
  2. only a split file changed (a row added to an example plan's eval split);
  3. only a run config changed (a comment in the example's training config).

`--before PLANLINT --before-hooks FILE` times another planlint (the console
script of another install, e.g. of the main branch) with its own hook
definition, alternating with this one within each round, so both are
measured in the same minutes; the ratio of the one-plan commit is the figure
the hook must keep (this one within 10% of the other). A hook whose `files`
select nothing for a commit is not started at all by pre-commit: shown as
"not run". Medians over the rounds; the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import write_corpus  # noqa: E402

TARGET = 1.10  # the one-plan commit: at most 10% slower than the hook it replaces
EXAMPLE_PLAN = "plans/examples/retail-refund-grpo.yaml"
EVAL_SPLIT = "data/retail/refunds-eval.jsonl"
TRAINING_CONFIG = "configs/training/billing-dispute-mixed-reward.toml"
_DROPPED_ENV = {"GITHUB_ACTIONS", "PYTHONDONTWRITEBYTECODE"}


def hook(path: Path, hook_id: str = "planlint") -> dict:
    import yaml  # PyYAML: the bench and test extras

    hooks = {h["id"]: h for h in yaml.safe_load(path.read_text(encoding="utf-8"))}
    return hooks[hook_id]


def selected(definition: dict, staged: list[str]) -> list[str]:
    """The staged files pre-commit passes to the hook: its `files` regex, and `types: [yaml]` by suffix."""
    files = re.compile(definition.get("files", ""))
    types = definition.get("types") or []
    chosen = [name for name in staged if files.search(name)]
    if "yaml" in types:
        chosen = [name for name in chosen if name.lower().endswith((".yaml", ".yml"))]
    return chosen


def command(definition: dict, planlint: str, files: list[str]) -> list[str]:
    entry = definition["entry"].split()
    assert entry[0] == "planlint", entry
    return [planlint, *entry[1:], *definition.get("args", []), *files]


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@example.invalid", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True, text=True).stdout


def make_repository(repo: Path, plans: int, seed: int) -> None:
    write_corpus(repo / "plans", plans, seed)
    (repo / "plans" / "examples").mkdir(parents=True)
    for plan in sorted((ROOT / "plans").glob("*.yaml")):
        shutil.copy(plan, repo / "plans" / "examples" / plan.name)
    for name in ("data", "configs", "rollouts", "graders"):
        shutil.copytree(ROOT / name, repo / name)
    shutil.copy(ROOT / "catalog.yaml", repo / "catalog.yaml")
    (repo / "pyproject.toml").write_text("[tool.planlint]\n", encoding="utf-8")  # every rule; no config from above
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "corpus")


def stage(repo: Path, scenario: str) -> list[str]:
    git(repo, "reset", "-q", "--hard")
    if scenario == "one plan":
        path = repo / "plans" / "team-03" / "plan-00003.yaml"
        path.write_text(path.read_text(encoding="utf-8") + "# reviewed again\n", encoding="utf-8")
    elif scenario == "split file only":
        path = repo / EVAL_SPLIT
        path.write_text(path.read_text(encoding="utf-8") + '{"task_id": "refund-99998", "customer_id": "cus-0999", '
                        '"created_at": "2026-08-21", "prompt": "Order #99998 never arrived.", "expected_outcome": "refund"}\n', encoding="utf-8")
    else:
        path = repo / TRAINING_CONFIG
        path.write_text(path.read_text(encoding="utf-8") + "# reviewed again\n", encoding="utf-8")
    git(repo, "add", "-A")
    return git(repo, "diff", "--cached", "--name-only").split()


def run(argv: list[str], cwd: Path) -> tuple[float, int, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, env=env, timeout=600)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"hook_speed: {' '.join(argv[:3])} ... exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-1500:]}")
    return elapsed, proc.returncode, proc.stdout.decode("utf-8", "replace")


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plans", type=int, default=2000, help="plans in the repository's corpus (default 2000)")
    parser.add_argument("--rounds", type=int, default=10, help="timed runs per hook and commit; medians are reported (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--before", metavar="PLANLINT", help="another planlint executable to time beside this one")
    parser.add_argument("--before-hooks", metavar="FILE", help="that planlint's .pre-commit-hooks.yaml (default: this checkout's)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    beside = Path(sys.executable).parent / "planlint"
    hooks = {"this": (str(beside if beside.exists() else shutil.which("planlint")), hook(ROOT / ".pre-commit-hooks.yaml"))}
    if args.before:
        hooks["before"] = (args.before, hook(Path(args.before_hooks) if args.before_hooks else ROOT / ".pre-commit-hooks.yaml"))
    print(f"load average at the start: {load_average()}")
    for name, (planlint, definition) in hooks.items():
        print(f"{name}: {planlint} with entry {definition['entry']!r}, files {definition.get('files', '')!r}, types {definition.get('types', [])}")
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="planlint-hook-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        make_repository(repo, args.plans, args.seed)
        for scenario in ("one plan", "split file only", "run config only"):
            staged = stage(repo, scenario)
            times: dict[str, list[float]] = {name: [] for name in hooks}
            outcome: dict[str, str] = {}
            for name, (planlint, definition) in hooks.items():
                files = selected(definition, staged)
                if files:
                    _, status, out = run(command(definition, planlint, files), repo)  # warm-up: the cache as on any later commit
                    outcome[name] = f"exit {status}: {out.strip().splitlines()[-1] if out.strip() else 'no output'}"
                else:
                    outcome[name] = "not run (no staged file matches its files:)"
            for r in range(args.rounds):
                for name in (list(hooks) if r % 2 == 0 else list(reversed(hooks))):
                    planlint, definition = hooks[name]
                    files = selected(definition, staged)
                    if files:
                        times[name].append(run(command(definition, planlint, files), repo)[0])
            figures[scenario] = {name: {"median_s": statistics.median(t) if t else None, "outcome": outcome[name]} for name, t in times.items()}
            shown = ", ".join(
                f"{name} {figures[scenario][name]['median_s'] * 1000:.0f} ms ({outcome[name]})" if times[name] else f"{name} {outcome[name]}"
                for name in hooks
            )
            print(f"{scenario} ({', '.join(staged)}): {shown}")
    met = None
    one = figures["one plan"]
    if "before" in one and one["before"]["median_s"] and one["this"]["median_s"]:
        ratio = one["this"]["median_s"] / one["before"]["median_s"]
        met = ratio <= TARGET
        print(f"one-plan commit: this {one['this']['median_s'] * 1000:.0f} ms against before {one['before']['median_s'] * 1000:.0f} ms, "
              f"ratio {ratio:.3f} (target <= {TARGET:.2f}: {'met' if met else 'NOT MET'})")
    print(f"load average at the end: {load_average()}")
    if args.json:
        Path(args.json).write_text(json.dumps({"plans": args.plans, "rounds": args.rounds, "figures": figures, "met": met}, indent=2) + "\n", encoding="utf-8")
    return 0 if met in (None, True) else 1


if __name__ == "__main__":
    sys.exit(main())
