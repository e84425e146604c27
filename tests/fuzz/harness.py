"""Fuzz harness: bytes and structure-aware mutations of valid plans through
load -> all rules -> every output format.

Why Hypothesis rather than atheris: it runs inside the ordinary pytest suite on
any CPython (atheris needs a libFuzzer-instrumented build and wheels that lag
new Pythons), it shrinks a crash to a small input, it can generate *structured*
mutations (replace a node of a real plan with a hostile value) as easily as raw
bytes, and with `derandomize=True` a short run is deterministic in CI.

Short deterministic run (part of the test suite):  pytest tests/test_fuzz.py
Longer run:  PLANLINT_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py -p no:cacheprovider
             (random seeds; a crash is printed shrunk: save it under
             tests/fuzz/crashers/ and it becomes a regression test)
"""

from __future__ import annotations

import json
import re
import tempfile
import unicodedata
from pathlib import Path

from planlint.core.config import Config, ConfigError
from planlint.core.model import UsageError
from planlint.engine.lint import lint_file
from planlint.engine.run import finish
from planlint.formats.reporters import REPORTERS

CORPUS = sorted((Path(__file__).resolve().parent / "corpus").glob("*.yaml"))
CRASHERS = sorted((Path(__file__).resolve().parent / "crashers").glob("*"))
OWN_ERRORS = (UsageError, ConfigError)

HOSTILE_STRINGS = [
    "", " ", "latest", "1.x", "^1.2", "=1.0", "a,b", "\n", "\r\n", "::error::forged", "%0A", "\x1b[31mred",
    "\x00", "\u202e", "\u2066", "\ufeff", "<img src=x onerror=alert(1)>", "[link](http://x)", "@octocat", "| pipe |",
    "sk-" + "a" * 24, "ghp_" + "b" * 36, "-----BEGIN PRIVATE KEY-----", "9" * 5000, "2026-02-30", "0x", ".inf", ".nan",
    "&anchor", "*alias", "!!python/object:os.system", "{", "[", "'", '"', "#", "- ", ": ", "? ", "|", ">",
]
YAML_BITS = [b"&a ", b"*a", b"!!str ", b"!!python/object:os.system ", b"[", b"]", b"{", b"}", b": ", b"- ", b"? ", b"#", b"%YAML 1.3\n",
             b"---\n", b"...\n", b"\t", b"\x00", b"\xff", b"\xc3", b"'", b'"', b"<<: *a\n", b"!", b"|\n", b">-\n", b"\\", b"\r"]


def run_pipeline(content: bytes, name: str = "plan.yaml") -> None:
    """Lint `content` as a named file and render every format. Raises only on a bug."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(content)
        config = Config(root=Path(tmp))
        results = []
        for explicit in (True, False):
            result = lint_file(name, path, explicit, config)
            if result is not None:
                results.append(result)
                break
        report = finish(results, config)
        for fmt, reporter in REPORTERS.items():
            out = reporter(report, color=False, quiet=False, statistics=True)
            assert isinstance(out, str)
            check_output(fmt, out, len(report.findings) + len(report.notes))
        for finding in report.findings:
            assert finding.line >= 1 and finding.column >= 1, finding
            assert "\n" not in finding.message and "\x1b" not in finding.message, finding
            assert "\u202e" not in finding.message, finding
            assert finding.yaml_path.isprintable(), finding


_GITHUB_LINE = re.compile(r"^::(error|warning|notice) [^:\r\n]*::[^\r\n]*$")


def _raw_chars_ok(text: str, allow: str = "\n") -> bool:
    return all(ch in allow or (ch.isprintable() and unicodedata.category(ch) not in ("Cf", "Zl", "Zp")) for ch in text)


def check_output(fmt: str, out: str, commands: int) -> None:
    """What each format promises whatever the plan says (see tests/test_output_forging.py)."""
    if fmt == "markdown":
        assert _raw_chars_ok(out, allow="\n\u200b"), fmt
        return
    assert _raw_chars_ok(out), fmt
    lines = out.splitlines()
    if fmt == "text":
        assert not any(line.lstrip().startswith(("::", "##[")) for line in lines), out
    elif fmt == "github":
        assert all(_GITHUB_LINE.match(line) for line in lines[:-1]) and len(lines) == commands + 1, out  # + the summary line
    elif fmt in ("json", "sarif"):
        json.loads(out)
    elif fmt == "junit":
        import xml.etree.ElementTree as ET

        ET.fromstring(out)


def to_yaml(value, indent: int = 0) -> str:
    """A small block-style emitter, so mutations reach the block parser too."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        lines = []
        for key, item in value.items():
            k = json.dumps(str(key))
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{k}:\n{to_yaml(item, indent + 2)}")
            else:
                lines.append(f"{pad}{k}: {to_yaml(item, 0)}")
        return "\n".join(lines)
    if isinstance(value, list):
        if not value:
            return "[]"
        lines = []
        for item in value:
            if isinstance(item, (dict, list)) and item:
                body = to_yaml(item, indent + 2).lstrip()
                lines.append(f"{pad}- {body}")
            else:
                lines.append(f"{pad}- {to_yaml(item, 0)}")
        return "\n".join(lines)
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if not isinstance(value, float) or value == value else ".nan"
