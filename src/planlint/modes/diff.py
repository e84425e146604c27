"""Diff mode: `planlint --diff-base REV [PATH...]` checks what a pull request changed.

The base is the merge-base of REV and HEAD (what a pull request is compared
with), the head is the working tree, so uncommitted and untracked plans count.
Plans added, modified or renamed under PATHs are linted with every rule, and
the diff rules (PL701-PL704) compare each with its version at the base,
read from git objects (no checkout, no temporary clone). Deleted plans and
plans renamed out of PATHs are followed for PL704. Unchanged plans are not
linted, but their names still count for PL005: a pull request that reuses an
existing plan's name is told so.

Safety: REV is checked for shape, then resolved to a commit through
GitPython's object API; only full commit SHAs and constant options ever
reach a git command line, and PATHs are matched in Python, never passed to git.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planlint.core import suppressions as supp
from planlint.core.config import Config, ConfigError, approvers_settings, build_config, find_config, parse_approvers, raw_settings, settings_from_text
from planlint.core.loader import decode, load_file, load_text, read_text
from planlint.core.messages import sanitize, show
from planlint.core.model import PLAN_API_VERSION, PLAN_KIND, FileResult, Report, UsageError, is_plan
from planlint.core.positions import START, Span
from planlint.core.reviews import ReviewState
from planlint.engine.discovery import _SKIP_DIRS, YAML_SUFFIXES, discover
from planlint.engine.lint import add_finding, lint_file, make_finding, place
from planlint.engine.run import finish
from planlint.modes import changes as plan_changes
from planlint.modes.changes import CommittedSpend
from planlint.rules import DIFF_RULES, RULES, PlanContext, resolved, rule_names
from planlint.rules.base import Services
from planlint.rules.budget import committed
from planlint.rules.diff import PlanChange, approval_needed
from planlint.rules.leakage import inputs
from planlint.rules.policy import PolicyChange
from planlint.rules.run import resolve_config
from planlint.services.catalog import CatalogError, catalog_from_text

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
class _Change:
    kind: str  # added | modified | renamed | deleted
    base_rel: str | None  # repo-relative posix path at the base
    head_rel: str | None  # repo-relative posix path in the working tree


def lint_diff(paths: list[str], config: Config, base_rev: str, *, services: Services | None = None, pull_request=None, policy: Policy | None = None) -> Report:
    """Lint the plans under `paths` that changed since the merge-base of `base_rev` and HEAD.

    Paths are as given, relative to the current directory, which must be in
    the repository's working tree. UsageError (exit 2) says what to fix.
    `pull_request`: the GitHub pull request this run is for (PL707), or None.
    `policy` (from `base_policy`): `config` is then the base revision's
    configuration, and the change to it is reported (PL705), with what the
    pull request adds to the catalog and its new suppression comments.
    """
    config = resolved(config)  # select/ignore/severity, once for the whole run
    cwd = os.getcwd()
    check_rev(base_rev)
    git = _import_git()
    repo = _open_repo(git, cwd)
    try:
        return _lint(repo, git, paths, config, base_rev, cwd, services, pull_request, policy)
    except git.GitCommandError as exc:
        raise UsageError(f"git failed: {_git_stderr(exc)}") from None
    except UnicodeDecodeError:
        raise UsageError("git reported a file name that is not UTF-8; diff mode needs UTF-8 paths") from None
    finally:
        repo.close()


def check_rev(rev: str) -> None:
    """Refuse anything that is not shaped like a revision, before git sees it."""
    if not rev:
        raise UsageError("--diff-base needs a revision: a branch, tag or commit, e.g. --diff-base origin/main")
    if rev.startswith("-"):
        raise UsageError(f"--diff-base {show(rev)} is not a revision (it starts with '-'): give a branch, tag or commit, e.g. --diff-base origin/main")
    if len(rev) > 256 or _REV_FORBIDDEN.search(rev):
        raise UsageError(f"--diff-base {show(rev)} is not a revision planlint accepts: give a branch, tag or commit (e.g. origin/main, v1.2, a1b2c3d, HEAD~3)")


# --------------------------------------------------------------------------- git


def _import_git():
    try:
        import git  # GitPython: only diff mode pays for it
    except ImportError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise UsageError(
            "--diff-base needs GitPython (a planlint dependency: pip install 'GitPython>=3.1.62') and the git command on PATH"
            + (f" ({detail[:200]})" if detail else "")
        ) from None
    return git


def _open_repo(git, cwd: str):
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
        raise UsageError(f"git cannot use the repository at {show(repo.working_tree_dir)}: {_git_stderr(exc, full=True)}") from None
    return repo


def _is_shallow(repo) -> bool:
    dirs = {repo.git_dir, getattr(repo, "common_dir", repo.git_dir)}
    return any(os.path.exists(os.path.join(d, "shallow")) for d in dirs)


def _git_stderr(exc, full: bool = False) -> str:
    """git's complaint, cleaned of GitPython's wrapping; `full` keeps git's hint lines too."""
    text = str(getattr(exc, "stderr", "") or exc).strip()
    text = re.sub(r"^stderr:\s*", "", text).strip().strip("'").strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()] or [str(exc)]
    return sanitize(" ".join(lines) if full else lines[0])[:600]


