"""Diff mode's git plumbing: the repository, the base revision, what changed, files at the base.

Everything diff mode asks of git goes through here, and the PATH arguments
as repository paths (`Scope`: which changed files they cover). A revision is checked for
shape (`check_rev`), then resolved to a commit through GitPython's object API;
only full commit SHAs and constant options ever reach a git command line, and
no shell is involved. Files at the base revision are read from git objects
(no checkout, no temporary clone); a symbolic link there is never followed.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from planlint.core.config import Config
from planlint.core.loader import decode
from planlint.core.messages import sanitize, show
from planlint.core.model import UsageError
from planlint.core.reviews import full_sha
from planlint.engine.discovery import _SKIP_DIRS, YAML_SUFFIXES

FETCH_HINT = (
    "this is a shallow clone (.git/shallow), so the history needed is missing: fetch the whole history "
    "(actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow`)"
)

# What a revision may look like: branch, tag, remote branch, SHA, with ~N, ^N,
# ^{commit} or @{N} suffixes. Refused before git sees it: a leading '-' (an
# option), '..' (a range, or a path out of .git), ':' (a path in a tree or a
# commit-message search), whitespace, control characters, glob characters,
# and shell metacharacters (legal in git names, but a message that suggests
# `git fetch origin REV` must never hand anyone a command to paste).
_REV_FORBIDDEN = re.compile(r"[\x00-\x20\x7f:\\?*\[$`;|&<>'\"()!]|\.\.|//|^[/.]|/$")


@dataclass(frozen=True)
class Change:
    kind: str  # added | modified | renamed | deleted
    base_rel: str | None  # repo-relative posix path at the base
    head_rel: str | None  # repo-relative posix path in the working tree


def check_rev(rev: str) -> None:
    """Refuse anything that is not shaped like a revision, before git sees it."""
    if not rev:
        raise UsageError("--diff-base needs a revision: a branch, tag or commit, e.g. --diff-base origin/main")
    if rev.startswith("-"):
        raise UsageError(f"--diff-base {show(rev)} is not a revision (it starts with '-'): give a branch, tag or commit, e.g. --diff-base origin/main")
    if len(rev) > 256 or _REV_FORBIDDEN.search(rev):
        raise UsageError(f"--diff-base {show(rev)} is not a revision planlint accepts: give a branch, tag or commit (e.g. origin/main, v1.2, a1b2c3d, HEAD~3)")


def import_git():
    try:
        import git  # GitPython: only diff mode pays for it
    except ImportError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise UsageError(
            "--diff-base needs GitPython (a planlint dependency: pip install 'GitPython>=3.1.62') and the git command on PATH"
            + (f" ({detail[:200]})" if detail else "")
        ) from None
    return git


def open_repo(git, cwd: str):
    try:
        repo = git.Repo(cwd, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UsageError(
            f"--diff-base needs a git repository, and {show(cwd)} is not inside one: run planlint from the "
            f"repository's working tree (in CI, check the repository out first, e.g. actions/checkout with fetch-depth: 0)"
        ) from None
    if repo.bare or not repo.working_tree_dir:
        repo.close()
        raise UsageError(f"--diff-base needs a working tree, and {show(repo.git_dir)} is a bare repository: run planlint in a checkout")
    try:  # git itself may refuse the repository (e.g. "dubious ownership"): say so, with git's own fix
        repo.git.rev_parse("--is-inside-work-tree")
    except git.GitCommandError as exc:
        repo.close()
        raise UsageError(f"git cannot use the repository at {show(repo.working_tree_dir)}: {git_stderr(exc, full=True)}") from None
    return repo


def is_shallow(repo) -> bool:
    dirs = {repo.git_dir, getattr(repo, "common_dir", repo.git_dir)}
    return any(os.path.exists(os.path.join(d, "shallow")) for d in dirs)


def git_stderr(exc, full: bool = False) -> str:
    """git's complaint, cleaned of GitPython's wrapping; `full` keeps git's hint lines too."""
    text = str(getattr(exc, "stderr", "") or exc).strip()
    text = re.sub(r"^stderr:\s*", "", text).strip().strip("'").strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()] or [str(exc)]
    return sanitize(" ".join(lines) if full else lines[0])[:600]


