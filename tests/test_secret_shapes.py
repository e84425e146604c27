"""PL801: documented token shapes as whole tokens, comments scanned, the value never echoed (issue 12, item 9)."""

from __future__ import annotations

import pytest

from conftest import REFERENCE_PLAN, run_process, write
from planlint.rules.secrets import credential_kind

PLAN = REFERENCE_PLAN.read_text(encoding="utf-8")
GITHUB = "ghp_" + "Q7rT2x" * 6  # fake, GitHub's documented shape: ghp_ and 36 base62 characters


@pytest.mark.parametrize("text", [
    "grpo-sk-market-refund-window", "sk-proj-abc123…", "a quoted sk-proj-abc123 key", "ghp_short", "task-sk-" + "a1B2" * 12,
    GITHUB + "x", "x" + GITHUB, "hf_model_alias", "AKIAIOSFODNN7EXAMPL", "AIzaShort",
])
def test_not_a_credential(text):
    assert credential_kind(text) is None


@pytest.mark.parametrize("text", [
    GITHUB, f"token={GITHUB};", "sk-" + "a1B2c3D4" * 6, "sk-proj-" + "a1B2c3D4" * 6, "AKIAIOSFODNN7EXAMPLE",
    "hf_" + "aBcDeFgHiJ" * 3 + "kLmN", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "github_pat_" + "A" * 22 + "_" + "b" * 59, "sk-ant-api03-" + "x" * 93 + "AA",
])
def test_a_credential(text):
    assert credential_kind(text) is not None, text


def test_a_token_in_a_comment_is_found_and_never_echoed(tmp_path):
    text = PLAN.replace('  owner: "@support-ml"', f'  owner: "@support-ml"   # deploy with {GITHUB}')
    text = text.replace("name: retail-refund-window", "name: grpo-sk-market-refund-window")
    write(tmp_path / "plans" / "p.yaml", text)
    line = next(n for n, l in enumerate(text.split("\n"), 1) if GITHUB in l)
    result = run_process("--format", "json", "--no-cache", "plans", cwd=tmp_path)
    assert [(f["code"], f["line"]) for f in result.json["findings"]] == [("PL801", line)], result
    for fmt in ("text", "json", "sarif", "github", "junit", "markdown"):
        out = run_process("--format", fmt, "--no-cache", "plans", cwd=tmp_path)
        assert out.status == 1 and GITHUB not in out.out and GITHUB not in out.err, fmt
        assert GITHUB[4:20] not in out.out


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_comment_tokens_are_found_wherever_the_comment_is(newline):
    """comment_secrets searches only from each line's first `#` on: a token after a `#` inside a
    quoted value, on the last line without a line break, or with \\r line breaks is still found."""
    from planlint.core.loader import load_text
    from planlint.rules.secrets import comment_secrets

    lines = ["a: 1", 'b: "x # y"  # ' + GITHUB, "c: 2  # fine", "d: 3 # " + GITHUB]
    for ending in ("", newline):
        text = newline.join(lines) + ending
        loaded = load_text(text)
        assert [(line, kind) for line, _, _, kind in comment_secrets(text, loaded.quoted)] == [(2, "a GitHub token"), (4, "a GitHub token")]
    text = newline.join(["a: 1", f'b: "# {GITHUB}"', "c: 2  # fine"])  # in a value, not a comment (PL801's value check)
    assert list(comment_secrets(text, load_text(text).quoted)) == []
