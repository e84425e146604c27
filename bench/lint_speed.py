#!/usr/bin/env python3
"""How fast is planlint? Measured side by side with check-jsonschema, libyaml and Python itself.

    python bench/lint_speed.py [--plans 2000] [--rounds 3] [--json FILE] [--data-json FILE ...]

Generates a deterministic corpus of realistic plans (bench/corpus.py: varied
shapes and sizes, about 5% with findings) in a temporary directory and times
whole processes, as a user or a hook runs them:

  1. planlint (all rules, JSON output, no cache) against
     `check-jsonschema --schemafile schemas/plan.schema.json` on the same files,
     and planlint serially (`--jobs 1`) against the parser's own limit: libyaml
     composing every file (PyYAML's CSafeLoader, `yaml.compose`, no rules, no
     positions kept; PyYAML is in the `bench` extra);
  2. one plan file, both tools (the pre-commit case): the file is named inside
     a git repository whose plans/ holds the whole corpus, so planlint also
     reads the other plans' names for PL005, as the hook does; a bare
     interpreter start (`python -c pass`) alongside, the floor of any Python tool;
  3. planlint on 100, 1,000 and 10,000 plans (time per plan);
  4. planlint twice on an unchanged corpus with the cache on (cold, then warm);
  5. the largest plans planlint accepts (1 MiB each): one with ~50,000 keys
     (as many as the 100,000-value limit allows, keys being values too) and
     one with two 3,600-item task lists, one file per process.

The tools alternate within each round and the figures are medians over the
rounds. The findings of the serial uncached run, the parallel run and the
cold and warm cached runs are compared: they must be identical. Prints a
table, the ratios against the targets of issue #6, and each target of issue
#18 with met or not met; the data checks' target (planlint against DuckDB)
is bench/data_leakage.py's, read from its --json output with --data-json.
--json writes the figures. Exit 0 when every target is met, 1 otherwise, 2
when a tool is missing or fails.
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
# Issue #18: close to the parser's own limit.
LIMIT_TARGETS = {
    "serial_vs_libyaml": ("serial (--jobs 1), uncached corpus / libyaml compose of the same files", 2.0),
    "one_file_vs_cj": ("one plan file / check-jsonschema, whole processes", 0.15),
    "largest_plans_s": ("each largest allowed plan (1 MiB), whole process, seconds", 1.0),
    "data_vs_duckdb": ("data checks / DuckDB, every format bench/data_leakage.py covers", 1.0),
}
MIB = 1024 * 1024
TASKS_PER_LIST = 3_600

# libyaml's own work on the same files: compose each one (the node graph, no
# Python objects for the values, no positions kept, no rules), in one process.
COMPOSE = """
import sys, yaml
for name in sys.argv[1:]:
    with open(name, "rb") as handle:
        try:
            yaml.compose(handle, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            pass
"""


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
        "pyyaml": installed("PyYAML"),
    }


def check_libyaml() -> None:
    """PyYAML built with libyaml, or a BenchError saying how to get it."""
    try:
        import yaml
    except ImportError:
        raise BenchError("PyYAML not found; install the bench extra: pip install -e '.[bench]'") from None
    if not getattr(yaml, "__with_libyaml__", False):
        raise BenchError("PyYAML is installed without libyaml (no CSafeLoader); reinstall it from a wheel: pip install --force-reinstall pyyaml")


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "?"


def largest_plans(directory: Path, seed: int) -> dict[str, Path]:
    """Two plans of just under 1 MiB (max_file_size), within every other limit too.

    keys: a clean corpus plan plus an `x-labels` mapping of ~50,000 keys: keys
    count as values, so 100,000 values (max_nodes) allow about 49,900 keys with
    their values beside the plan's own.
    lists: a clean corpus plan whose train and eval splits list 3,600 task ids
    each (every id unique, none in both: PL206 compares the two lists), ids
    long enough to fill the megabyte.
    """
    from corpus import make_plan

    index = next(i for i in range(1000) if make_plan(seed, i)[1] is None and "    path: " in make_plan(seed, i)[0])
    base, _ = make_plan(seed, index)
    directory.mkdir(parents=True, exist_ok=True)
    out = {}

    keys = 49_800
    head = base + "x-labels:\n"
    width = (MIB - 1 - len(head.encode())) // keys  # bytes per `  k00000: value` line
    value = "v" * (width - len("  k00000: \n") - 5)
    text = head + "".join(f"  k{i:05d}: {value}{i:05d}\n" for i in range(keys))
    out["keys"] = directory / f"plan-{keys}-keys.yaml"
    out["keys"].write_text(text, encoding="utf-8")

    lines = base.splitlines()
    train = lines.index("  train:")
    evaluation = lines.index("  eval:")
    topic = lines[lines.index("dataset:") + 1].split(":", 1)[1].strip()
    fixed = len(base.encode()) - len(lines[train + 1]) - len(lines[evaluation + 1]) + len("    tasks:\n") * 2
    per_item = (MIB - 1 - fixed) // (2 * TASKS_PER_LIST)
    pad = "t" * (per_item - len(f"      - {topic}/train/2026-11/ticket-0000000-\n"))

    def tasks(side: str, first: int) -> list[str]:
        return ["    tasks:"] + [f"      - {topic}/{side}/2026-11/ticket-{first + i:07d}-{pad}" for i in range(TASKS_PER_LIST)]

    lines[evaluation + 1:evaluation + 2] = tasks("eval", 5_000_000)
    lines[train + 1:train + 2] = tasks("train", 0)
    text = "\n".join(lines) + "\n"
    out["lists"] = directory / f"plan-{TASKS_PER_LIST}-item-lists.yaml"
    out["lists"].write_text(text, encoding="utf-8")
    for path in out.values():
        size = path.stat().st_size
        if size > MIB:
            raise BenchError(f"{path.name} is {size:,} bytes, over max_file_size")
    return out


def data_target(paths: list[str]) -> tuple[str, bool | None]:
    """Target 4 of issue #18 from bench/data_leakage.py --json files: (text, met or None when not measured here)."""
    if not paths:
        return "see bench/data_leakage.py (run it per format; --data-json FILE reads its --json here)", None
    ratios = []
    for name in paths:
        try:
            result = json.loads(Path(name).read_text(encoding="utf-8"))
            ratios.append((str(result.get("params", {}).get("format", "?")), float(result["ratio"])))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BenchError(f"--data-json {name}: not a bench/data_leakage.py --json result ({exc})") from None
    shown = ", ".join(f"{fmt} {ratio:.2f}x" for fmt, ratio in ratios)
    return shown, all(ratio <= LIMIT_TARGETS["data_vs_duckdb"][1] for _, ratio in ratios)


def median(values: list[float]) -> float:
    return statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plans", type=int, default=2000, help="plans in the corpus of figures 1 and 4 (default 2000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per figure; medians are reported (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--workdir", metavar="DIR", help="generate the corpora here and keep them (default: a temporary directory)")
    parser.add_argument("--only", choices=("one-file", "largest", "corpus"), help="measure only this figure (a brief check)")
    parser.add_argument("--data-json", metavar="FILE", action="append", default=[],
                        help="a bench/data_leakage.py --json result (repeatable, one per format): target 4 of issue #18 is read from them")
    args = parser.parse_args(argv)
    if args.plans < 1 or args.rounds < 1:
        parser.error("--plans and --rounds must be at least 1")
    try:
        planlint, check_jsonschema = tool("planlint"), tool("check-jsonschema")
        check_libyaml()
        if args.workdir:
            work = Path(args.workdir).resolve()
            work.mkdir(parents=True, exist_ok=True)
            return _bench(args, work, planlint, check_jsonschema)
        with tempfile.TemporaryDirectory(prefix="planlint-bench-") as tmp:
            return _bench(args, Path(tmp), planlint, check_jsonschema)
    except BenchError as exc:
        print(f"lint_speed: {exc}", file=sys.stderr)
        return 2


def _corpus_only(rounds: int, run, lint: list[str], corpus: str, compose: list[str], files: list[str], work: Path, load_before: str) -> int:
    """Figure 1's serial half alone (a brief check of target 1): planlint --jobs 1, uncached, against libyaml composing the same files."""
    serial_times, compose_times = [], []
    for r in range(rounds):
        for name in (("serial", "compose") if r % 2 == 0 else ("compose", "serial")):
            if name == "serial":
                serial_times.append(run(lint + ["--no-cache", "--jobs", "1", corpus], work)[0])
            else:
                compose_times.append(run(compose + files, work)[0])
        print(f"  round {r + 1}/{rounds}: planlint --jobs 1 {serial_times[-1]:.2f}s, libyaml compose {compose_times[-1]:.2f}s", file=sys.stderr, flush=True)
    ratio = median(serial_times) / median(compose_times)
    met = ratio <= LIMIT_TARGETS["serial_vs_libyaml"][1]
    print(f"1. corpus, serial: planlint --jobs 1 {median(serial_times):.2f} s, libyaml compose {median(compose_times):.2f} s, "
          f"ratio {ratio:.2f}x (issue #18 target 1: <= {LIMIT_TARGETS['serial_vs_libyaml'][1]:g}x: {'met' if met else 'NOT MET'})")
    print(f"load average {load_before} -> {load_average()}")
    return 0 if met else 1


def _bench(args, work: Path, planlint: str, check_jsonschema: str) -> int:
    rounds = args.rounds
    info = machine()
    print(f"machine: {info['cpu']}, {info['cpus_available']} CPUs available; {info['os']}; Python {info['python']}")
    print(f"tools: planlint {info['planlint']}, check-jsonschema {info['check-jsonschema']} (jsonschema {info['jsonschema']}), "
          f"PyYAML {info['pyyaml']} with libyaml")
    load_before = load_average()
    print(f"load average at the start: {load_before}")
    # An empty [tool.planlint] table: every rule, default settings, and no config from above the work directory.
    (work / "pyproject.toml").write_text("[tool.planlint]\n", encoding="utf-8")

    start = time.perf_counter()
    corpus = f"corpus-{args.plans}"
    defects = write_corpus(work / corpus, args.plans, args.seed)
    for size in SCALE if not args.only else ():
        if not (work / f"scale-{size}").exists():
            write_corpus(work / f"scale-{size}", size, args.seed)
    big = largest_plans(work / "largest", args.seed)
    files = sorted(f"{corpus}/{name}" for name in defects)
    with_defect = sum(1 for d in defects.values() if d)
    print(f"corpus: {args.plans:,} plans ({with_defect} with a planted defect) + {0 if args.only else sum(SCALE):,} for scaling, written in {time.perf_counter() - start:.1f}s")

    lint = [planlint, "--format", "json"]
    cj = [check_jsonschema, "--schemafile", str(SCHEMA)]
    compose = [sys.executable, "-c", COMPOSE]
    bare = [sys.executable, "-c", "pass"]
    one_file = next(name for name in files if not defects[name.split("/", 1)[1]])

    # Warm up: byte-compile both tools, fill the OS file cache.
    run(lint + ["--no-cache", corpus], work)
    run(cj + files[:50], work)
    run(compose + files, work)

    def progress(text: str) -> None:
        print(f"  {text}", file=sys.stderr, flush=True)

    def largest() -> dict[str, dict]:
        """Each 1 MiB plan alone, whole process, serial and uncached: median seconds and the codes found."""
        times: dict[str, list[float]] = {name: [] for name in big}
        codes: dict[str, list[str]] = {}
        for r in range(rounds):
            for name, path in (big.items() if r % 2 == 0 else reversed(big.items())):
                elapsed, out = run(lint + ["--no-cache", "--jobs", "1", str(path.relative_to(work))], work)
                times[name].append(elapsed)
                codes[name] = sorted({f["code"] for f in json.loads(out)["findings"]})
            progress(f"round {r + 1}/{rounds}: largest plans " + ", ".join(f"{n} {times[n][-1]:.2f}s" for n in big))
        return {name: {"file": big[name].name, "bytes": big[name].stat().st_size, "s": median(times[name]), "codes": codes[name]} for name in big}

    if args.only == "largest":
        sizes = largest()
        print()
        for name, figure in sizes.items():
            print(f"{figure['file']} ({figure['bytes']:,} bytes): {figure['s']:.2f} s, findings {', '.join(figure['codes']) or 'none'}")
        met = all(figure["s"] < LIMIT_TARGETS["largest_plans_s"][1] for figure in sizes.values())
        print(f"target 3 (issue #18): each under {LIMIT_TARGETS['largest_plans_s'][1]:g} s: {'met' if met else 'NOT MET'}; load average {load_before} -> {load_average()}")
        return 0 if met else 1

    if args.only == "corpus":
        return _corpus_only(rounds, run, lint, corpus, compose, files, work, load_before)

    # 2. one file, both tools and a bare interpreter, named inside a git repository whose plans/ is the corpus
    repo = work / f"repo-{args.plans}"
    if not (repo / "plans").exists():
        shutil.copytree(work / corpus, repo / "plans")
        (repo / "pyproject.toml").write_text("[tool.planlint]\n", encoding="utf-8")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    staged = "plans/" + one_file.split("/", 1)[1]
    pl_one, cj_one, bare_one = [], [], []
    for r in range(rounds * 5):
        for name in (("planlint", "cj", "bare") if r % 2 == 0 else ("bare", "cj", "planlint")):
            if name == "planlint":
                pl_one.append(run(lint + ["--no-cache", staged], repo)[0])
            elif name == "cj":
                cj_one.append(run(cj + [staged], repo)[0])
            else:
                bare_one.append(run(bare, repo)[0])
    progress(f"one file in a repository of {args.plans:,} plans: planlint {median(pl_one):.3f}s, check-jsonschema {median(cj_one):.3f}s, python -c pass {median(bare_one):.3f}s")
    if args.only == "one-file":
        ratio = median(pl_one) / median(cj_one)
        print(f"2. one file (pre-commit, {args.plans:,} plans in the repository): planlint {median(pl_one) * 1000:.0f} ms, "
              f"check-jsonschema {median(cj_one) * 1000:.0f} ms, ratio {ratio:.2f}x (target <= {TARGETS['one_file'][1]}x; "
              f"issue #18: <= {LIMIT_TARGETS['one_file_vs_cj'][1]}x: {'met' if ratio <= LIMIT_TARGETS['one_file_vs_cj'][1] else 'NOT MET'}); "
              f"python -c pass {median(bare_one) * 1000:.0f} ms, planlint {median(pl_one) / median(bare_one):.1f}x that")
        print(f"load average {load_before} -> {load_average()}")
        return 0 if ratio <= LIMIT_TARGETS["one_file_vs_cj"][1] else 1

    # 1. the corpus: planlint (parallel, as by default), check-jsonschema, planlint serial, libyaml compose
    pl_times, cj_times, serial_times, compose_times = [], [], [], []
    reference = None
    order = ("planlint", "cj", "serial", "compose")
    for r in range(rounds):
        for name in (order if r % 2 == 0 else tuple(reversed(order))):
            if name == "planlint":
                elapsed, out = run(lint + ["--no-cache", corpus], work)
                pl_times.append(elapsed)
                reference = reference or out
            elif name == "cj":
                cj_times.append(run(cj + files, work)[0])
            elif name == "serial":
                serial_times.append(run(lint + ["--no-cache", "--jobs", "1", corpus], work)[0])
            else:
                compose_times.append(run(compose + files, work)[0])
        progress(f"round {r + 1}/{rounds}: corpus planlint {pl_times[-1]:.2f}s, check-jsonschema {cj_times[-1]:.2f}s, "
                 f"planlint --jobs 1 {serial_times[-1]:.2f}s, libyaml compose {compose_times[-1]:.2f}s")

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

    # 5. the largest plans
    sizes = largest()

    # The same findings whichever path produced them.
    outputs["parallel, no cache"] = reference
    outputs["serial, no cache"] = run(lint + ["--no-cache", "--jobs", "1", corpus], work)[1]
    identical = len(set(outputs.values())) == 1
    report = json.loads(reference)
    flagged = {f["path"] for f in report["findings"]}
    load_after = load_average()

    figures = {
        "corpus": {"plans": args.plans, "planlint_s": median(pl_times), "check_jsonschema_s": median(cj_times),
                   "planlint_serial_s": median(serial_times), "libyaml_compose_s": median(compose_times)},
        "one_file": {"planlint_s": median(pl_one), "check_jsonschema_s": median(cj_one), "python_start_s": median(bare_one)},
        "scaling": {str(size): median(times) for size, times in scale_times.items()},
        "warm_cache": {"plans": args.plans, "cold_s": median(cold), "warm_s": median(warm)},
        "largest_plans": sizes,
    }
    ratios = {
        "corpus": figures["corpus"]["planlint_s"] / figures["corpus"]["check_jsonschema_s"],
        "one_file": figures["one_file"]["planlint_s"] / figures["one_file"]["check_jsonschema_s"],
        "scaling": figures["scaling"]["10000"] / figures["scaling"]["1000"],
        "warm_cache": figures["warm_cache"]["warm_s"] / figures["warm_cache"]["cold_s"],
    }
    met = {name: ratios[name] <= TARGETS[name][1] for name in TARGETS}
    limits = {
        "serial_vs_libyaml": figures["corpus"]["planlint_serial_s"] / figures["corpus"]["libyaml_compose_s"],
        "parallel_vs_libyaml": figures["corpus"]["planlint_s"] / figures["corpus"]["libyaml_compose_s"],
        "serial_vs_cj": figures["corpus"]["planlint_serial_s"] / figures["corpus"]["check_jsonschema_s"],
        "one_file_vs_cj": ratios["one_file"],
        "one_file_vs_python": figures["one_file"]["planlint_s"] / figures["one_file"]["python_start_s"],
        "largest_plans_s": max(figure["s"] for figure in sizes.values()),
    }
    data_text, data_met = data_target(args.data_json)
    limit_met = {
        "serial_vs_libyaml": limits["serial_vs_libyaml"] <= LIMIT_TARGETS["serial_vs_libyaml"][1],
        "one_file_vs_cj": limits["one_file_vs_cj"] <= LIMIT_TARGETS["one_file_vs_cj"][1],
        "largest_plans_s": limits["largest_plans_s"] < LIMIT_TARGETS["largest_plans_s"][1],
        "data_vs_duckdb": data_met,
    }

    per_plan = {size: figures["scaling"][str(size)] / size * 1000 for size in SCALE}
    rows = [
        ("1. corpus, all rules", f"{args.plans:,} plans", f"{figures['corpus']['planlint_s']:.2f} s", f"{figures['corpus']['check_jsonschema_s']:.2f} s", "corpus"),
        ("2. one file (pre-commit)", "1 plan", f"{figures['one_file']['planlint_s'] * 1000:.0f} ms", f"{figures['one_file']['check_jsonschema_s'] * 1000:.0f} ms", "one_file"),
        ("3. scaling, 10,000 vs 1,000", "10,000 plans", f"{figures['scaling']['10000']:.2f} s", f"1,000: {figures['scaling']['1000']:.2f} s", "scaling"),
        ("4. warm cache vs cold", f"{args.plans:,} plans", f"{figures['warm_cache']['warm_s']:.2f} s", f"cold: {figures['warm_cache']['cold_s']:.2f} s", "warm_cache"),
    ]
    print()
    print("issue #6, against check-jsonschema:")
    print(f"{'':30} {'input':>13} {'planlint':>10} {'compared with':>17} {'ratio':>7} {'target':>7}")
    for label, size, ours, theirs, name in rows:
        status = "met" if met[name] else "NOT MET"
        print(f"{label:30} {size:>13} {ours:>10} {theirs:>17} {ratios[name]:>6.2f}x {'<=' + format(TARGETS[name][1], 'g') + 'x':>7}  {status}")
    print()
    print("the limits: libyaml composing the same files, and a bare interpreter start")
    print(f"  corpus: planlint --jobs 1 {figures['corpus']['planlint_serial_s']:.2f} s, planlint (parallel) {figures['corpus']['planlint_s']:.2f} s, "
          f"libyaml compose {figures['corpus']['libyaml_compose_s']:.2f} s, check-jsonschema {figures['corpus']['check_jsonschema_s']:.2f} s")
    print(f"    planlint --jobs 1 / libyaml compose {limits['serial_vs_libyaml']:.2f}x, parallel / libyaml compose {limits['parallel_vs_libyaml']:.2f}x, "
          f"--jobs 1 / check-jsonschema {limits['serial_vs_cj']:.2f}x")
    print(f"  one file: planlint {figures['one_file']['planlint_s'] * 1000:.0f} ms, python -c pass {figures['one_file']['python_start_s'] * 1000:.0f} ms "
          f"({limits['one_file_vs_python']:.1f}x), check-jsonschema {figures['one_file']['check_jsonschema_s'] * 1000:.0f} ms ({ratios['one_file']:.2f}x)")
    for name, figure in sizes.items():
        print(f"  largest plan, {figure['file']} ({figure['bytes']:,} bytes): {figure['s']:.2f} s, findings: {', '.join(figure['codes']) or 'none'}")
    print()
    print("issue #18 targets:")
    shown = {
        "serial_vs_libyaml": f"{limits['serial_vs_libyaml']:.2f}x",
        "one_file_vs_cj": f"{limits['one_file_vs_cj']:.2f}x",
        "largest_plans_s": " and ".join(f"{figure['s']:.2f} s" for figure in sizes.values()),
        "data_vs_duckdb": data_text,
    }
    bounds = {"serial_vs_libyaml": "<= 2.0x", "one_file_vs_cj": "<= 0.15x", "largest_plans_s": "< 1 s each", "data_vs_duckdb": "<= 1.0x"}
    for number, (name, (label, _)) in enumerate(LIMIT_TARGETS.items(), start=1):
        status = {True: "met", False: "NOT MET", None: "not measured here"}[limit_met[name]]
        print(f"  {number}. {label}: {shown[name]} (target {bounds[name]}): {status}")
    print()
    print("time per plan: " + ", ".join(f"{size:,} plans {per_plan[size]:.2f} ms" for size in SCALE))
    print(f"findings: {len(report['findings'])} in {len(flagged)} of {report['files']:,} files; "
          f"serial, parallel, cold-cache and warm-cache runs {'give identical output' if identical else 'DIFFER'}")
    print(f"medians of {rounds} rounds ({rounds * 5} for one file); wall time of whole processes; load average {load_before} at the start, {load_after} at the end")

    if args.json:
        payload = {"machine": info, "rounds": rounds, "seed": args.seed, "load_average": {"start": load_before, "end": load_after},
                   "figures": figures, "ratios": ratios,
                   "targets": {name: limit for name, (_, limit) in TARGETS.items()}, "met": met,
                   "limits": limits, "limit_targets": {name: limit for name, (_, limit) in LIMIT_TARGETS.items()}, "limit_met": limit_met,
                   "time_per_plan_ms": {str(k): v for k, v in per_plan.items()}, "identical_findings": identical,
                   "findings": len(report["findings"]), "files_with_findings": len(flagged)}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if not identical:
        print("lint_speed: the runs disagree on the findings", file=sys.stderr)
        return 1
    return 0 if all(met.values()) and all(v is not False for v in limit_met.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
