#!/usr/bin/env python3
"""How fast is planlint? Measured side by side with check-jsonschema.

    python bench/lint_speed.py [--plans 2000] [--rounds 3] [--json FILE]

Generates a deterministic corpus of realistic plans (bench/corpus.py: varied
shapes and sizes, about 5% with findings) in a temporary directory and times
whole processes, as a user or a hook runs them:

  1. planlint (all rules, JSON output, no cache) against
     `check-jsonschema --schemafile schemas/plan.schema.json` on the same files;
  2. one plan file, both tools (the pre-commit case): the file is named inside
     a git repository whose plans/ holds the whole corpus, so planlint also
     reads the other plans' names for PL005, as the hook does;
  3. planlint on 100, 1,000 and 10,000 plans (time per plan);
  4. planlint twice on an unchanged corpus with the cache on (cold, then warm).

The two tools alternate within each round and the figures are medians over
the rounds. The findings of the serial uncached run, the parallel run and the
cold and warm cached runs are compared: they must be identical. Prints a table
and the ratios against the targets of issue #6; --json writes them. Exit 0
when every target is met, 1 otherwise, 2 when a tool is missing or fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCHEMA = ROOT / "schemas" / "plan.schema.json"
sys.path.insert(0, str(HERE))

from corpus import write_corpus  # noqa: E402

SCALE = (100, 1_000, 10_000)
TARGETS = {
    "corpus": ("planlint / check-jsonschema on the corpus", 0.5),
    "one_file": ("planlint / check-jsonschema on one file", 0.6),
    "scaling": ("planlint 10,000 plans / 1,000 plans", 5.5),
    "warm_cache": ("warm re-run / cold run", 0.1),
}


class BenchError(Exception):
    pass


def tool(name: str) -> str:
    """The console script installed beside this Python (the README's venv), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise BenchError(f"{name} not found; install the test extra: pip install -e '.[test]'")
    return found


# Both tools run as in an ordinary shell: not under GitHub Actions, and writing
# bytecode caches (pip byte-compiles check-jsonschema at install; an editable
# planlint is compiled by its first run, the warm-up below).
_DROPPED_ENV = {"GITHUB_ACTIONS", "PYTHONDONTWRITEBYTECODE"}


def run(command: list[str], cwd: Path) -> tuple[float, str]:
    """Wall time of one whole process, and its standard output."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=900)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise BenchError(f"{' '.join(command[:4])} ... exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, proc.stdout.decode("utf-8", "replace")


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "?"

    return {
        "os": platform.platform(),
        "cpu": cpu,
        "cpus_available": cpus,
        "python": platform.python_version(),
        "planlint": installed("planlint"),
        "check-jsonschema": installed("check-jsonschema"),
        "jsonschema": installed("jsonschema"),
    }


def median(values: list[float]) -> float:
    return statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plans", type=int, default=2000, help="plans in the corpus of figures 1 and 4 (default 2000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per figure; medians are reported (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--workdir", metavar="DIR", help="generate the corpora here and keep them (default: a temporary directory)")
    parser.add_argument("--only", choices=("one-file",), help="measure only this figure (a brief check)")
    args = parser.parse_args(argv)
    if args.plans < 1 or args.rounds < 1:
        parser.error("--plans and --rounds must be at least 1")
    try:
        planlint, check_jsonschema = tool("planlint"), tool("check-jsonschema")
        if args.workdir:
            work = Path(args.workdir).resolve()
            work.mkdir(parents=True, exist_ok=True)
            return _bench(args, work, planlint, check_jsonschema)
        with tempfile.TemporaryDirectory(prefix="planlint-bench-") as tmp:
            return _bench(args, Path(tmp), planlint, check_jsonschema)
    except BenchError as exc:
        print(f"lint_speed: {exc}", file=sys.stderr)
        return 2


def _bench(args, work: Path, planlint: str, check_jsonschema: str) -> int:
    rounds = args.rounds
    info = machine()
    print(f"machine: {info['cpu']}, {info['cpus_available']} CPUs available; {info['os']}; Python {info['python']}")
    print(f"tools: planlint {info['planlint']}, check-jsonschema {info['check-jsonschema']} (jsonschema {info['jsonschema']})")
    # An empty [tool.planlint] table: every rule, default settings, and no config from above the work directory.
    (work / "pyproject.toml").write_text("[tool.planlint]\n", encoding="utf-8")

    start = time.perf_counter()
    corpus = f"corpus-{args.plans}"
    defects = write_corpus(work / corpus, args.plans, args.seed)
    for size in SCALE if not args.only else ():
        if not (work / f"scale-{size}").exists():
            write_corpus(work / f"scale-{size}", size, args.seed)
    files = sorted(f"{corpus}/{name}" for name in defects)
    with_defect = sum(1 for d in defects.values() if d)
    print(f"corpus: {args.plans:,} plans ({with_defect} with a planted defect) + {0 if args.only else sum(SCALE):,} for scaling, written in {time.perf_counter() - start:.1f}s")

    lint = [planlint, "--format", "json"]
    cj = [check_jsonschema, "--schemafile", str(SCHEMA)]
    one_file = next(name for name in files if not defects[name.split("/", 1)[1]])

    # Warm up: byte-compile both tools, fill the OS file cache.
    run(lint + ["--no-cache", corpus], work)
    run(cj + files[:50], work)

    def progress(text: str) -> None:
        print(f"  {text}", file=sys.stderr, flush=True)

    # 2. one file, both tools, named inside a git repository whose plans/ is the corpus
    repo = work / f"repo-{args.plans}"
    if not (repo / "plans").exists():
        shutil.copytree(work / corpus, repo / "plans")
        (repo / "pyproject.toml").write_text("[tool.planlint]\n", encoding="utf-8")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    staged = "plans/" + one_file.split("/", 1)[1]
    pl_one, cj_one = [], []
    for r in range(rounds * 5):
        for name in (("planlint", "cj") if r % 2 == 0 else ("cj", "planlint")):
            if name == "planlint":
                pl_one.append(run(lint + ["--no-cache", staged], repo)[0])
            else:
                cj_one.append(run(cj + [staged], repo)[0])
    progress(f"one file in a repository of {args.plans:,} plans: planlint {median(pl_one):.3f}s, check-jsonschema {median(cj_one):.3f}s")
    if args.only == "one-file":
        ratio = median(pl_one) / median(cj_one)
        print(f"2. one file (pre-commit, {args.plans:,} plans in the repository): planlint {median(pl_one) * 1000:.0f} ms, "
              f"check-jsonschema {median(cj_one) * 1000:.0f} ms, ratio {ratio:.2f}x (target <= {TARGETS['one_file'][1]}x)")
        return 0 if ratio <= TARGETS["one_file"][1] else 1

    # 1. the corpus, both tools
    pl_times, cj_times = [], []
    reference = None
    for r in range(rounds):
        for name in (("planlint", "cj") if r % 2 == 0 else ("cj", "planlint")):
            if name == "planlint":
                elapsed, out = run(lint + ["--no-cache", corpus], work)
                pl_times.append(elapsed)
                reference = reference or out
            else:
                cj_times.append(run(cj + files, work)[0])
        progress(f"round {r + 1}/{rounds}: corpus planlint {pl_times[-1]:.2f}s, check-jsonschema {cj_times[-1]:.2f}s")

    # 3. scaling
    scale_times: dict[int, list[float]] = {size: [] for size in SCALE}
    for r in range(rounds):
        for size in SCALE if r % 2 == 0 else tuple(reversed(SCALE)):
            scale_times[size].append(run(lint + ["--no-cache", f"scale-{size}"], work)[0])
        progress(f"round {r + 1}/{rounds}: scaling " + ", ".join(f"{s:,}: {scale_times[s][-1]:.2f}s" for s in SCALE))

    # 4. cold then warm cache
    cold, warm = [], []
    outputs = {}
    for r in range(rounds):
        cache_dir = work / f"cache-{r}"
        shutil.rmtree(cache_dir, ignore_errors=True)
        elapsed, outputs["cold cache"] = run(lint + ["--cache-dir", str(cache_dir), corpus], work)
        cold.append(elapsed)
        elapsed, outputs["warm cache"] = run(lint + ["--cache-dir", str(cache_dir), corpus], work)
        warm.append(elapsed)
        shutil.rmtree(cache_dir, ignore_errors=True)
        progress(f"round {r + 1}/{rounds}: cache cold {cold[-1]:.2f}s, warm {warm[-1]:.3f}s")

    # The same findings whichever path produced them.
    outputs["parallel, no cache"] = reference
    outputs["serial, no cache"] = run(lint + ["--no-cache", "--jobs", "1", corpus], work)[1]
    identical = len(set(outputs.values())) == 1
    report = json.loads(reference)
    flagged = {f["path"] for f in report["findings"]}

    figures = {
        "corpus": {"plans": args.plans, "planlint_s": median(pl_times), "check_jsonschema_s": median(cj_times)},
        "one_file": {"planlint_s": median(pl_one), "check_jsonschema_s": median(cj_one)},
        "scaling": {str(size): median(times) for size, times in scale_times.items()},
        "warm_cache": {"plans": args.plans, "cold_s": median(cold), "warm_s": median(warm)},
    }
    ratios = {
        "corpus": figures["corpus"]["planlint_s"] / figures["corpus"]["check_jsonschema_s"],
        "one_file": figures["one_file"]["planlint_s"] / figures["one_file"]["check_jsonschema_s"],
        "scaling": figures["scaling"]["10000"] / figures["scaling"]["1000"],
        "warm_cache": figures["warm_cache"]["warm_s"] / figures["warm_cache"]["cold_s"],
    }
    met = {name: ratios[name] <= TARGETS[name][1] for name in TARGETS}

    per_plan = {size: figures["scaling"][str(size)] / size * 1000 for size in SCALE}
    rows = [
        ("1. corpus, all rules", f"{args.plans:,} plans", f"{figures['corpus']['planlint_s']:.2f} s", f"{figures['corpus']['check_jsonschema_s']:.2f} s", "corpus"),
        ("2. one file (pre-commit)", "1 plan", f"{figures['one_file']['planlint_s'] * 1000:.0f} ms", f"{figures['one_file']['check_jsonschema_s'] * 1000:.0f} ms", "one_file"),
        ("3. scaling, 10,000 vs 1,000", "10,000 plans", f"{figures['scaling']['10000']:.2f} s", f"1,000: {figures['scaling']['1000']:.2f} s", "scaling"),
        ("4. warm cache vs cold", f"{args.plans:,} plans", f"{figures['warm_cache']['warm_s']:.2f} s", f"cold: {figures['warm_cache']['cold_s']:.2f} s", "warm_cache"),
    ]
    print()
    print(f"{'':30} {'input':>13} {'planlint':>10} {'compared with':>17} {'ratio':>7} {'target':>7}")
    for label, size, ours, theirs, name in rows:
        status = "met" if met[name] else "NOT MET"
        print(f"{label:30} {size:>13} {ours:>10} {theirs:>17} {ratios[name]:>6.2f}x {'<=' + format(TARGETS[name][1], 'g') + 'x':>7}  {status}")
    print()
    print("time per plan: " + ", ".join(f"{size:,} plans {per_plan[size]:.2f} ms" for size in SCALE))
    print(f"findings: {len(report['findings'])} in {len(flagged)} of {report['files']:,} files; "
          f"serial, parallel, cold-cache and warm-cache runs {'give identical output' if identical else 'DIFFER'}")
    print(f"medians of {rounds} rounds ({rounds * 5} for one file); wall time of whole processes")

    if args.json:
        payload = {"machine": info, "rounds": rounds, "seed": args.seed, "figures": figures, "ratios": ratios,
                   "targets": {name: limit for name, (_, limit) in TARGETS.items()}, "met": met,
                   "time_per_plan_ms": {str(k): v for k, v in per_plan.items()}, "identical_findings": identical,
                   "findings": len(report["findings"]), "files_with_findings": len(flagged)}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if not identical:
        print("lint_speed: the runs disagree on the findings", file=sys.stderr)
        return 1
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
