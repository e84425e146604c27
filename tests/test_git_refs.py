"""Refs from a pull request never reach a git command line, a shell, or git's options.

Every git process diff mode starts is recorded (GitPython's `Git.execute`
is wrapped; the real command still runs) while hostile refs are given to
`--diff-base`: option-shaped, shell-shaped, ranges, line breaks. Each must
end in exit 2 with a clear message, write no file, and leave no trace of
the ref in any argv. Refs that are well-formed names reach git only as the
full commit SHA they resolve to.
"""

from __future__ import annotations

import re

import pytest

from conftest import write
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration

SHA = re.compile(r"^[0-9a-f]{40}$")


@pytest.fixture
def argvs(monkeypatch):
    """Every argv GitPython runs during the test."""
    import git as gitpython

    seen: list[list[str]] = []
    real = gitpython.cmd.Git.execute

    def recording(self, command, *args, **kwargs):
        seen.append([str(part) for part in (command if isinstance(command, (list, tuple)) else [command])])
        return real(self, command, *args, **kwargs)

    monkeypatch.setattr(gitpython.cmd.Git, "execute", recording)
    return seen


@pytest.fixture
def repo(tmp_path):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo / "plans" / "a.yaml", plan("a", status="running"))
    commit(repo, "change")
    return repo


HOSTILE = [
    "--output={t}/x",
    "--output {t}/x",
    "-c core.pager=touch {t}/y",
    "-ccore.pager=touch${{IFS}}{t}/y",
    "HEAD;touch {t}/z",
    "HEAD;touch${{IFS}}{t}/z",
    "$(touch {t}/w)",
    "$(touch${{IFS}}{t}/w)",
    "`touch${{IFS}}{t}/v`",
    "main|touch${{IFS}}{t}/u",
    "main&&touch${{IFS}}{t}/s",
    "..",
    "main..feature",
    "main...feature",
    "main\n--output={t}/x",
    "main\r",
    "main\x00--output={t}/x",
    "HEAD@{{-1}}--output={t}/x",
    ":/--output={t}/x",
    "@{{upstream}}",
    "refs/heads/../../../../{t}/x",
    "-",
    "",
]


@pytest.mark.parametrize("template", HOSTILE)
def test_a_hostile_ref_runs_nothing_and_writes_nothing(template, repo, tmp_path, argvs, planlint):
    ref = template.format(t=tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    result = planlint(f"--diff-base={ref}", cwd=repo)  # the = form: the ref reaches planlint whatever its shape
    assert result.status == 2, result
    assert result.out == "" and "Traceback" not in result.err
    message = result.err.strip()
    assert message.startswith("planlint: error: ") and "\n" not in message, message
    assert any(words in message for words in ("is not a revision", "unknown revision", "needs a revision", "not a commit", "no common")), message
    if re.search(r"[$`;|&()]", ref):  # never a shell command to paste, such as "git fetch origin $(...)"
        assert "git fetch" not in message and "is not a revision" in message, message
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written, no x/y/z/w/v/u/s
    _assert_ref_not_on_any_command_line(ref, argvs)


def _assert_ref_not_on_any_command_line(ref: str, argvs: list[list[str]]) -> None:
    for argv in argvs:
        for part in argv:
            if ref and ref not in ("-",):
                assert ref not in part, (ref, argv)
            assert not part.startswith("--output"), argv
            assert "touch" not in part and "core.pager" not in part, argv


@pytest.mark.parametrize("ref", ["main", "refs/heads/main", "main~0", "feature^", "HEAD~1", "v1", "origin/main", "no-such-branch"])
def test_a_well_formed_ref_reaches_git_only_as_a_sha(ref, repo, argvs, planlint):
    git(repo, "tag", "v1", "main")
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    result = planlint("--diff-base", ref, "--format", "json", cwd=repo)
    if ref == "no-such-branch":
        assert result.status == 2 and "unknown revision 'no-such-branch'" in result.err
    else:
        assert result.status in (0, 1), result
    assert argvs, "diff mode runs git"
    for argv in argvs:
        assert argv[0] == "git", argv
        for part in argv[1:]:
            assert ref not in part, (ref, argv)
            assert part.startswith("-") or SHA.match(part) or part in _CONSTANT_ARGS, (ref, argv)


# What diff mode passes to git besides options and full SHAs: subcommand names only.
_CONSTANT_ARGS = {"rev-parse", "ls-files", "diff", "merge-base", "cat-file", "version"}