def resolve_commit(repo, git, rev: str):
    """The commit `rev` names, or None when it names nothing here."""
    from gitdb.exc import ODBError

    try:
        obj = repo.rev_parse(rev)
        for _ in range(16):  # annotated tags, possibly nested
            if obj.type != "tag":
                break
            obj = obj.object
    except (ODBError, ValueError, LookupError, OSError, AttributeError, git.GitError):
        return None
    if obj.type != "commit":
        raise UsageError(f"--diff-base {show(rev)} names a {obj.type}, not a commit: give a branch, tag or commit")
    return obj


def base_commit(repo, git, rev: str):
    """The merge-base of `rev` and HEAD, as a commit object, or a UsageError saying how to fix it."""
    shallow = is_shallow(repo)
    target = resolve_commit(repo, git, rev)
    if target is None:
        if shallow:
            raise UsageError(f"unknown revision {show(rev)}: {FETCH_HINT}, then use e.g. --diff-base origin/main")
        name = re.split(r"[~^@]", rev, maxsplit=1)[0]
        if name != rev:  # HEAD~5, main^2, main@{1}: a position relative to a name, never something to fetch
            if name and resolve_commit(repo, git, name) is not None:
                raise UsageError(
                    f"unknown revision {show(rev)}: {show(name)} exists but the history here does not reach that far back "
                    f"(a short or shallow history): fetch more history (actions/checkout with `fetch-depth: 0`) or name a branch, tag or commit"
                )
            raise UsageError(f"unknown revision {show(rev)}: {show(name or rev)} is no branch, tag or commit here; name one that exists (git branch -a lists them)")
        hint = ""
        if "/" not in rev and resolve_commit(repo, git, f"origin/{rev}") is not None:
            hint = f"; did you mean origin/{rev}? (CI checkouts often have no local {rev} branch)"
        raise UsageError(
            f"unknown revision {show(rev)}: no branch, tag or commit of that name here{hint}. "
            f"Fetch it first (e.g. git fetch origin {rev}) or name one that exists (git branch -a lists them)"
        )
    try:
        head = repo.head.commit
    except ValueError:
        raise UsageError("HEAD has no commit yet: commit something before using --diff-base") from None
    bases = repo.merge_base(target, head)
    if not bases:
        if shallow:
            raise UsageError(f"{show(rev)} and HEAD have no common ancestor in this clone: {FETCH_HINT}")
        raise UsageError(f"{show(rev)} and HEAD have no common history, so there is no base to compare with: pick the branch this one was made from")
    return bases[0]


def list_changes(repo, base) -> list[Change]:
    """Every file that differs between `base` and the working tree (git pairs renames by content)."""
    found: list[Change] = []
    for d in base.diff(None):  # base tree against the working tree; -M pairs renames
        if d.new_file:
            found.append(Change("added", None, d.b_path))
        elif d.deleted_file:
            found.append(Change("deleted", d.a_path, None))
        elif d.renamed_file:
            found.append(Change("renamed", d.a_path, d.b_path))
        else:
            found.append(Change("modified", d.a_path, d.b_path))
    untracked = [p for p in repo.git.ls_files("-z", "--others", "--exclude-standard", "--full-name").split("\0") if p]
    found.extend(Change("added", None, p) for p in untracked)
    return found