def _resolve(repo, git, rev: str):
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


def _base_commit(repo, git, rev: str):
    """The merge-base of `rev` and HEAD, as a commit object, or a UsageError saying how to fix it."""
    shallow = _is_shallow(repo)
    target = _resolve(repo, git, rev)
    if target is None:
        if shallow:
            raise UsageError(f"unknown revision {show(rev)}: {FETCH_HINT}, then use e.g. --diff-base origin/main")
        name = re.split(r"[~^@]", rev, maxsplit=1)[0]
        if name != rev:  # HEAD~5, main^2, main@{1}: a position relative to a name, never something to fetch
            if name and _resolve(repo, git, name) is not None:
                raise UsageError(
                    f"unknown revision {show(rev)}: {show(name)} exists but the history here does not reach that far back "
                    f"(a short or shallow history): fetch more history (actions/checkout with `fetch-depth: 0`) or name a branch, tag or commit"
                )
            raise UsageError(f"unknown revision {show(rev)}: {show(name or rev)} is no branch, tag or commit here; name one that exists (git branch -a lists them)")
        hint = ""
        if "/" not in rev and _resolve(repo, git, f"origin/{rev}") is not None:
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


def _changes(repo, base) -> list[_Change]:
    """Every file that differs between `base` and the working tree (git pairs renames by content)."""
    found: list[_Change] = []
    for d in base.diff(None):  # base tree against the working tree; -M pairs renames
        if d.new_file:
            found.append(_Change("added", None, d.b_path))
        elif d.deleted_file:
            found.append(_Change("deleted", d.a_path, None))
        elif d.renamed_file:
            found.append(_Change("renamed", d.a_path, d.b_path))
        else:
            found.append(_Change("modified", d.a_path, d.b_path))
    untracked = [p for p in repo.git.ls_files("-z", "--others", "--exclude-standard", "--full-name").split("\0") if p]
    found.extend(_Change("added", None, p) for p in untracked)
    return found


