"""Hostile and malformed input ends in a finding or exit 2: fast, no traceback, nothing run.

"Fast" is proved by counting work, never by a clock: how many YAML events the
loader reads before it refuses a document, how much memory it allocates, how
many bytes of an oversized file it reads. A hang is caught by the subprocess
timeout of run_process.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from conftest import run_process, write

PLAN_HEAD = "apiVersion: planlint/v1\nkind: ExperimentPlan\n"


def _lint_one(tmp_path: Path, name: str, content: bytes, *args: str):
    path = tmp_path / name
    path.write_bytes(content)
    result = run_process("--format", "json", name, *args, cwd=tmp_path, timeout=60)
    assert "Traceback" not in result.err and "Traceback" not in result.out, result
    return result, None


def _counting_events(monkeypatch) -> list[int]:
    """Count the YAML events the loader pulls from the parser (its unit of work)."""
    from planlint.core import yaml_build

    count = [0]
    real = yaml_build.event_source

    def counting(text):
        next_event, close = real(text)

        def counted():
            count[0] += 1
            return next_event()

        return counted, close

    monkeypatch.setattr(yaml_build, "event_source", counting)
    return count


def _load_counted(monkeypatch, text: str):
    """(loaded, YAML events read, peak bytes allocated) for one load_text."""
    from planlint.core.loader import load_text

    events = _counting_events(monkeypatch)
    tracemalloc.start()
    try:
        loaded = load_text(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return loaded, events[0], peak


def _codes(result) -> list[str]:
    return [f["code"] for f in result.json["findings"]]


BILLION_LAUGHS = (
    PLAN_HEAD
    + "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n" for p, c in zip("abcdefgh", "bcdefghi"))
)

CASES = {
    "alias_bomb": (BILLION_LAUGHS.encode(), "PL006"),
    "self_alias": ((PLAN_HEAD + "x: &x [1, *x]\n").encode(), "PL006"),
    "deep_flow_5000": ((PLAN_HEAD + "x: " + "[" * 5000 + "]" * 5000 + "\n").encode(), "PL006"),
    "deep_flow_100000": ((PLAN_HEAD + "x: " + "[" * 100_000 + "]" * 100_000 + "\n").encode(), "PL006"),
    "deep_block_5000": ((PLAN_HEAD + "".join("  " * i + f"k{i}:\n" for i in range(5000))).encode(), "PL006"),
    "siblings_200x490": ((PLAN_HEAD + "x:\n" + "".join("  - " + "[" * 490 + "]" * 490 + "\n" for _ in range(200))).encode(), "PL006"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "PL006"),
    "latin1": ((PLAN_HEAD + "metadata: {name: caf\xe9}\n").encode("latin-1"), "PL006"),
    "python_apply": ((PLAN_HEAD + "x: !!python/object/apply:os.system ['touch PWNED']\n").encode(), "PL001"),
    "python_name": ((PLAN_HEAD + "x: !!python/name:os.system\n").encode(), "PL001"),
    "custom_tag": ((PLAN_HEAD + "x: !Ref foo\n").encode(), "PL001"),
    "yaml_1_3": (("%YAML 1.3\n---\n" + PLAN_HEAD).encode(), "PL001"),
    "sequence_key": ((PLAN_HEAD + "? [a, b]\n: 1\n").encode(), "PL001"),
    "bool_maybe": ((PLAN_HEAD + "x: !!bool maybe\n").encode(), "PL001"),
    "float_abc": ((PLAN_HEAD + "x: !!float abc\n").encode(), "PL001"),
    "int_4301_digits": ((PLAN_HEAD + "x: " + "9" * 4301 + "\n").encode(), "PL001"),
    "int_0x": ((PLAN_HEAD + "x: !!int 0x\n").encode(), "PL001"),
    "undefined_alias": ((PLAN_HEAD + "x: *nowhere\n").encode(), "PL001"),
    "two_documents": ((PLAN_HEAD + "---\n" + PLAN_HEAD).encode(), "PL001"),
    "tab_indent": ((PLAN_HEAD + "metadata:\n\tname: x\n").encode(), "PL001"),
    "control_char": ((PLAN_HEAD + "x: \x07\n").encode(), "PL001"),
    "utf16_without_bom": ((PLAN_HEAD).encode("utf-16-le"), "PL006"),  # with a BOM it is read (test_hiding_from_discovery)
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_file_is_one_finding(case, tmp_path):
    content, code = CASES[case]
    result, _ = _lint_one(tmp_path, "plan.yaml", content)
    assert result.status == 1, result
    assert _codes(result) == [code], result
    assert not (tmp_path / "PWNED").exists()


def _text_cases() -> list[str]:
    out = []
    for case, (content, _) in CASES.items():
        try:
            if content.startswith(PLAN_HEAD.encode()):
                content.decode("utf-8")
                out.append(case)
        except UnicodeDecodeError:
            pass
    return sorted(out)


@pytest.mark.parametrize("case", _text_cases())
def test_hostile_file_is_refused_after_little_work(case, monkeypatch):
    """Whatever the document, the loader reads at most a few thousand events, and
    allocates little beyond a copy of the text, before it refuses it: the limits
    (depth 64, 1,000 aliases, 100,000 values) are checked while streaming, never
    after building what the document describes."""
    content, code = CASES[case]
    loaded, events, peak = _load_counted(monkeypatch, content.decode("utf-8"))
    assert [p.code for p in loaded.problems][:1] == [code], loaded.problems
    assert events <= 2_000, (case, events)
    assert peak < 2 * len(content) + 8 * 1024 * 1024, (case, peak, len(content))


def test_alias_bomb_is_rejected_fast(monkeypatch):
    """Nine levels of nine aliases describe 9**9 strings; the loader shares the anchored
    lists and counts their size, so it stops within the document's own ~100 events."""
    loaded, events, peak = _load_counted(monkeypatch, BILLION_LAUGHS)
    assert [p.code for p in loaded.problems] == ["PL006"]
    assert events <= 150, events
    assert peak < 1024 * 1024, peak


