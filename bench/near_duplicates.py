#!/usr/bin/env python3
"""Benchmark PL212's near-duplicate algorithm (services/near_duplicates.py) against a MinHash-LSH library.

Generates, with a fixed seed, a train split (default 1,000,000 rows) and an
eval split (default 100,000 rows) of inputs of 20-60 words
(near_duplicate_rows.py: Zipfian words, a template shared by 30% of the rows
of both splits, `--planted` eval inputs copied into train with 1-3 light
edits each), written as JSON Lines with the fields bench/data_leakage.py
uses. Then, each in its own child process, alternating, `--repeat` times:

* `check`: planlint's data check as it is (PL207-PL209, check_split_data);
* `planlint`: PL212's index and probe over the same inputs (read and
  normalized first, untimed: the data check already does that), timed
  alone: the index over the eval inputs, the probe of every train input,
  the candidates measured;
* each library (`--libraries`, default rensa; datasketch takes ~250 us a
  row): the same job, reading and parsing included (near_duplicate_libraries.py).

It prints each side's median time, CPU time and peak memory (VmHWM), the
planted near-duplicates found (recall) and the findings on other rows
(false findings), and the projected ratio of the data check with PL212 to
the check without it: (check + PL212's own time) / check, from the same
run. PL212 is not wired into the data path yet, so that ratio is a
projection, not a measured run of one check.

    python bench/near_duplicates.py                 # 1M / 100k
    python bench/near_duplicates.py --train-rows 200000 --eval-rows 20000 --repeat 1
    python bench/near_duplicates.py --keep-dir /tmp/nd --libraries rensa,datasketch

Needs `pip install -e ".[bench]"` (rensa, datasketch).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_duplicate_rows import NearDuplicateRows

CUTOFF = "2026-08-01"
RECALL_TARGET, RATIO_TARGET = 0.95, 2.0


def generate(directory: Path, args: argparse.Namespace) -> dict:
    rows = NearDuplicateRows(args.train_rows, args.eval_rows, planted=args.planted, seed=args.seed)
    rnd = random.Random(args.seed)
    for split, texts, day in (("train", rows.train, "2026-03-02T10:00:00Z"), ("eval", rows.eval, "2026-09-02T10:00:00Z")):
        with open(directory / f"{split}.jsonl", "w", encoding="utf-8") as handle:
            for number, text in enumerate(texts):
                record = {"id": f"{split}-{number}", "customer_id": f"{split}-{rnd.randrange(10**7)}", "created_at": day,
                          "prompt": text, "answer": "Within the window; refund issued."}
                handle.write(json.dumps(record) + "\n")
    return {"planted": {str(edit.eval_index + 1): edit.train_index + 1 for edit in rows.edits},
            "kinds": {str(edit.eval_index + 1): list(edit.kinds) for edit in rows.edits}}


def _peak_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu() -> float:
    """CPU time of this process and its reaped children (the data check's worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def child_check(directory: Path) -> dict:
    sys.path.insert(0, str(ROOT / "src"))
    from planlint.services.split_data import check_split_data

    with tempfile.TemporaryDirectory(prefix="planlint-nd-cache-") as cache:
        start, cpu = time.perf_counter(), _cpu()
        check_split_data(directory / "train.jsonl", directory / "eval.jsonl", group_key="customer_id", time_key="created_at",
                         cutoff=CUTOFF, input_fields=None, cache_dir=Path(cache))
        return {"seconds": time.perf_counter() - start, "cpu": _cpu() - cpu}


def _normalized_prompts(path: Path, batch: int = 8192):
    """The `prompt` of every row, normalized as PL209 compares it, in batches."""
    import unicodedata

    out: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            text = json.loads(line).get("prompt") or ""
            out.append(" ".join((text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()).split()))
            if len(out) == batch:
                yield out
                out = []
    if out:
        yield out


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def child_planlint(directory: Path) -> dict:
    """PL212's own work, timed alone: reading and normalizing (the data check's) is not counted."""
    sys.path.insert(0, str(ROOT / "src"))
    from planlint.services.near_duplicates import NearIndex

    before_mb = _rss_mb()
    index = NearIndex()
    seconds = cpu = 0.0
    rows = 1
    for batch in _normalized_prompts(directory / "eval.jsonl"):
        start, start_cpu = time.perf_counter(), _cpu()
        index.add(range(rows, rows + len(batch)), batch)
        seconds, cpu, rows = seconds + time.perf_counter() - start, cpu + _cpu() - start_cpu, rows + len(batch)
    start, start_cpu = time.perf_counter(), _cpu()
    index.finish()
    built, built_cpu = seconds + time.perf_counter() - start, cpu + _cpu() - start_cpu
    index_mb = _rss_mb() - before_mb
    seconds, cpu = built, built_cpu
    found: dict[int, int] = {}
    candidates, row = 0, 0
    for batch in _normalized_prompts(directory / "train.jsonl"):
        start, start_cpu = time.perf_counter(), _cpu()
        for position in index.candidates(batch):
            candidates += 1
            text = batch[position]
            for match in index.matches(text):
                eval_row = index.rows[match.position]
                if eval_row not in found and index.text(match.position) != text:  # an exact duplicate is PL209's
                    found[eval_row] = row + position + 1
        seconds, cpu, row = seconds + time.perf_counter() - start, cpu + _cpu() - start_cpu, row + len(batch)
    return {"seconds": seconds, "cpu": cpu, "index_seconds": built, "index_cpu": built_cpu,
            "candidates": candidates, "anchors": index.anchors, "found": sorted(found.items()), "index_mb": index_mb}


def child_library(directory: Path, library: str, threshold: float) -> dict:
    import near_duplicate_libraries

    start_cpu = _cpu()
    result = near_duplicate_libraries.run(library, str(directory / "train.jsonl"), str(directory / "eval.jsonl"), "prompt", threshold)
    result["cpu"] = _cpu() - start_cpu
    return result


def run_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", *args], check=False, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"child {args[0]} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-rows", type=int, default=1_000_000)
    parser.add_argument("--eval-rows", type=int, default=100_000)
    parser.add_argument("--planted", type=int, default=100, help="eval inputs copied into train with 1-3 light edits")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--libraries", default="rensa", help="comma-separated: rensa, datasketch (or none)")
    parser.add_argument("--lsh-threshold", type=float, default=0.4, help="the libraries' estimated Jaccard threshold")
    parser.add_argument("--keep-dir", metavar="DIR")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        side, directory = args.child[0], Path(args.child[1])
        if side == "check":
            result = child_check(directory)
        elif side == "planlint":
            result = child_planlint(directory)
        else:
            result = child_library(directory, side, float(args.child[2]))
        result["peak_mb"] = _peak_mb()
        print(json.dumps(result))
        return 0

    temporary = None
    if args.keep_dir:
        directory = Path(args.keep_dir)
        directory.mkdir(parents=True, exist_ok=True)
    else:
        temporary = tempfile.TemporaryDirectory(prefix="planlint-nd-bench-")
        directory = Path(temporary.name)
    try:
        params = {key: getattr(args, key) for key in ("train_rows", "eval_rows", "planted", "seed")}
        manifest = directory / "manifest.json"
        expected = None
        if manifest.exists():
            saved = json.loads(manifest.read_text())
            if saved.get("params") == params:
                expected = saved["expected"]
        if expected is None:
            start = time.perf_counter()
            expected = generate(directory, args)
            manifest.write_text(json.dumps({"params": params, "expected": expected}))
            print(f"generated {args.train_rows:,} train + {args.eval_rows:,} eval rows in {time.perf_counter() - start:.1f} s")
        libraries = [name for name in args.libraries.split(",") if name and name != "none"]
        runs: dict[str, list[dict]] = {"check": [], "planlint": [], **{name: [] for name in libraries}}
        for _ in range(args.repeat):
            runs["check"].append(run_child("check", str(directory)))
            runs["planlint"].append(run_child("planlint", str(directory)))
            for name in libraries:
                runs[name].append(run_child(name, str(directory), str(args.lsh_threshold)))
    finally:
        if temporary is not None:
            temporary.cleanup()

    planted = {int(row): train for row, train in expected["planted"].items()}
    median = {side: sorted(results, key=lambda run: run["seconds"])[(len(results) - 1) // 2] for side, results in runs.items()}
    load = os.getloadavg()
    print(f"train {args.train_rows:,} rows, eval {args.eval_rows:,} rows, {len(planted)} planted near-duplicates; "
          f"cpus {os.cpu_count()}, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; median of {args.repeat}")
    print(f"{'':34}{'time (s)':>10}{'cpu (s)':>10}{'peak MB':>10}{'recall':>10}{'false':>8}")
    report: dict = {"params": params, "runs": runs}
    for side, result in median.items():
        if side == "check":
            print(f"{'data check (PL207-PL209)':34}{result['seconds']:>10.2f}{result['cpu']:>10.2f}{result['peak_mb']:>10.0f}")
            continue
        found = dict(result["found"])
        recall = sum(1 for row, train in planted.items() if found.get(row) == train) / max(1, len(planted))
        false = sum(1 for row in found if row not in planted)
        name = "PL212 (planlint)" if side == "planlint" else f"{result.get('library', side)} MinHash-LSH"
        print(f"{name:34}{result['seconds']:>10.2f}{result['cpu']:>10.2f}{result['peak_mb']:>10.0f}{recall:>10.1%}{false:>8}")
        report[side] = {"recall": recall, "false_findings": false}
    nd, check = median["planlint"], median["check"]
    ratio = (check["seconds"] + nd["seconds"]) / check["seconds"]
    print(f"PL212: index of the eval inputs {nd['index_seconds']:.2f} s ({nd['index_cpu'] / max(1, args.eval_rows) * 1e6:.1f} us cpu a row, "
          f"{nd['anchors']:,} anchors, {nd['index_mb']:.0f} MB: {nd['index_mb'] * 1e6 / max(1, args.eval_rows):.0f} B an eval row), "
          f"probe {nd['seconds'] - nd['index_seconds']:.2f} s ({(nd['cpu'] - nd['index_cpu']) / max(1, args.train_rows) * 1e6:.2f} us cpu a train row, "
          f"{nd['candidates']:,} candidates measured)")
    recall = report["planlint"]["recall"]
    print(f"target: recall >= {RECALL_TARGET:.0%}: {recall:.1%}, {'met' if recall >= RECALL_TARGET else 'NOT met'}; "
          f"false findings 0: {report['planlint']['false_findings']}, {'met' if not report['planlint']['false_findings'] else 'NOT met'}")
    print(f"projected: the data check with PL212 {ratio:.2f}x the check without it (target {RATIO_TARGET}x; "
          f"{'met' if ratio <= RATIO_TARGET else 'NOT met'}; PL212 not wired into the check yet)")
    report.update(projected_ratio=ratio, load=load)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