def _plan_name(data: Any) -> str | None:
    meta = data.get("metadata") if isinstance(data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


def _head_name(root: str, rel: str, config: Config) -> str | None:
    loaded = load_file(Path(root, *rel.split("/")), config.parser_limits())
    return None if loaded.fatal or not is_plan(loaded.data) else _plan_name(loaded.data)


def _follow_plans(changes: list[_Change], base_names: dict[str, str | None], head_name) -> list[_Change]:
    """Renames as plans see them: a plan is the same plan when it keeps its metadata.name.

    Git pairs files by content similarity, and plans written from one template
    look alike: a deleted plan and an unrelated new one would pass for a rename.
    So a git rename whose two sides name different plans is a deletion plus an
    addition, and a deleted plan whose name reappears in an added file (moved
    with `mv` rather than `git mv`, or rewritten while moving) is a rename.
    """
    out: list[_Change] = []
    for change in changes:
        if change.kind == "renamed" and (base_names.get(change.base_rel) is None or base_names[change.base_rel] != head_name(change.head_rel)):
            out += [_Change("deleted", change.base_rel, None), _Change("added", None, change.head_rel)]
        else:
            out.append(change)
    deleted = {}
    for change in out:
        name = base_names.get(change.base_rel) if change.kind == "deleted" else None
        if name is not None:
            deleted.setdefault(name, change)
    if not deleted:
        return out
    moves: dict[int, _Change] = {}
    for change in out:
        if change.kind == "added" and change.head_rel.lower().endswith(YAML_SUFFIXES):
            gone = deleted.pop(head_name(change.head_rel) or "", None)
            if gone is not None:
                moves[id(gone)] = _Change("renamed", gone.base_rel, change.head_rel)
                moves[id(change)] = None
    return [moves.get(id(c), c) for c in out if moves.get(id(c), c) is not None]


# --------------------------------------------------------------------------- which files


class _Scope:
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


# --------------------------------------------------------------------------- the run


def _base_plan(base_tree, rel: str, config: Config, texts: dict | None = None) -> dict | None:
    """The plan's data at the base revision, or None when it was no readable plan (its text goes in `texts`)."""
    text = _base_text(base_tree, rel, config.max_file_size)
    if texts is not None:
        texts[rel] = text
    if text is None:
        return None
    loaded = load_text(text, config.parser_limits())
    if loaded.fatal or not is_plan(loaded.data):
        return None
    return loaded.data


def _no_longer_a_plan(path: Path, config: Config) -> str:
    """What the file at `path` is now that it is not a readable plan, in words for PL704."""
    if os.path.islink(path) and not os.path.exists(path):
        return "a symbolic link to a file that does not exist"
    loaded = load_file(path, config.parser_limits())
    if loaded.text is None:
        why = loaded.problems[0].message if loaded.problems else "it cannot be read"
        return f"a file that cannot be read ({why})"
    if loaded.fatal:
        why = loaded.problems[0].message if loaded.problems else "invalid YAML"
        return f"a file that cannot be parsed ({why})"
    data = loaded.data
    if data is None or data == {} or data == [] or data == "":
        return "empty (no YAML content)"
    if isinstance(data, dict):
        if data.get("apiVersion") != PLAN_API_VERSION:
            return f"not a plan (apiVersion is {show(data.get('apiVersion'))}, not {PLAN_API_VERSION})" if "apiVersion" in data else "not a plan (no apiVersion)"
        if data.get("kind") != PLAN_KIND:
            return f"not a plan (kind is {show(data.get('kind'))}, not {PLAN_KIND})" if "kind" in data else "not a plan (no kind)"
    what = "a sequence" if isinstance(data, list) else "a mapping" if isinstance(data, dict) else "a scalar"
    return f"not a plan ({what}, not a mapping with apiVersion and kind)"


def _base_text(base_tree, rel: str, max_size: int) -> str | None:
    """The text of the regular file `rel` at the base revision, or None (absent, a link, too big, not text)."""
    try:
        blob = base_tree / rel
    except KeyError:
        return None
    if blob.type != "blob" or blob.mode == 0o120000 or blob.size > max_size:
        return None
    text, problem = decode(blob.data_stream.read())
    return None if problem is not None else text


# The plan is written by the pull request's author, who cannot vouch for their own approval:
# PL707 is turned off only by the (base revision's) config, never by a comment in the plan.
UNSUPPRESSIBLE = frozenset({"PL707"})


def _base_reader(base_tree, config: Config):
    """read(path) -> the text of a repository file at the base revision, or None (absent, too large,
    not UTF-8, or a path that leaves the repository). For the run rules (PL708)."""

    def read(value: str) -> str | None:
        rel = posixpath.normpath(value.replace("\\", "/"))
        if rel.startswith(("/", "../")) or rel in ("..", "."):
            return None
        try:
            blob = base_tree / rel
        except KeyError:
            return None
        if blob.type != "blob" or blob.mode == 0o120000 or blob.size > config.max_file_size:
            return None  # a symbolic link at the base is not followed
        text, problem = decode(blob.data_stream.read())
        return None if problem is not None else text

    return read


def _head_reader(root: str, config: Config):
    """read(path) -> the text of a repository file in the working tree, or None (absent, too large,
    not UTF-8, or a path or link that leaves the repository). For the change cards' run configs."""

    def read(value: str) -> str | None:
        path, _ = resolve_config(value, Path(root))
        if path is None:
            return None
        text, problem = read_text(path, config.max_file_size)
        return None if problem is not None else text

    return read


def _run_diff_rules(
    result: FileResult, base: dict | None, change: PlanChange, config: Config, reviews: ReviewState | None = None,
    *, file: Path | None = None, base_text=None,
) -> None:
    """The diff rules on one plan. A new plan (no base version) gets only PL707, which judges new plans too.
    `file`, `base_text`: what the run rules need besides (the plan's file, a reader of the base revision's files)."""
    if base is None and reviews is None:
        return
    config = resolved(config)  # the run's already is (lint_diff)
    if base is not None:
        result.diff_checked = True
    ctx = PlanContext(
        data=result.data if isinstance(result.data, dict) else {}, path=result.path, config=config,
        file=file, base=base, change=change, reviews=reviews, base_text=base_text,
    )
    for rule in DIFF_RULES:
        if rule.code not in config.rules or (base is None and rule.code != "PL707"):
            continue
        for problem in rule.check(ctx):
            code = problem.code or rule.code
            add_finding(result, code, problem, result.positions, config, suppressed=code not in UNSUPPRESSIBLE)


def _lint(repo, git, paths: list[str], config: Config, rev: str, cwd: str, services: Services | None = None, pull_request=None, policy: Policy | None = None) -> Report:
    base = _base_commit(repo, git, rev)
    root = os.path.realpath(repo.working_tree_dir)
    scope = _Scope(paths, config, os.path.realpath(cwd), root, base.tree)
    every_change = _changes(repo, base)
    changes = [c for c in every_change if (c.head_rel and scope.match(c.head_rel)) or (c.base_rel and scope.match(c.base_rel))]
    changes += _plans_of_changed_run_configs(every_change, changes, scope, config)
    base_texts: dict[str, str | None] = {}
    base_plans = {c.base_rel: _base_plan(base.tree, c.base_rel, config, base_texts) for c in changes if c.base_rel}
    head_names: dict[str, str | None] = {}

    def head_name(rel: str) -> str | None:
        if rel not in head_names:
            head_names[rel] = _head_name(root, rel, config)
        return head_names[rel]

    changes = _follow_plans(changes, {rel: _plan_name(data) for rel, data in base_plans.items()}, head_name)
    results: list[FileResult] = []
    base_of: dict[int, str | None] = {}  # id(result) -> its repo path at the base
    linted: set[str] = set()
    cards: list[dict] = []
    spend = CommittedSpend()
    read_base, read_head = _base_reader(base.tree, config), _head_reader(root, config)
    if policy is not None:
        # The run's config is the base revision's (base_policy), read and validated once:
        # its approvers are the ones the pull request cannot change.
        approvals = _Approvals(pull_request, config, lambda: (dict(config.approvers), []))
    else:  # a caller that judges by the working tree's config: the team members still come from the base
        approvals = _Approvals(pull_request, config, lambda: _base_approvers(base.tree, config, root, cwd))
    for change in sorted(changes, key=lambda c: c.head_rel or c.base_rel):
        head = scope.match(change.head_rel) if change.head_rel else None
        old = scope.match(change.base_rel) if change.base_rel else None
        base_data = base_plans.get(change.base_rel) if change.base_rel else None
        base_display = (old[0] if old else scope.display(change.base_rel)) if change.base_rel else None
        spend.add("base", base_data)
        if head is not None:
            display, explicit = head
            linted.add(scope.absolute(change.head_rel))
            path = Path(os.path.join(cwd, display))
            result = lint_file(display, path, explicit, config, services)
            gone = None
            if result is None or not isinstance(result.data, dict):
                gone = _no_longer_a_plan(path, config)  # unreadable, unparseable, or not a plan (any more)
                if result is None:  # not a plan (any more)
                    if base_data is None:
                        continue  # not a plan, and was none at the base
                    cards.append(plan_changes.card("deleted", display, base_data, None))
                    result = FileResult(display, is_plan=True)
                    _run_diff_rules(result, base_data, PlanChange(change.kind, display, base_display, gone), config)
                    results.append(result)
                    continue
            head_data = result.data if isinstance(result.data, dict) else None
            spend.add("head", head_data)
            cards.append(plan_changes.card(change.kind, display, base_data, head_data))
            cards[-1]["fields"] += plan_changes.run_config_fields(base_data, head_data, read_base, read_head)
            reviews = approvals.for_plan(base_data, head_data)
            _run_diff_rules(
                result, base_data, PlanChange(change.kind, display, base_display, gone), config, reviews,
                file=Path(os.path.join(cwd, display)), base_text=read_base,
            )
            results.append(result)
            base_of[id(result)] = change.base_rel
        elif base_data is not None:  # deleted, or renamed out of PATHs: only PL704 applies
            where = scope.display(change.head_rel) if change.head_rel else base_display
            head_data = _head_data(root, change.head_rel, config) if change.head_rel else None
            spend.add("head", head_data)
            cards.append(plan_changes.card(change.kind, where, base_data, head_data))
            result = FileResult(where, is_plan=True)
            _run_diff_rules(result, base_data, PlanChange(change.kind, where, base_display), config)
            results.append(result)

    # Plans the diff does not touch can still change verdict: their split files, the config or the catalog changed.
    changed_files = {rel for c in every_change for rel in (c.base_rel, c.head_rel) if rel}
    policy_changed = _policy_files(config, root, policy) & changed_files
    other_names: dict[str, str] = {}
    commitments: list[tuple[str, float]] = []
    relinted: list[str] = []
    for display, path, data in _unchanged_plans(scope, config, linted):
        spend.add("base", data)
        spend.add("head", data)
        why = sorted(policy_changed) if policy_changed else _changed_inputs(data, path, config, root, changed_files, services)
        if why:
            result = lint_file(display, path, False, config, services)
            if result is not None:
                results.append(result)
                relinted.append(display)
                continue
        name = _plan_name(data)
        if name is not None:
            other_names.setdefault(name, display)
        commitment = committed(data)
        if commitment is not None:
            commitments.append(commitment)
    results.sort(key=lambda r: r.path)
    report = finish(results, config, other_names=other_names if "PL005" in config.rules else {}, other_commitments=commitments)
    if policy is not None:
        _review(report, policy, scope, root, base.tree, config, results, base_of, base_texts)
    report.notes.append(
        f"diff mode: {len(results) - len(relinted)} changed plan(s) between {base.hexsha[:12]} (merge-base of {rev} and HEAD) and the working tree"
        + (f"; {len(relinted)} unchanged plan(s) linted too because their split files, the config or the catalog changed" if relinted else "")
    )
    report.notes.extend(approvals.notes())
    report.changes = cards
    report.committed_spend = spend.to_dict(config.committed_limit)
    if spend.uncounted_head:
        report.notes.append(
            f"committed spend leaves out {spend.uncounted_head} approved or running plan(s) whose budget.max_spend or "
            f"budget.currency is not valid (PL502/PL503 say which)"
        )
    return report


class _Approvals:
    """PL707's reviews: read from GitHub once, and only when a plan's change needs an approval."""

    def __init__(self, pull_request, config: Config, approvers) -> None:
        self.pull_request, self.config, self._approvers = pull_request, config, approvers
        self.state: ReviewState | None = None
        self.base_notes: list[str] = []

    def for_plan(self, base: dict | None, head: dict | None) -> ReviewState | None:
        if self.pull_request is None or "PL707" not in self.config.rules or approval_needed(base, head) is None:
            return None
        if self.state is None:
            approvers, self.base_notes = self._approvers()
            self.state = self.pull_request.review_state(approvers)
        return self.state

    def notes(self) -> list[str]:
        if "PL707" not in self.config.rules:
            return []
        if self.pull_request is None:
            return [
                "PL707 (approval-not-verified) did not run: this is no GitHub pull request run ($GITHUB_EVENT_PATH holds no "
                "pull_request or pull_request_review event), so no budget.approved_by was checked against the pull request's reviews"
            ]
        return list(self.base_notes)


def _base_approvers(base_tree, config: Config, root: str, cwd: str) -> tuple[dict[str, list[str]], list[str]]:
    """The `approvers` map of the configuration at the base revision, and notes on what went wrong.

    Only for a diff run without a base policy (`lint_diff(policy=None)`, which
    judges by the working tree's config); the CLI always has one, and then the
    run's config is the base revision's and its `approvers` are used as they are.

    The pull request may edit its own `.planlint.yaml`, so the map is read
    from the base commit: the file at the path of the config in use, else the
    one found from the current directory upward as `find_config` would.
    """
    candidates: list[str] = []
    if config.source is not None:
        rel = os.path.relpath(os.path.realpath(config.source), root)
        if not (rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel)):
            candidates.append(Path(rel).as_posix())
    here = os.path.relpath(os.path.realpath(cwd), root)
    parts = [] if here == "." else Path(here).parts
    for depth in range(len(parts), -1, -1):
        prefix = "/".join(parts[:depth])
        candidates += [f"{prefix}/.planlint.yaml" if prefix else ".planlint.yaml", f"{prefix}/pyproject.toml" if prefix else "pyproject.toml"]
    for rel in candidates:
        try:
            blob = base_tree / rel
        except KeyError:
            continue
        if blob.type != "blob" or blob.size > config.max_file_size:
            continue
        raw, why = _config_settings(rel, blob.data_stream.read())
        if raw is None and why is None:
            continue  # a pyproject.toml without [tool.planlint]
        if why is not None:
            return {}, [f"the base revision's {rel} could not be read ({why}): PL707 knows no team members"]
        approvers: dict[str, list[str]] = {}
        for key, value in approvers_settings(raw):
            try:
                approvers.update(parse_approvers(value, ValueError))
            except ValueError as exc:
                return {}, [f"the base revision's {rel}: {key}: {exc}; PL707 knows no team members"]
        return approvers, []
    return {}, []


