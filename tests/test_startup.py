"""The whole process (a pre-commit hook's run): what start-up and exit shortcuts must never change.

`planlint` and `python -m planlint` run `cli.entry`, which holds the garbage
collector back while importing and ends the process without the interpreter's
teardown. Neither may lose a byte of output, change an exit status, or skip an
atexit handler. No timings here: bench/lint_speed.py measures speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, Result, write

sys.path.insert(0, str(ROOT / "bench"))
from corpus import make_plan  # noqa: E402

sys.path.remove(str(ROOT / "bench"))


def run_process(*args: str, cwd: Path) -> Result:
    """`python -m planlint` as a hook starts it: output buffered (PYTHONUNBUFFERED would hide a lost flush)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "PYTHONUNBUFFERED")}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-m", "planlint", *args], cwd=cwd, capture_output=True, timeout=120, env=env)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def _corpus(root: Path, count: int) -> None:
    for index in range(count):
        write(root / "plans" / f"plan-{index:04d}.yaml", make_plan(7, index)[0])


def test_whole_process_output_is_complete_and_equals_the_in_process_run(tmp_path, planlint):
    # A report far larger than a pipe's buffer: whatever is still buffered when the process ends
    # must be flushed before it does, to standard output and to every --output file.
    _corpus(tmp_path, 300)
    for index in range(300):  # every plan with findings, so the report is long
        path = tmp_path / "plans" / f"plan-{index:04d}.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("max_spend:", "max_spend_typo:", 1), encoding="utf-8")
    args = ["--format", "json", "--no-cache", "--output", "sarif=out/report.sarif", "--summary", "out/summary.md", "plans"]
    child = run_process(*args, cwd=tmp_path)
    sarif = (tmp_path / "out" / "report.sarif").read_text(encoding="utf-8")
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    inside = planlint(*args, cwd=tmp_path)
    assert len(child.out) > 1 << 17
    assert (child.status, child.out) == (inside.status, inside.out) == (1, inside.out)
    assert json.loads(child.out)["files"] == 300
    assert sarif == (tmp_path / "out" / "report.sarif").read_text(encoding="utf-8")
    assert summary == (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")


def test_subcommand_output_is_complete(tmp_path):
    # `planlint explain` and `planlint rules` write without flushing (a short text stays in the
    # buffer): the process must flush before it ends.
    from planlint.cli import explain_text, rules_text
    from planlint.rules import RULES

    for fmt in ("text", "json", "markdown"):
        assert run_process("rules", "--format", fmt, cwd=tmp_path).out == rules_text(fmt)
    child = run_process("explain", "PL102", cwd=tmp_path)
    assert (child.status, child.out) == (0, explain_text(RULES["PL102"]))
    assert len(child.out) < 8192  # shorter than the stream's buffer


def test_exit_statuses_of_the_whole_process(tmp_path):
    _corpus(tmp_path, 2)
    assert run_process("--no-cache", "plans", cwd=tmp_path).status == 0
    assert run_process("--no-cache", "--select", "PL999", "plans", cwd=tmp_path).status == 2
    assert run_process("--bogus-flag", cwd=tmp_path).status == 2
    assert run_process("rules", cwd=tmp_path).status == 0
    (tmp_path / "plans" / "plan-0000.yaml").write_text("a: [\n", encoding="utf-8")
    assert run_process("--no-cache", "plans", cwd=tmp_path).status == 1


def test_atexit_handlers_and_threads_still_run(tmp_path):
    # Code that registered an atexit handler (logging, multiprocessing, a plugin) gets the normal exit.
    _corpus(tmp_path, 1)
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('handler ran\\n'))\n"
        "from planlint.cli import entry\n"
        "sys.argv = ['planlint', '--no-cache', '--quiet', 'plans']\n"
        "entry()\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "PYTHONUNBUFFERED")}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0
    assert proc.stderr.endswith("handler ran\n")


def test_a_profiler_still_gets_its_statistics(tmp_path):
    # `python -m cProfile -o FILE -m planlint` writes FILE after planlint returns: no fast exit under a profiler.
    _corpus(tmp_path, 1)
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "PYTHONUNBUFFERED")}
    env["PYTHONPATH"] = str(ROOT / "src")
    stats = tmp_path / "planlint.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "planlint", "--no-cache", "plans"],
                          cwd=tmp_path, capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert stats.stat().st_size > 0


@pytest.mark.parametrize("columns", ["40", "100", "", "bogus"])
def test_help_is_as_wide_as_argparse_makes_it(columns, monkeypatch):
    # cli._HelpFormatter sizes itself without shutil; the help text must be argparse's own.
    import argparse

    from planlint import cli

    if columns:
        monkeypatch.setenv("COLUMNS", columns)
    else:
        monkeypatch.delenv("COLUMNS", raising=False)
    ours = cli._lint_parser().format_help()
    monkeypatch.setattr(cli, "_HelpFormatter", argparse.HelpFormatter)
    assert ours == cli._lint_parser().format_help()