class Scope:
    """The PATH arguments: which repo files they cover, and how to display them."""

    def __init__(self, paths: list[str], config: Config, cwd: str, root: str, base_tree) -> None:
        self.config, self.cwd, self.root = config, cwd, root
        self.args: list[tuple[str, str, bool]] = []  # (arg, real absolute path, is a directory)
        self.existing: list[str] = []
        for arg in paths:
            absolute = os.path.realpath(os.path.join(cwd, arg))
            rel = os.path.relpath(absolute, root)
            if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
                raise UsageError(f"{arg}: outside the git repository at {show(root)}; diff mode lints plans of that repository only")
            if os.path.isdir(absolute):
                self.args.append((arg, absolute, True))
                self.existing.append(arg)
            elif os.path.lexists(absolute):
                self.args.append((arg, absolute, False))
                self.existing.append(arg)
            else:  # gone from the working tree: still a PATH if it was there at the base
                rel_posix = "" if rel == "." else Path(rel).as_posix()
                try:
                    obj = base_tree / rel_posix
                except KeyError:
                    raise UsageError(f"{arg}: no such file or directory (neither in the working tree nor at the base revision)") from None
                self.args.append((arg, absolute, obj.type == "tree"))

    def absolute(self, rel: str) -> str:
        return os.path.join(self.root, *rel.split("/"))

    def match(self, rel: str) -> tuple[str, bool] | None:
        """(display path, named explicitly) when the repo file `rel` is under a PATH."""
        absolute = self.absolute(rel)
        for arg, arg_abs, is_dir in self.args:
            if not is_dir:
                if absolute == arg_abs and not self.config.excluded(Path(absolute)):
                    return arg, True
                continue
            inner = os.path.relpath(absolute, arg_abs)
            if inner == ".." or inner.startswith(".." + os.sep):
                continue
            parts = inner.split(os.sep)
            if not absolute.lower().endswith(YAML_SUFFIXES) or any(p in _SKIP_DIRS for p in parts[:-1]):
                continue
            if self.config.excluded(Path(absolute)):
                continue
            return os.path.normpath(os.path.join(arg, inner)).replace(os.sep, "/"), False
        return None

    def display(self, rel: str) -> str:
        """How to show a repo file that no PATH covers (a plan renamed out of PATHs)."""
        return os.path.relpath(self.absolute(rel), self.cwd).replace(os.sep, "/")


def base_text(base_tree, rel: str, max_size: int) -> str | None:
    """The text of the regular file `rel` at the base revision, or None (absent, a link, too big, not text)."""
    try:
        blob = base_tree / rel
    except KeyError:
        return None
    if blob.type != "blob" or blob.mode == 0o120000 or blob.size > max_size:
        return None
    text, problem = decode(blob.data_stream.read())
    return None if problem is not None else text


def commit_of(repo, sha: str):
    """The commit whose full SHA is `sha`, or None when this clone does not have it.

    Only a full hexadecimal SHA is looked up (GitPython reads it from the
    object database); anything else is None.
    """
    from gitdb.exc import ODBError

    sha = full_sha(sha) or ""
    if not sha:
        return None
    try:
        obj = repo.rev_parse(sha)
    except (ODBError, ValueError, LookupError, OSError, AttributeError):
        return None
    except Exception:  # noqa: BLE001 - GitPython's own errors: the commit is not here to read
        return None
    return obj if getattr(obj, "type", None) == "commit" else None


_LINK = 0o120000
_MAX_LINKS = 16


def tree_blob(tree, value: str):
    """The regular file that repository path `value` names in `tree`, symbolic links followed
    inside the tree (at most 16), or None: absent, a directory, or a link out of the repository."""
    pending = [part for part in value.replace("\\", "/").split("/") if part not in ("", ".")]
    if value.startswith(("/", "\\")):
        return None
    done: list[str] = []
    hops = 0
    pending.reverse()
    while pending:
        name = pending.pop()
        if name == "..":
            if not done:
                return None  # out of the repository
            done.pop()
            continue
        try:
            obj = tree / "/".join(done + [name])
        except (KeyError, TypeError, ValueError, AttributeError):  # absent, or a step through a file
            return None
        if obj.type == "blob" and obj.mode == _LINK:
            hops += 1
            target, problem = decode(obj.data_stream.read())
            if hops > _MAX_LINKS or problem is not None or target is None or target.startswith("/"):
                return None
            pending.extend(reversed([part for part in target.split("/") if part not in ("", ".")]))
            continue  # the target is relative to the link's directory: `done`
        done.append(name)
    if not done:
        return None
    obj = tree / "/".join(done)
    return obj if obj.type == "blob" and obj.mode != _LINK else None


def tree_text(tree, value: str, max_size: int) -> str | None:
    """The text of the file repository path `value` names in `tree`, links followed inside the
    tree, or None (absent, a link out of the repository, too large, not UTF-8)."""
    blob = tree_blob(tree, value)
    if blob is None or blob.size > max_size:
        return None
    text, problem = decode(blob.data_stream.read())
    return None if problem is not None else text


_HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")