def _config_settings(rel: str, data: bytes) -> tuple[dict | None, str | None]:
    """(settings, None), (None, why it cannot be read), or (None, None) for a pyproject.toml without planlint."""
    if rel.endswith(".toml"):
        try:
            import tomllib  # type: ignore[import-not-found]
        except ImportError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None, "not valid TOML"
        tool = doc.get("tool")
        table = tool.get("planlint") if isinstance(tool, dict) else None
        return (table, None) if isinstance(table, dict) else (None, None)
    text, problem = decode(data)
    if problem is not None:
        return None, "not UTF-8"
    loaded = load_text(text)
    if loaded.problems or (loaded.data is not None and not isinstance(loaded.data, dict)):
        return None, "not a YAML mapping"
    return loaded.data or {}, None


def _head_data(root: str, rel: str, config: Config) -> dict | None:
    loaded = load_file(Path(root, *rel.split("/")), config.parser_limits())
    return loaded.data if not loaded.fatal and is_plan(loaded.data) else None


def _plans_of_changed_run_configs(every_change: list[_Change], changes: list[_Change], scope: _Scope, config: Config) -> list[_Change]:
    """Plans under PATHs that did not change but whose run config did (PL708 and the run rules
    must see a pull request that edits only the TOML file)."""
    changed_configs = {rel for c in every_change for rel in (c.head_rel, c.base_rel) if rel and rel.lower().endswith(".toml")}
    if not changed_configs or not scope.existing:
        return []
    taken = {rel for c in changes for rel in (c.head_rel, c.base_rel) if rel}
    found: list[_Change] = []
    for _, path, _ in discover(scope.existing, config):
        absolute = os.path.realpath(os.path.join(scope.cwd, path))
        rel = Path(os.path.relpath(absolute, scope.root)).as_posix()
        if rel in taken or rel.startswith("../"):
            continue
        loaded = load_file(Path(absolute), config.parser_limits())
        run = loaded.data.get("run") if not loaded.fatal and is_plan(loaded.data) else None
        if not isinstance(run, dict):
            continue
        named = {posixpath.normpath(v.replace("\\", "/")) for v in (run.get("training_config"), run.get("eval_config")) if isinstance(v, str) and v.strip()}
        if named & changed_configs:
            found.append(_Change("modified", rel, rel))
            taken.add(rel)
    return found


