"""No plan value, key, yaml_path or file name can forge output in any format.

Hostile strings (a newline followed by a workflow command, `%0A`, ESC, NUL,
bidi overrides and isolates, HTML, images, links, @mentions, table pipes,
backticks, very long values) are put into plan values, mapping keys (and so
yaml_paths) and file names; the real CLI renders every format, and each
output is parsed as its consumer would parse it:

* text: no escape or control character, no line that a runner would read as
  a workflow command (`::` or `##[` at the start);
* github: every line is one well-formed `::error`/`::warning`/`::notice`
  command (or the summary line) whose properties and message decode to
  single-line, printable values;
* json, sarif: valid JSON; the raw bytes carry no control, bidi or other
  invisible character; every message is printable;
* junit: well-formed XML with no control character;
* markdown (job summary, PR comment): GitHub's renderer (cmarkgfm) in
  unsafe mode yields no `<img`, `<script`, foreign `<a`, extra table cells
  or live @mention.
"""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import REFERENCE_PLAN, run_process, write

BLOB = "https://github.com/acme/plans/blob/0123456789abcdef0123456789abcdef01234567/"
ENV = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/plans", "GITHUB_SHA": BLOB.rsplit("/", 2)[1]}

HOSTILE = [
    "x\n::error file=x,line=1::forged",
    "%0A::error::forged-percent",
    "\r\n::warning::forged-cr",
    "\x1b[31mred\x1b[0m\x1b]8;;http://e.example\x1b\\osc",
    "nul\x00byte\x07bell\x7fdel",
    "\u202eevil-rlo\u202c",
    "\u2066isolate\u2069\u200f\u061c",
    "line\u2028sep\u0085nel",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "![x](http://e.example/i.png)",
    "[link](http://e.example)",
    "@octocat",
    "| table | cell |",
    "`code` ``` ~~~",
    "##[error]forged-legacy",
    "L" * 5000,
]

# Characters no output may carry raw: C0/C1 controls (but \n), DEL, and every
# format, separator, private-use or unassigned character (bidi, zero-width).
def _bad_chars(text: str, allow: str = "\n") -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if c not in allow and (not c.isprintable() or unicodedata.category(c) in ("Cf", "Zl", "Zp", "Cc"))})


def _yaml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar (\u escapes included)


FILE_NAMES = [
    "a\n::error file=x::forged-name.yaml",
    "::warning::b.yaml",
    "c\x1b[31m\u202e<img src=x>@octocat|.yaml",
]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("forging")
    (root / ".git").mkdir()  # the repository root for repo-relative paths and links
    reference = REFERENCE_PLAN.read_text(encoding="utf-8")
    # Hostile keys: unknown top-level keys (PL003) and one nested under metadata (a yaml_path).
    keys = "".join(f"? {_yaml_str(h)}\n: 1\n" for h in HOSTILE)  # explicit keys: a 5,000-character one too
    nested = reference.replace("metadata:\n", "metadata:\n  " + _yaml_str(HOSTILE[0]) + ": 1\n", 1)
    write(root / "plans" / "keys.yaml", nested + keys)
    # Hostile values where messages quote them.
    for index, value in enumerate(HOSTILE):
        plan = reference.replace('release: "2026.11.03"', f"release: {_yaml_str(value)}")
        plan = plan.replace("type: grpo ", f"type: {_yaml_str(value)} ")
        plan = plan.replace("name: retail-refund-window", f"name: {_yaml_str(value)}")
        write(root / "plans" / f"value{index:02d}.yaml", plan)
    write(root / "plans" / "apiversion.yaml", f"apiVersion: {_yaml_str(HOSTILE[0] + HOSTILE[3])}\nkind: ExperimentPlan\n")
    for index, name in enumerate(FILE_NAMES):  # each with one finding (a floating release)
        plan = reference.replace("name: retail-refund-window", f"name: hostile-name-{index}").replace('release: "2026.11.03"', "release: latest")
        write(root / "plans" / name, plan)
    write(root / FILE_NAMES[1], reference.replace('release: "2026.11.03"', "release: latest").replace("name: retail-refund-window", "name: top"))
    return root