def test_deep_nesting_is_rejected_fast_in_process(monkeypatch):
    """200,000 brackets, or 200 siblings 490 deep: refused at depth 64, after some 70 events."""
    for text in ("x: " + "[" * 100_000 + "]" * 100_000, "\n".join("- " + "[" * 490 + "]" * 490 for _ in range(200))):
        loaded, events, _ = _load_counted(monkeypatch, text)
        assert [p.code for p in loaded.problems] == ["PL006"]
        assert events <= 100, events


def test_oversized_file_is_not_read(tmp_path, monkeypatch):
    content = (PLAN_HEAD + "x: '" + "a" * (5 * 1024 * 1024) + "'\n").encode()
    result, _ = _lint_one(tmp_path, "big.yaml", content)
    assert _codes(result) == ["PL006"]
    assert "limit" in result.json["findings"][0]["message"]
    # In process: not one byte of it is read (fstat says it is too big).
    from planlint.core.loader import load_file

    read: list[int] = []
    real_read = os.read

    def counting_read(fd, n):
        data = real_read(fd, n)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counting_read)
    loaded = load_file(tmp_path / "big.yaml")
    monkeypatch.undo()
    assert [p.code for p in loaded.problems] == ["PL006"] and sum(read) == 0, read


def test_max_file_size_is_configurable(tmp_path):
    write(tmp_path / ".planlint.yaml", "max_file_size: 10\n")
    result, _ = _lint_one(tmp_path, "plan.yaml", PLAN_HEAD.encode())
    assert _codes(result) == ["PL006"]


def test_syntax_error_position_is_the_parsers(tmp_path):
    result, _ = _lint_one(tmp_path, "plan.yaml", (PLAN_HEAD + "metadata:\n  name: x\n   owner: y\n").encode())
    (finding,) = result.json["findings"]
    assert (finding["code"], finding["line"]) == ("PL001", 5)


def test_unreadable_file(tmp_path):
    """A named file that cannot be opened (here a dangling symlink) is PL006."""
    (tmp_path / "plan.yaml").symlink_to(tmp_path / "gone.yaml")
    result = run_process("--format", "json", "plan.yaml", cwd=tmp_path)
    assert result.status == 1, result
    (finding,) = result.json["findings"]
    assert finding["code"] == "PL006" and "cannot be read" in finding["message"]


def test_unreadable_directory_entry(tmp_path):
    """A named path that is a directory of nothing is fine; a FIFO or dir-named .yaml is PL006 or skipped."""
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "odd.yaml").mkdir()
    result = run_process("--format", "json", "plans", cwd=tmp_path)
    assert result.status == 0 and result.json["findings"] == [], result


def test_discovered_yaml_that_does_not_parse_is_reported_but_other_yaml_is_skipped(tmp_path):
    """Whether a file that does not parse was meant to be a plan cannot be told (issue 10.6): it is reported."""
    write(tmp_path / "plans" / "broken.yaml", PLAN_HEAD + "metadata: [\n")
    write(tmp_path / "plans" / "other.yaml", "just: [\n")
    write(tmp_path / "plans" / "config.yml", "key: value\n")  # parses, not a plan: skipped
    result = run_process("--format", "json", "plans", cwd=tmp_path)
    assert [(f["path"], f["code"]) for f in result.json["findings"]] == [("plans/broken.yaml", "PL001"), ("plans/other.yaml", "PL001")]
    assert result.json["files"] == 2
    write(tmp_path / ".planlint.yaml", "exclude: [plans/other.yaml]\n")  # ... unless the config excludes it
    result = run_process("--format", "json", "plans", cwd=tmp_path)
    assert [(f["path"], f["code"]) for f in result.json["findings"]] == [("plans/broken.yaml", "PL001")]


def test_yaml_directive_errors_hold_under_python_O(tmp_path):
    """`%YAML 1.3` is an assertion in some YAML stacks, which `python -O` strips."""
    import subprocess
    import sys

    from conftest import ROOT

    (tmp_path / "plan.yaml").write_text("%YAML 1.3\n---\n" + PLAN_HEAD, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-O", "-m", "planlint", "--format", "json", "plan.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert [f["code"] for f in __import__("json").loads(proc.stdout)["findings"]] == ["PL001"]


def test_pure_python_parser_path_gives_the_same_findings(tmp_path, monkeypatch):
    """Where ruamel.yaml.clib is unavailable the pure-Python parser is used; same results."""
    import builtins

    from planlint.core import loader

    real_import = builtins.__import__

    def no_clib(name, *args, **kwargs):
        if name == "_ruamel_yaml":
            raise ImportError("simulated: no ruamel.yaml.clib")
        return real_import(name, *args, **kwargs)

    from conftest import REFERENCE_PLAN

    samples = [REFERENCE_PLAN.read_text(encoding="utf-8"), BILLION_LAUGHS, PLAN_HEAD + "x: &x [1, *x]\n", PLAN_HEAD + "a: 1\na: 2\n", PLAN_HEAD + "x: !!python/name:os.system\n"]
    with_c = [(loader.load_text(t).data, [(p.code, p.span.line) for p in loader.load_text(t).problems]) for t in samples]
    monkeypatch.setattr(builtins, "__import__", no_clib)
    without_c = [(loader.load_text(t).data, [(p.code, p.span.line) for p in loader.load_text(t).problems]) for t in samples]
    assert with_c == without_c