def _policy_files(config: Config, root: str, policy: Policy | None) -> set[str]:
    """Repo-relative paths of the files that set policy for every plan: the config files and catalogs (base and head)."""
    found = set(policy.files) if policy is not None else set()
    for path in (config.source, config.catalog):
        if path is None:
            continue
        rel = os.path.relpath(os.path.abspath(path), root)
        if rel != ".." and not rel.startswith(".." + os.sep) and not os.path.isabs(rel):
            found.add(Path(rel).as_posix())
    return found


def _changed_inputs(data: dict, path: Path, config: Config, root: str, changed: set[str], services: Services | None) -> list[str]:
    """The repo files among `changed` that the data checks would read for this plan (its split files)."""
    ctx = PlanContext(data=data, path=str(path), config=config, services=services or Services(), file=path)
    hits = []
    for candidate in inputs(ctx):
        for form in {os.path.abspath(candidate), os.path.realpath(candidate)}:
            rel = os.path.relpath(form, root)
            if not rel.startswith(".." + os.sep) and rel != ".." and Path(rel).as_posix() in changed:
                hits.append(Path(rel).as_posix())
    return hits


def _unchanged_plans(scope: _Scope, config: Config, linted: set[str]):
    """(display, path, data) of every plan under PATHs that is not among the changed files."""
    if not scope.existing:
        return
    for display, path, _ in discover(scope.existing, config):
        full = Path(os.path.join(scope.cwd, path))
        if os.path.realpath(full) in linted:
            continue
        loaded = load_file(full, config.parser_limits())
        if not loaded.fatal and is_plan(loaded.data):
            yield display, full, loaded.data