def lint(project: Path, *args: str):
    result = run_process(*args, "plans", FILE_NAMES[1], cwd=project, env=ENV, timeout=120)
    assert result.status == 1 and "Traceback" not in result.err, result
    return result


@pytest.fixture(scope="module")
def report(project) -> dict:
    return json.loads(lint(project, "--format", "json").out)


def test_the_hostile_content_reaches_the_messages(report):
    """The test is not vacuous: hostile values, keys and names are quoted by findings."""
    messages = "\n".join(f["message"] for f in report["findings"])
    paths = {f["path"] for f in report["findings"]}
    yaml_paths = "\n".join(f["yaml_path"] for f in report["findings"])
    assert {"plans/" + n for n in FILE_NAMES} <= paths and FILE_NAMES[1] in paths
    for shown in ("\\n::error file=x", "%0A::error", "\\x1b[31m", "\\x00byte", "\\u202eevil", "\\u2066isolate", "<img src=x", "@octocat", "| table |", "![x](http", "`code`"):
        assert shown in messages, shown
    assert '\\u202e' in messages and "LLLL" in messages
    assert 'metadata["x\\n::error file=x,line=1::forged"]' in yaml_paths
    assert any(len(f["message"]) < 400 for f in report["findings"] if "LLLL" in f["message"])  # long values are clipped


def test_text(project):
    result = lint(project, "--format", "text")
    out = result.out
    assert "planlint: note: data checks" in result.err  # notes name plans too
    for stream in (out, result.err):  # the runner reads workflow commands on both
        assert _bad_chars(stream) == [], _bad_chars(stream)
        for line in stream.splitlines():
            assert not line.lstrip().startswith(("::", "##[", "##vso[")), line
    assert "./::warning::b.yaml:" in out  # a path that would start a line with :: is shown as ./::...


GITHUB_LINE = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def _decode(text: str, prop: bool) -> str:
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for escaped, plain in pairs + [("%25", "%")]:
        text = text.replace(escaped, plain)
    return text


def test_github_workflow_commands(project, report):
    out = lint(project, "--format", "github").out
    assert _bad_chars(out) == [], _bad_chars(out)
    lines = out.splitlines()
    assert lines[-1].endswith("warnings.") and "checked" in lines[-1]
    notices = [line for line in lines[:-1] if line.startswith("::notice title=planlint::")]  # e.g. data checks skipped
    commands = [line for line in lines[:-1] if line not in notices]
    assert len(commands) == len(report["findings"])
    for line in notices:
        assert "\n" not in _decode(line, False) and _bad_chars(line) == [], line
    for line in commands:
        match = GITHUB_LINE.match(line)
        assert match, line
        properties = {}
        for item in match.group(2).split(","):
            key, _, value = item.partition("=")
            properties[key] = _decode(value, True)
        assert set(properties) == {"file", "line", "col", "endLine", "endColumn", "title"}, line
        message = _decode(match.group(3), False)
        for value in [*properties.values(), message]:
            assert "\n" not in value and "\r" not in value and _bad_chars(value) == [], line
        assert re.fullmatch(r"PL\d{3} [a-z0-9-]+", properties["title"])
    files = {_decode(GITHUB_LINE.match(line).group(2).split(",")[0][5:], True) for line in commands}
    assert "plans/a\\n::error file=x::forged-name.yaml" in files and "::warning::b.yaml" in files


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif(project, fmt):
    out = lint(project, "--format", fmt).out
    assert _bad_chars(out) == [], _bad_chars(out)  # escaped as \uXXXX, still the same JSON data
    data = json.loads(out)
    if fmt == "json":
        messages = [f["message"] for f in data["findings"]]
        assert "plans/a\n::error file=x::forged-name.yaml" in {f["path"] for f in data["findings"]}  # JSON keeps the exact path
    else:
        results = data["runs"][0]["results"]
        messages = [r["message"]["text"] for r in results]
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
        assert "plans/a%0A%3A%3Aerror%20file%3Dx%3A%3Aforged-name.yaml" in uris
        for uri in uris:
            assert _bad_chars(uri) == [] and " " not in uri
    for message in messages:
        assert "\n" not in message and _bad_chars(message) == [], message