class History:
    """What PL902's diff-mode half asks of the repository: is a pinned commit in the reviewed history
    (an ancestor of HEAD), and is the rollout's directory there the one the head shows?

    Only hexadecimal text is looked up (in the object database); ancestry is asked
    with full SHAs (`git merge-base --is-ancestor SHA SHA`). In a shallow clone an
    absent commit, or one whose ancestry the truncated history cannot show, is an
    answer saying to fetch the history, never a pass.
    """

    def __init__(self, repo, git) -> None:
        self.repo, self.git = repo, git
        self.shallow = is_shallow(repo)
        self.head = repo.head.commit
        self._dirty: set[str] | None = None

    def _commit(self, sha: str):
        """(the commit `sha` names, None) or (None, why not)."""
        from gitdb.exc import AmbiguousObjectName

        if not _HEX.match(sha):
            return None, "is not a commit SHA"
        try:
            obj = self.repo.rev_parse(sha.lower())
        except AmbiguousObjectName:
            return None, "names more than one object of this repository: give all 40 characters"
        except Exception:  # noqa: BLE001 - GitPython's and gitdb's errors alike: the commit is not here
            obj = None
        if obj is None or getattr(obj, "type", None) != "commit":
            if self.shallow:
                return None, f"is not in this clone, and {FETCH_HINT}: planlint cannot tell whether it is the reviewed commit"
            what = f"a {obj.type}, not a commit" if obj is not None else "not a commit of this repository"
            return None, f"is {what}: the platform would fetch a commit nobody reviewed here; pin a commit of the pull request's history"
        return obj, None

    def reviewed(self, sha: str) -> str | None:
        """None when `sha` names a commit that is HEAD or one of its ancestors, else why not, in words."""
        commit, why = self._commit(sha)
        if commit is None:
            return why
        try:
            ancestor = commit.hexsha == self.head.hexsha or self.repo.is_ancestor(commit.hexsha, self.head.hexsha)
        except self.git.GitCommandError:
            ancestor = False
        if ancestor:
            return None
        hint = f" ({FETCH_HINT})" if self.shallow else ""
        return (f"is not in the reviewed history (not an ancestor of the head){hint}: the platform would run code "
                f"nobody reviewed in this pull request; pin a commit of its history")

    def rollout_differs(self, sha: str, rollout: str) -> str | None:
        """None when rollouts/`rollout`/ at `sha` is the head's (its committed tree, and no working-tree
        change under it), else what differs, in words."""
        commit, why = self._commit(sha)
        if commit is None:
            return why
        prefix = f"rollouts/{rollout}"
        pinned, head = _files_under(commit.tree, prefix), _files_under(self.head.tree, prefix)
        if not pinned:
            return f"has no rollouts/{rollout}/ (the head has {len(head)} file{'s' if len(head) != 1 else ''} there)"
        differ = {path for path in pinned.keys() | head.keys() if pinned.get(path) != head.get(path)}
        differ |= {path[len(prefix) + 1:] for path in self._dirty_paths() if path.startswith(prefix + "/")}
        if not differ:
            return None
        shown = sorted(differ)
        listed = ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
        return f"is not the one the head shows ({listed} differ{'s' if len(shown) == 1 else ''})"

    def _dirty_paths(self) -> set[str]:
        """Repository paths that differ between HEAD and the working tree (uncommitted, untracked)."""
        if self._dirty is None:
            dirty: set[str] = set()
            for d in self.head.diff(None):
                dirty.update(p for p in (d.a_path, d.b_path) if p)
            untracked = self.repo.git.ls_files("-z", "--others", "--exclude-standard", "--full-name").split("\0")
            dirty.update(p for p in untracked if p)
            self._dirty = dirty
        return self._dirty


def _files_under(tree, prefix: str) -> dict[str, tuple[int, str]]:
    """{path under `prefix`: (mode, blob SHA)} of the tree `prefix` in `tree`, or {} when it is no tree."""
    try:
        node = tree / prefix
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}
    if getattr(node, "type", None) != "tree":
        return {}
    start = len(prefix) + 1
    return {item.path[start:]: (item.mode, item.hexsha) for item in node.traverse() if item.type == "blob"}


def base_reader(base_tree, config: Config):
    """read(path) -> the text of a repository file at the base revision, links followed inside the
    tree, or None (absent, too large, not UTF-8, or a path or link that leaves the repository).
    For the run rules (PL708, PL902) and the change cards: a config that is a link at the base
    is compared by what it leads to, as the head's is."""

    def read(value: str) -> str | None:
        rel = posixpath.normpath(value.replace("\\", "/"))
        if rel.startswith(("/", "../")) or rel in ("..", "."):
            return None
        return tree_text(base_tree, rel, config.max_file_size)

    return read