# --------------------------------------------------------------------------- the base revision's policy


@dataclass
class Policy:
    """The configuration a pull request is judged by (the merge-base's), and the one it brings.

    `config` is the base revision's configuration, with the base revision's
    catalog content in `config.catalog_text`; `head_config` is what the
    working tree holds. `files`: repo paths of the configuration files and
    catalogs on either side (a change to any of them re-lints every plan).
    """

    config: Config
    head_config: Config
    base_settings: dict
    head_settings: dict
    base_rel: str | None  # repo path of the base's config file (None: none, or outside the repository)
    head_file: Path | None  # the head's config file on disk
    base_catalog: str | None  # the base catalog's text ("" when the file did not exist)
    files: set[str]


def base_policy(explicit: str | None, base_rev: str, head_config: Config) -> Policy:
    """The merge-base's configuration and catalog for `--diff-base base_rev` (read from git objects)."""
    cwd = os.getcwd()
    check_rev(base_rev)
    git = _import_git()
    repo = _open_repo(git, cwd)
    try:
        base = _base_commit(repo, git, base_rev)
        root = os.path.realpath(repo.working_tree_dir)
        found = _base_config_file(base.tree, root, os.path.realpath(cwd), explicit, head_config)
        base_rel = None
        if found is None:
            config = Config(root=Path(cwd))
            base_settings: dict = {}
        elif isinstance(found, Path):  # outside the repository: not the pull request's to change
            base_settings = raw_settings(found)
            config = build_config(base_settings, found, RULES, rule_names())
        else:
            base_rel, text = found
            where = Path(root, *base_rel.split("/"))
            try:
                base_settings = settings_from_text(text, where) or {}
                config = build_config(base_settings, where, RULES, rule_names())
            except ConfigError as exc:
                raise UsageError(f"the configuration at the base revision ({base.hexsha[:12]}) cannot be used: {exc}") from None
        files = {rel for rel in (base_rel, _rel(head_config.source, root)) if rel}
        base_catalog = None
        if config.catalog:
            rel = _rel(config.catalog, root)
            if rel is not None:
                base_catalog = _base_text(base.tree, rel, config.max_file_size) or ""
                config.catalog_text = base_catalog
                files.add(rel)
        head_rel_catalog = _rel(head_config.catalog, root) if head_config.catalog else None
        if head_rel_catalog:
            files.add(head_rel_catalog)
        head_settings: dict = {}
        if head_config.source is not None and head_config.source.is_file():
            try:
                head_settings = raw_settings(head_config.source)
            except ConfigError:
                head_settings = {}
        return Policy(config, head_config, base_settings, head_settings, base_rel, head_config.source, base_catalog, files)
    except git.GitCommandError as exc:
        raise UsageError(f"git failed: {_git_stderr(exc)}") from None
    finally:
        repo.close()


