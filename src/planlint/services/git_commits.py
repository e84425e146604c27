"""Which commit of the local git repository a pinned `commit_sha` names.

The platform fetches the pinned commit from the connected repository; what a
repository check can see is the local clone. `resolve_commit` asks git's
object database (`git cat-file --batch-check`, the SDK's own local signal is
`git cat-file -e SHA^{commit}`) and says one of: the hash names exactly one
commit (FOUND, with its full hash), none (ABSENT), several objects
(AMBIGUOUS), an object that is no commit (NOT_A_COMMIT), or that it cannot
be told (UNKNOWN, and why: no git repository, no git, a shallow clone whose
history may hold it, git failing). Nothing else is inferred: a commit that
exists locally may still be unpushed, which only the platform can see.

Only the hexadecimal text reaches git, on its standard input; the command
line is constant. Lazy fetches of a partial clone are off (no network), and
git never prompts. A found commit stays found for the life of the process
(objects are not removed under a running lint), so that answer is kept;
the others are asked again, since a fetch can change them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

FOUND = "found"
ABSENT = "absent"
AMBIGUOUS = "ambiguous"
NOT_A_COMMIT = "not-a-commit"
UNKNOWN = "unknown"

_HEX = re.compile(r"[0-9a-fA-F]{4,40}")
_TIMEOUT = 20
_found: dict[tuple[str, str], "CommitLookup"] = {}


@dataclass(frozen=True)
class CommitLookup:
    """What the local repository says of a commit hash: `state` (FOUND, ABSENT, AMBIGUOUS,
    NOT_A_COMMIT, UNKNOWN); `full`: the commit's 40-character hash when FOUND, or the
    type of the object (NOT_A_COMMIT); `why`: for UNKNOWN, why it cannot be told."""

    state: str
    full: str | None = None
    why: str | None = None


def _environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_NO_LAZY_FETCH="1", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return env


def _git(repository: Path, args: list[str], stdin: str = "") -> subprocess.CompletedProcess | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        return subprocess.run(
            [git, "-C", str(repository), "-c", "core.fsmonitor=false", *args],
            input=stdin, capture_output=True, text=True, timeout=_TIMEOUT, env=_environment(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def resolve_commit(repository: Path, sha: str) -> CommitLookup:
    """The commit `sha` (hexadecimal, abbreviated or full) names in the git repository whose
    top level is `repository`."""
    if not _HEX.fullmatch(sha):
        return CommitLookup(UNKNOWN, why="it is not a hexadecimal commit hash")
    if not (repository / ".git").exists():
        return CommitLookup(UNKNOWN, why="the repository root has no .git (not a git checkout)")
    key = (os.path.realpath(repository), sha.lower())
    if key in _found:
        return _found[key]
    if shutil.which("git") is None:
        return CommitLookup(UNKNOWN, why="git is not installed")
    proc = _git(repository, ["cat-file", "--batch-check"], sha.lower() + "\n")
    if proc is None or proc.returncode != 0:
        return CommitLookup(UNKNOWN, why="git could not read the repository" + (f" ({_first_line(proc.stderr)})" if proc is not None and proc.stderr.strip() else ""))
    answer = proc.stdout.strip().split()
    if len(answer) == 3 and answer[1] == "commit":
        found = CommitLookup(FOUND, full=answer[0])
        _found[key] = found
        return found
    if len(answer) == 3:
        return CommitLookup(NOT_A_COMMIT, full=answer[1])
    if answer[-1:] == ["ambiguous"]:
        return CommitLookup(AMBIGUOUS)
    if answer[-1:] == ["missing"]:
        if shallow(repository):
            return CommitLookup(UNKNOWN, why="the clone is shallow, and the history it did not fetch may hold it (fetch with depth 0 to check)")
        return CommitLookup(ABSENT)
    return CommitLookup(UNKNOWN, why="git gave an answer planlint does not know")


def shallow(repository: Path) -> bool:
    """Is the clone at `repository` shallow (some history not fetched)? True when git cannot say."""
    proc = _git(repository, ["rev-parse", "--is-shallow-repository"])
    return proc is None or proc.returncode != 0 or proc.stdout.strip() != "false"


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]