def test_junit(project):
    out = lint(project, "--format", "junit").out
    assert _bad_chars(out) == [], _bad_chars(out)
    root = ET.fromstring(out)
    names = []
    for element in root.iter():
        for value in [*(element.attrib.values()), element.text or ""]:
            assert _bad_chars(value, allow="\n ") == [], value
        if element.tag in ("testsuite", "testcase"):
            names.append(element.get("name"))
    assert "plans/a\\n::error file=x::forged-name.yaml" in names


def _gfm(text: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


_ALLOWED_TAGS = {"h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "strong", "code", "a", "blockquote", "em"}


def _assert_safe_markdown(markdown: str, *, sticky: bool = False) -> None:
    assert _bad_chars(markdown, allow="\n\u200b") == [], _bad_chars(markdown, allow="\n\u200b")  # a zero-width space is planlint's own, against mentions and autolinks
    if sticky:
        marker = "<!-- planlint:sticky-comment -->"
        assert markdown.startswith(marker + "\n") and markdown.count("<!--") == 1
        markdown = markdown[len(marker) + 1:]
    html = _gfm(markdown)
    for forbidden in ("<img", "<script", "<iframe", "<details", "<br", "<del", "<!--"):
        assert forbidden not in html.lower(), forbidden
    tags = set(re.findall(r"</?([a-zA-Z][a-zA-Z0-9]*)", html))
    assert tags <= _ALLOWED_TAGS, tags - _ALLOWED_TAGS
    for href in re.findall(r'<a href="([^"]*)"', html):
        assert href.startswith(BLOB), href  # planlint's own links to lines only
    assert html.count("<a ") == len(re.findall(r'<a href="', html))
    text = re.sub(r"<[^>]+>", "", html)
    assert "@octocat" not in text and "@\u200boctocat" in text  # no live mention
    assert "http://e.example" not in html  # no autolink from plan content
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        header = re.search(r"<tr>(.*?)</tr>", table, re.S).group(1).count("<th")
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
            assert row.count("<td") == header, row  # no | from a plan added a cell


def test_markdown_summary(project, tmp_path):
    summary = tmp_path / "summary.md"
    lint(project, "--format", "text", "--summary", str(summary))
    _assert_safe_markdown(summary.read_text(encoding="utf-8"))
    out = lint(project, "--format", "markdown").out
    _assert_safe_markdown(out)
    assert "<a href" in _gfm(out)  # the line links are there, and only those


def test_pr_comment_body(project, tmp_path):
    report_file = tmp_path / "report.json"
    lint(project, "--format", "text", "--output", f"json={report_file}")
    result = run_process("comment", "--report", report_file, "--dry-run", cwd=project, env=ENV)
    assert result.status == 0, result
    _assert_safe_markdown(result.out, sticky=True)


def test_fix_messages_and_diff(project, tmp_path):
    """--fix reports on standard error, where the runner reads workflow commands too."""
    write(project / "catalog.yaml", 'datasets: {retail-refunds: {releases: ["2026.11.03"]}}\n')
    write(project / ".planlint.yaml", "catalog: catalog.yaml\n")
    # A fixable plan that repeats a key is left alone, with a note naming the file.
    duplicate = project / "plans" / "d\n::error file=x::forged-note.yaml"
    plan = REFERENCE_PLAN.read_text(encoding="utf-8").replace('release: "2026.11.03"', "release: latest")
    write(duplicate, plan.replace("name: retail-refund-window", "name: dup") + "kind: ExperimentPlan\n")
    try:
        result = run_process("--fix", "--diff", "plans", FILE_NAMES[1], cwd=project, env=ENV, timeout=120)
    finally:
        for path in (project / ".planlint.yaml", project / "catalog.yaml", duplicate):
            path.unlink()
    assert "d\\n::error file=x::forged-note.yaml: not fixed: it repeats a key" in result.err, result.err
    assert result.status == 1 and "Traceback" not in result.err, result
    assert "would fix" in result.err and "PL102" in result.err, result.err  # the hostile-named files get fixes
    for stream in (result.out, result.err):
        assert _bad_chars(stream, allow="\n\t") == [], _bad_chars(stream)
        for line in stream.splitlines():
            assert not line.lstrip().startswith(("::", "##[")), line