def _rel(path, root: str) -> str | None:
    if path is None:
        return None
    rel = os.path.relpath(os.path.abspath(path), root)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return None
    return Path(rel).as_posix()


def _base_config_file(tree, root: str, cwd: str, explicit: str | None, head_config: Config):
    """Where the base revision's configuration is: (repo path, text), a Path outside the repository, or None.

    Discovery as at head (config.find_config), over the base revision's tree:
    from the current directory up to the repository root, `.planlint.yaml`
    before a `pyproject.toml` with a [tool.planlint] table; above the
    repository, the files on disk (not the pull request's).
    """
    if explicit:
        rel = _rel(os.path.realpath(os.path.join(cwd, explicit)), root)
        if rel is None:
            return Path(explicit)
        text = _base_text(tree, rel, 1 << 20)
        return (rel, text) if text is not None else None
    start = _rel(cwd, root)
    parts = [] if start in (None, ".") else start.split("/")
    while True:
        for name in (".planlint.yaml", "pyproject.toml"):
            rel = "/".join(parts + [name])
            text = _base_text(tree, rel, 1 << 20)
            if text is None:
                continue
            if name == "pyproject.toml":
                try:
                    if "planlint" not in text or settings_from_text(text, Path(root, rel)) is None:
                        continue
                except Exception:  # noqa: BLE001 - a broken pyproject at the base configures nothing here
                    continue
            return rel, text
        if not parts:
            break
        parts.pop()
    outside = find_config(Path(root).parent) if Path(root).parent != Path(root) else None
    return outside


# --------------------------------------------------------------------------- what the PR changes in policy


def _review(report: Report, policy: Policy, scope: _Scope, root: str, tree, config: Config, results: list[FileResult], base_of: dict, base_texts: dict) -> None:
    """PL705 findings, and the catalog entries and suppression comments the pull request adds."""
    if "PL705" in config.rules:
        _policy_findings(report, policy, scope, root, config)
    report.review["catalog_added"] = _catalog_added(policy, root, scope)
    report.review["suppressions_added"] = _suppressions_added(results, base_of, base_texts)


