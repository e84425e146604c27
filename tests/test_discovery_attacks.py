"""A plan cannot hide from discovery, and only real YAML comments suppress (issue 10, items 6 and 9).

Each test performs the attack for real: real files (a real git checkout where
`.gitattributes` matters), the real CLI in a child process. The attack is a bad
plan (`release: latest`, PL102) that must still be found.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import REFERENCE_PLAN, run_process, write

BAD_PLAN = REFERENCE_PLAN.read_text(encoding="utf-8").replace('release: "2026.11.03"', "release: latest")


def _codes(result) -> list[tuple[str, str]]:
    return [(f["path"], f["code"]) for f in result.json["findings"]]


def _lint(repo, *args):
    result = run_process("--format", "json", "--no-cache", *args, cwd=repo)
    assert "Traceback" not in result.err, result
    return result


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin:/usr/local/bin"})


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("encoding", ["UTF-16", "UTF-16LE-BOM", "UTF-32"])
def test_a_working_tree_encoding_checkout_is_read(tmp_path, encoding):
    """`.gitattributes` working-tree-encoding: GitHub shows a UTF-8 plan, the checkout is UTF-16/32."""
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "config", "user.email", "a@example.com")
    _git(origin, "config", "user.name", "a")
    write(origin / ".gitattributes", f"plans/*.yaml text working-tree-encoding={encoding}\n")
    _git(origin, "add", ".gitattributes")
    _git(origin, "commit", "-q", "-m", "attributes")
    # Committed as it will be checked out; git stores the UTF-8 blob.
    (origin / "plans").mkdir()
    codec = {"UTF-16": "utf-16", "UTF-16LE-BOM": "utf-16", "UTF-32": "utf-32"}[encoding]
    (origin / "plans" / "refund.yaml").write_bytes(BAD_PLAN.encode(codec))
    _git(origin, "add", "plans")
    _git(origin, "commit", "-q", "-m", "plan")
    blob = subprocess.run(["git", "-C", str(origin), "show", "HEAD:plans/refund.yaml"], capture_output=True, check=True).stdout
    assert blob.decode("utf-8") == BAD_PLAN  # what a reviewer sees on GitHub
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(origin), str(checkout)], check=True, capture_output=True)
    raw = (checkout / "plans" / "refund.yaml").read_bytes()
    assert b"\x00" in raw  # the checkout really is wide
    result = _lint(checkout, "plans")
    assert _codes(result) == [("plans/refund.yaml", "PL102")], result
    assert result.status == 1
    line = next(f["line"] for f in result.json["findings"])
    assert BAD_PLAN.splitlines()[line - 1].strip().startswith("release: latest")


def test_utf16_without_bom_is_pl006_not_skipped(tmp_path):
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "refund.yaml").write_bytes(BAD_PLAN.encode("utf-16-le"))
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [("plans/refund.yaml", "PL006")], result
    assert result.status == 1


def test_utf16_with_a_broken_body_is_pl006(tmp_path):
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "refund.yaml").write_bytes(b"\xff\xfe" + BAD_PLAN.encode("utf-16-le")[:-1])
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [("plans/refund.yaml", "PL006")], result


def test_markers_after_64_kib_of_comments_count(tmp_path):
    padding = "# padding padding padding padding padding padding padding padding\n" * 1100
    assert len(padding) > 64 * 1024
    write(tmp_path / "plans" / "refund.yaml", padding + BAD_PLAN)
    # ... and one that does not parse: reported too, not skipped for want of a marker in its head
    write(tmp_path / "plans" / "broken.yaml", padding + BAD_PLAN + "extra: !Custom x\n")
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [("plans/broken.yaml", "PL001"), ("plans/refund.yaml", "PL102")], result


@pytest.mark.parametrize("kind", ['"Experiment\\x50lan"', '"\\u0045xperimentPlan"', "!!str ExperimentPlan"])
def test_an_escaped_marker_is_decided_from_the_decoded_yaml(tmp_path, kind):
    write(tmp_path / "plans" / "refund.yaml", BAD_PLAN.replace("kind: ExperimentPlan", f"kind: {kind}"))
    write(tmp_path / "plans" / "tagged.yaml", BAD_PLAN.replace("kind: ExperimentPlan", f"kind: {kind}") + "extra: !Custom x\n")
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [("plans/refund.yaml", "PL102"), ("plans/tagged.yaml", "PL001")], result


@pytest.mark.parametrize("hideout", ["node_modules", "venv", ".venv", "__pycache__", ".planlint_cache", ".tox", "a/node_modules/b"])
def test_no_directory_below_a_named_path_is_skipped(tmp_path, hideout):
    write(tmp_path / "plans" / hideout / "refund.yaml", BAD_PLAN)
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [(f"plans/{hideout}/refund.yaml", "PL102")], result
    assert result.status == 1
    # The configuration (never the command line's silence) is how to leave one out.
    write(tmp_path / ".planlint.yaml", f"exclude: [plans/{hideout}]\n")
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [] and result.status == 0, result


@pytest.mark.parametrize("content", [b"just: [\n", b"\xff\xfe\x00", b"caf\xe9: 1\n", b"a: !!python/name:os.system\n"])
def test_a_yaml_file_that_cannot_be_read_or_parsed_is_reported(tmp_path, content):
    write(tmp_path / "plans" / "good.yaml", REFERENCE_PLAN.read_text(encoding="utf-8"))
    (tmp_path / "plans" / "notes.yaml").write_bytes(content)
    result = _lint(tmp_path, "plans")
    assert [c for _, c in _codes(result)] in (["PL001"], ["PL006"]), result
    assert result.status == 1
    write(tmp_path / ".planlint.yaml", "exclude: [plans/notes.yaml]\n")
    assert _codes(_lint(tmp_path, "plans")) == []


def test_a_dangling_symlink_in_a_linted_directory_is_reported(tmp_path):
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "refund.yaml").symlink_to(tmp_path / "gone.yaml")
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [("plans/refund.yaml", "PL006")], result


# --------------------------------------------------------------------------- 10.9: only comments suppress


@pytest.mark.parametrize(
    "attack",
    [
        ('release: latest', 'release: "latest # planlint: disable=PL102 -- x"'),
        ('release: latest', "release: 'latest # planlint: disable=PL102 -- x'"),
        ('release: latest', 'release: latest\n  x-note: "# planlint: disable-file=PL102 -- x"'),
        ('release: latest', 'release: latest\n  x-note: |\n    # planlint: disable-file=PL102 -- x\n    more text'),
        ('release: latest', 'release: latest\n  x-note: >-\n    text\n    # planlint: disable-file=PL102 -- x'),
        ('release: latest', 'release: latest\n  "# planlint: disable-file=PL102 -- x": key'),
        ('release: latest', 'release: >\n    latest\n    # planlint: disable=PL102 -- x'),
    ],
    ids=["double-quoted", "single-quoted", "quoted-other-key", "literal-block", "folded-block", "quoted-key", "folded-value"],
)
def test_a_suppression_inside_a_string_suppresses_nothing(tmp_path, attack):
    old, new = attack
    text = BAD_PLAN.replace(old, new)
    assert text != BAD_PLAN
    write(tmp_path / "plans" / "refund.yaml", text)
    result = _lint(tmp_path, "plans/refund.yaml", "--ignore", "PL003")
    codes = [c for _, c in _codes(result)]
    assert "PL102" in codes, result
    assert result.status == 1


def test_a_real_comment_after_a_quoted_hash_still_suppresses(tmp_path):
    text = BAD_PLAN.replace('release: latest', 'release: "latest"  # planlint: disable=PL102 -- pinned at submit time')
    text = text.replace("source: tau-bench", "source: \"#1 # planlint: disable=PL999\" # tau-bench")
    write(tmp_path / "plans" / "refund.yaml", text)
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [], result


def test_fix_writes_a_utf16_plan_back_as_utf16(tmp_path):
    fixable = REFERENCE_PLAN.read_text(encoding="utf-8").replace("currency: USD", "currency: usd")
    path = tmp_path / "refund.yaml"
    path.write_bytes(fixable.encode("utf-16"))
    result = run_process("--fix", "--no-cache", "refund.yaml", cwd=tmp_path)
    assert result.status == 0, result
    raw = path.read_bytes()
    assert raw[:2] in (b"\xff\xfe", b"\xfe\xff")
    assert raw.decode("utf-16") == REFERENCE_PLAN.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- issue 12.1: PL007 almost-a-plan


@pytest.mark.parametrize(
    "old, new, line, column",
    [
        ("kind: ExperimentPlan", "kind: ExperimentPlans", 3, 7),
        ("kind: ExperimentPlan", "kind: experimentplan", 3, 7),
        ("kind: ExperimentPlan", "kind: ExperimentPaln", 3, 7),
        ("apiVersion: planlint/v1", "apiVersion: planlint/v2", 2, 13),
        ("apiVersion: planlint/v1", "apiVersion: v1", 2, 13),  # only kind right
        ("kind: ExperimentPlan\n", "kind: Deployment\n", 3, 7),  # only apiVersion right
        ("kind: ExperimentPlan\n", "", 1, 1),  # only apiVersion, kind missing: 1:1
    ],
)
def test_a_typo_in_the_markers_does_not_make_a_plan_vanish(tmp_path, old, new, line, column):
    text = BAD_PLAN.replace(old, new, 1)
    assert text != BAD_PLAN
    write(tmp_path / "plans" / "refund.yaml", text)
    result = _lint(tmp_path, "plans")
    findings = result.json["findings"]
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in findings] == [("PL007", line, column, "error")], result
    assert "expected" in findings[0]["message"] and result.status == 1
    # Named on the command line it stays PL004.
    assert [c for _, c in _codes(_lint(tmp_path, "plans/refund.yaml"))] == ["PL004"]


@pytest.mark.parametrize("text", ["apiVersion: v1\nkind: Deployment\n", "kind: Experiment\n", "- a\n- b\n", "", "apiVersion: 3\nkind: [1]\n"])
def test_other_yaml_is_still_skipped(tmp_path, text):
    write(tmp_path / "plans" / "other.yaml", text)
    result = _lint(tmp_path, "plans")
    assert _codes(result) == [] and result.status == 0, result
