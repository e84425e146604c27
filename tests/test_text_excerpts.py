"""The text format's excerpts on lines that hold a credential: masked, with the caret under the masked value."""

from __future__ import annotations

from conftest import write
from plan_overlay import REFERENCE

KEY = "sk-proj-" + "A1b2C3d4E5f6" * 4 + "T3BlbkFJ" + "x9Y8z7W6v5U4" * 2


def excerpt(result, code: str) -> list[str]:
    lines = result.out.splitlines()
    at = next(i for i, line in enumerate(lines) if f": {code} " in line)
    return [line.split(" | ", 1)[1] for line in lines[at + 1:at + 3]]  # the source line and the caret line, after the gutter


def test_a_credential_in_a_comment_is_masked_and_pointed_at(tmp_path, planlint):
    write(tmp_path / "p.yaml", REFERENCE.replace('  owner: "@support-ml"', f'  owner: "@support-ml"   # token {KEY}', 1))
    result = planlint("--no-cache", "--no-color", "p.yaml", cwd=tmp_path)
    assert KEY not in result.out and KEY[8:20] not in result.out
    source, caret = excerpt(result, "PL801")
    assert source.endswith("# token sk-********")
    assert caret.strip() == "^" * len("sk-********") and caret.index("^") == source.index("sk-********")


def test_a_credential_value_is_masked_and_pointed_at(tmp_path, planlint):
    write(tmp_path / "p.yaml", REFERENCE.replace("  owner: \"@support-ml\"", f"  owner: {KEY}", 1))
    result = planlint("--no-cache", "--no-color", "p.yaml", cwd=tmp_path)
    source, caret = excerpt(result, "PL801")
    assert source.endswith("owner: sk-********") and caret.index("^") == source.index("sk-********")
    assert caret.strip() == "^" * len("sk-********")


def test_another_finding_on_a_line_with_a_credential_keeps_its_caret(tmp_path, planlint):
    text = REFERENCE.replace('  release: "2026.11.03"               # an exact published release', f"  release: latest   # {KEY}", 1)
    assert text != REFERENCE
    write(tmp_path / "p.yaml", text)
    result = planlint("--no-cache", "--no-color", "p.yaml", cwd=tmp_path)
    assert KEY not in result.out
    source, caret = excerpt(result, "PL102")
    assert source.endswith("release: latest   # sk-********")
    assert caret.strip() == "^^^^^^" and caret.index("^") == source.index("latest")