def _policy_findings(report: Report, policy: Policy, scope: _Scope, root: str, config: Config) -> None:
    head_file = policy.head_file if policy.head_file is not None and policy.head_file.is_file() else None
    if head_file is not None:
        display = os.path.relpath(os.path.abspath(head_file), scope.cwd).replace(os.sep, "/")
    elif policy.base_rel is not None:
        display = scope.display(policy.base_rel)
    else:
        return
    plan_files = [(display_, Path(os.path.join(scope.cwd, path))) for display_, path, _ in discover(scope.existing, policy.config)] if scope.existing else []
    ctx = PlanContext(
        data=policy.head_settings if head_file is not None else {},
        path=display,
        config=config,
        base=policy.base_settings,
        policy=PolicyChange(base_config=policy.config, head_config=policy.head_config, plan_files=tuple(plan_files), rules=RULES),
    )
    problems = list(RULES["PL705"].check(ctx))
    if not problems:
        return
    locate = _config_locator(head_file)
    for problem in problems:
        span = locate(problem)
        report.findings.append(make_finding("PL705", display, span, problem.message, problem.route, config))
    text = None
    if head_file is not None:
        try:
            text = head_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
    if text is not None:
        report.sources[display] = text
    report.findings.sort(key=lambda f: f.sort_key)


def _config_locator(head_file: Path | None):
    """problem -> Span in the head's config file: loader positions for YAML, the key's line for TOML."""
    if head_file is None:
        return lambda problem: START
    if head_file.suffix == ".toml":
        return _toml_locator(head_file)
    loaded = load_file(head_file)
    if loaded.positions is None:
        return lambda problem: START
    return lambda problem: place(problem, loaded.positions) if problem.route else START


def _toml_locator(path: Path):
    """Find `key = ...` under [tool.planlint] (or `sub = ...` under [tool.planlint.key]) by line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return lambda problem: START
    table_re = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(?:#.*)?$")

    def find(problem) -> Span:
        route = [str(part) for part in problem.route]
        if not route:
            return START
        table = None
        fallback = None
        for number, line in enumerate(lines, start=1):
            match = table_re.match(line)
            if match:
                table = match.group(1).replace(" ", "")
                if len(route) == 2 and table == f"tool.planlint.{route[0]}":
                    fallback = Span(number, 1, number, len(line) + 1)
                continue
            key_match = re.match(r"^(\s*)([A-Za-z0-9_.\"'-]+)\s*=", line)
            if not key_match:
                continue
            key = key_match.group(2).strip("\"'")
            start = len(key_match.group(1)) + 1
            here = Span(number, start, number, start + len(key_match.group(2)))
            if table == "tool.planlint":
                if key == route[0] or key.startswith(route[0] + "."):
                    if len(route) == 1 or key == f"{route[0]}.{route[1]}":
                        return here
                    fallback = fallback or here
            elif len(route) == 2 and table == f"tool.planlint.{route[0]}" and key == route[1]:
                return here
        return fallback or START

    return find


def _catalog_entries(text: str | None, display: str) -> set[tuple[str, str, str]]:
    if not text:
        return set()
    try:
        catalog = catalog_from_text(text, display)
    except CatalogError:
        return set()
    found = set()
    for section in ("datasets", "graders"):
        for name, values in (getattr(catalog, section) or {}).items():
            found.update((section, str(name), value) for value in values)
    return found


def _catalog_added(policy: Policy, root: str, scope: _Scope) -> list[dict]:
    """Entries (section, name, value) in the head's catalog that the base's catalog did not hold."""
    head_catalog = policy.head_config.catalog
    if not head_catalog or not os.path.isfile(head_catalog):
        return []
    rel = _rel(head_catalog, root)
    display = scope.display(rel) if rel else os.path.basename(head_catalog)
    try:
        head_text = Path(head_catalog).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    added = _catalog_entries(head_text, display) - _catalog_entries(policy.base_catalog, display)
    kind = {"datasets": "dataset", "graders": "grader"}
    return [
        {"catalog": display, "kind": kind[section], "name": name, ("release" if section == "datasets" else "version"): value}
        for section, name, value in sorted(added)
    ]


def _suppressions_added(results: list[FileResult], base_of: dict, base_texts: dict) -> list[dict]:
    """Suppression comments in the changed plans that their base versions did not have (same kind, codes and reason)."""
    from collections import Counter

    added: list[dict] = []
    for result in results:
        if not result.suppressions:
            continue
        base_rel = base_of.get(id(result))
        base_text = base_texts.get(base_rel) if base_rel else None
        before = Counter((s.kind, tuple(s.codes), s.reason) for s in supp.parse(base_text)) if base_text else Counter()
        for s in result.suppressions:
            key = (s.kind, tuple(s.codes), s.reason)
            if before[key] > 0:
                before[key] -= 1
                continue
            added.append({
                "path": result.path, "line": s.span.line, "kind": s.kind, "codes": list(s.codes),
                "reason": s.reason, "silences": sorted(s.used),
            })
    return added
