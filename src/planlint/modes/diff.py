"""Diff mode: `planlint --diff-base REV [PATH...]` checks what a pull request changed.

The base is the merge-base of REV and HEAD (what a pull request is compared
with), the head is the working tree, so uncommitted and untracked plans count.
Plans added, modified or renamed under PATHs are linted with every rule, and
the diff rules (PL701-PL704) compare each with its version at the base,
read from git objects (no checkout, no temporary clone). Deleted plans and
plans renamed out of PATHs are followed for PL704. Unchanged plans are not
linted, but their names still count for PL005: a pull request that reuses an
existing plan's name is told so.

This module is the run; git is reached through `diff_git` (where REV is
checked and resolved: only full commit SHAs and constant options ever reach
a git command line, and PATHs are matched in Python, never passed to git),
and the base revision's policy and the pull request's reviews through
`diff_policy`.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

from planlint.core import suppressions as supp
from planlint.core.config import Config
from planlint.core.loader import load_file, load_text, read_text
from planlint.core.messages import show
from planlint.core.model import PLAN_API_VERSION, PLAN_KIND, FileResult, Report, UsageError, is_plan
from planlint.core.reviews import ReviewState
from planlint.engine.discovery import YAML_SUFFIXES, discover
from planlint.engine.lint import add_finding, lint_file
from planlint.engine.run import finish
from planlint.modes import changes as plan_changes
from planlint.modes.changes import CommittedSpend
from planlint.modes.diff_git import Change, Scope, base_commit, base_reader, base_text, check_rev, git_stderr, import_git, list_changes, open_repo, tree_blob, History
from planlint.modes.diff_data import split_changes
from planlint.modes.diff_policy import Approvals, Policy, base_approvers, policy_files, review
from planlint.rules import DIFF_RULES, PlanContext, resolved, rule_code
from planlint.rules.base import Services
from planlint.rules.budget import committed
from planlint.rules.diff import PlanChange
from planlint.rules.grader_source import named_sources
from planlint.rules.leakage import inputs
from planlint.rules.run import CONFIG_KEYS, TRAINER_CONFIGS, TRAINING_DIR, comment_free_spans, display_path, resolve_config, trainer_code


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
    git = import_git()
    repo = open_repo(git, cwd)
    try:
        return _lint(repo, git, paths, config, base_rev, cwd, services, pull_request, policy)
    except git.GitCommandError as exc:
        raise UsageError(f"git failed: {git_stderr(exc)}") from None
    except UnicodeDecodeError:
        raise UsageError("git reported a file name that is not UTF-8; diff mode needs UTF-8 paths") from None
    finally:
        repo.close()


def _plan_name(data: Any) -> str | None:
    meta = data.get("metadata") if isinstance(data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


def _head_name(root: str, rel: str, config: Config) -> str | None:
    loaded = load_file(Path(root, *rel.split("/")), config.parser_limits())
    return None if loaded.fatal or not is_plan(loaded.data) else _plan_name(loaded.data)


def _follow_plans(changes: list[Change], base_names: dict[str, str | None], head_name) -> list[Change]:
    """Renames as plans see them: a plan is the same plan when it keeps its metadata.name.

    Git pairs files by content similarity, and plans written from one template
    look alike: a deleted plan and an unrelated new one would pass for a rename.
    So a git rename whose two sides name different plans is a deletion plus an
    addition, and a deleted plan whose name reappears in an added file (moved
    with `mv` rather than `git mv`, or rewritten while moving) is a rename.
    """
    out: list[Change] = []
    for change in changes:
        if change.kind == "renamed" and (base_names.get(change.base_rel or "") is None or base_names[change.base_rel or ""] != head_name(change.head_rel)):
            out += [Change("deleted", change.base_rel, None), Change("added", None, change.head_rel)]
        else:
            out.append(change)
    deleted: dict[str, Change] = {}
    for change in out:
        name = base_names.get(change.base_rel or "") if change.kind == "deleted" else None
        if name is not None:
            deleted.setdefault(name, change)
    if not deleted:
        return out
    moves: dict[int, Change | None] = {}
    for change in out:
        if change.kind == "added" and change.head_rel and change.head_rel.lower().endswith(YAML_SUFFIXES):
            gone = deleted.pop(head_name(change.head_rel) or "", None)
            if gone is not None:
                moves[id(gone)] = Change("renamed", gone.base_rel, change.head_rel)
                moves[id(change)] = None
    return [moved for moved in (moves.get(id(c), c) for c in out) if moved is not None]


# --------------------------------------------------------------------------- the run


def _base_plan(base_tree, rel: str, config: Config, texts: dict | None = None) -> dict | None:
    """The plan's data at the base revision, or None when it was no readable plan (its text goes in `texts`)."""
    text = base_text(base_tree, rel, config.max_file_size)
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


# The plan and its run configs are written by the pull request's author, who cannot vouch for their own
# approval (PL707) or waive the freeze of a running plan's configs (PL708): those are turned off only by
# the (base revision's) config, never by a comment in the plan or a TOML file.
UNSUPPRESSIBLE = frozenset({"PL707", "PL708"})
# The diff rules that judge a plan without a base version too.
NEW_PLAN_RULES = frozenset({"PL707", "PL902"})


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
    *, file: Path | None = None, base_text=None, changed_since=None, history=None,
) -> None:
    """The diff rules on one plan. A new plan (no base version) gets only those that judge new plans too
    (PL707, and PL902's diff half). `file`, `base_text`, `history`: what the run rules need besides (the
    plan's file, a reader of the base revision's files, the repository's history)."""
    if base is None and reviews is None and history is None:
        return
    config = resolved(config)  # the run's already is (lint_diff)
    if base is not None:
        result.diff_checked = True
    ctx = PlanContext(
        data=result.data if isinstance(result.data, dict) else {}, path=result.path, config=config,
        file=file, base=base, change=change, reviews=reviews, base_text=base_text, changed_since=changed_since, history=history,
    )
    for rule in DIFF_RULES:
        if rule.code not in config.rules or (base is None and rule.code not in NEW_PLAN_RULES):
            continue
        for problem in rule.check(ctx):
            code = problem.code or rule.code
            add_finding(result, code, problem, result.positions, config, suppressed=code not in UNSUPPRESSIBLE,
                        unsuppressible=code in UNSUPPRESSIBLE)


def _lint(repo, git, paths: list[str], config: Config, rev: str, cwd: str, services: Services | None = None, pull_request=None, policy: Policy | None = None) -> Report:
    base = base_commit(repo, git, rev)
    root = os.path.realpath(repo.working_tree_dir)
    scope = Scope(paths, config, os.path.realpath(cwd), root, base.tree)
    every_change = list_changes(repo, base)
    changed_files = {rel for c in every_change for rel in (c.base_rel, c.head_rel) if rel}
    changes = [c for c in every_change if (c.head_rel and scope.match(c.head_rel)) or (c.base_rel and scope.match(c.base_rel))]
    changes += _plans_of_changed_files(every_change, changes, scope, config, base.tree, changed_files)
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
    head_plans: list[dict] = []  # the changed plans' data at head
    spend = CommittedSpend()
    read_base, read_head = base_reader(base.tree, config), _head_reader(root, config)
    history = History(repo, git) if "PL902" in config.rules else None
    if policy is not None:
        # The run's config is the base revision's (base_policy), read and validated once:
        # its approvers are the ones the pull request cannot change.
        approvals = Approvals(pull_request, config, lambda: (dict(config.approvers), []))
    else:  # a caller that judges by the working tree's config: the team members still come from the base
        approvals = Approvals(pull_request, config, lambda: base_approvers(base.tree, config, root, cwd))
    for change in sorted(changes, key=lambda c: c.head_rel or c.base_rel or ""):
        head = scope.match(change.head_rel) if change.head_rel else None
        old = scope.match(change.base_rel) if change.base_rel else None
        base_data = base_plans.get(change.base_rel) if change.base_rel else None
        base_display = (old[0] if old else scope.display(change.base_rel)) if change.base_rel else None
        spend.add("base", base_data)
        if head is not None and change.head_rel is not None:
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
            if head_data:
                head_plans.append(head_data)
            splits = split_changes(base_data, head_data, plan_file=path, base_rel=change.base_rel, config=config, root=root,
                                   base_tree=base.tree, changed=changed_files) if base_data is not None and head_data and change.base_rel else ()
            cards.append(plan_changes.card(change.kind, display, base_data, head_data))
            cards[-1]["fields"] += plan_changes.split_fields(splits)
            cards[-1]["fields"] += plan_changes.run_config_fields(base_data, head_data, read_base, read_head)
            reviews = approvals.for_plan(base_data, head_data)
            since = approvals.changed_since(repo, change.head_rel, head_data, read_head) if reviews is not None and head_data else None
            _run_diff_rules(
                result, base_data, PlanChange(change.kind, display, base_display, gone, splits), config, reviews,
                file=Path(os.path.join(cwd, display)), base_text=read_base, changed_since=since, history=history,
            )
            results.append(result)
            base_of[id(result)] = change.base_rel
        elif base_data is not None:  # deleted, or renamed out of PATHs: only PL704 applies
            where = scope.display(change.head_rel) if change.head_rel else (base_display or change.base_rel or "")
            head_data = _head_data(root, change.head_rel, config) if change.head_rel else None
            spend.add("head", head_data)
            cards.append(plan_changes.card(change.kind, where, base_data, head_data))
            result = FileResult(where, is_plan=True)
            _run_diff_rules(result, base_data, PlanChange(change.kind, where, base_display), config)
            results.append(result)

    # Plans the diff does not touch can still change verdict: their split files, the config or the catalog changed.
    policy_changed = policy_files(config, root, policy) & changed_files
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
    reported: list[FileResult] = []
    report = finish(
        results, config, other_names=other_names if "PL005" in config.rules else {}, other_commitments=commitments, reported=reported,
        changed_configs=_changed_training_configs(every_change, root), changed_root=root,
        vouch=lambda path: _was_a_plan(base.tree, path, root, config),
    )
    if policy is not None:
        reported += _quiet_run_configs(head_plans, root, config, {r.path for r in reported})
        review(report, policy, scope, root, config, reported, base_of, base_texts, read_base)
    report.notes.append(
        f"diff mode: {len(results) - len(relinted)} changed plan(s) between {base.hexsha[:12]} (merge-base of {rev} and HEAD) and the working tree"
        + (f"; {len(relinted)} unchanged plan(s) linted too because their split files, the config or the catalog changed" if relinted else "")
    )
    report.notes.extend(approvals.notes())
    report.changes = cards
    report.committed_spend = spend.to_dict(config.committed_limit)
    if spend.uncounted_head:
        recurring = (f"; {spend.uncounted_recurring} of them recurring, whose recurrence.budget.max_spend_per_month or currency is not valid (PL508/PL503)"
                     if spend.uncounted_recurring else "")
        report.notes.append(
            f"committed spend leaves out {spend.uncounted_head} approved or running plan(s) whose budget.max_spend or "
            f"budget.currency is not valid (PL502/PL503 say which){recurring}"
        )
    return report


def _head_data(root: str, rel: str, config: Config) -> dict | None:
    loaded = load_file(Path(root, *rel.split("/")), config.parser_limits())
    return loaded.data if not loaded.fatal and is_plan(loaded.data) else None


def _plans_of_changed_files(
    every_change: list[Change], changes: list[Change], scope: Scope, config: Config, base_tree, changed_files: set[str],
) -> list[Change]:
    """Plans under PATHs that did not change but whose run config or split data did: they are
    judged as changed plans (PL708 and the run rules must see a pull request that edits only the
    TOML file, PL710 one that edits only the grader's code, PL701/PL709 one that rewrites only a
    split file)."""
    taken = {rel for c in changes for rel in (c.head_rel, c.base_rel) if rel}
    # Not YAML (but a trainer's YAML config under configs/): a pull request that changes only plans
    # (the common one) reads no other plan here.
    others = {rel for rel in changed_files - taken if not rel.lower().endswith(YAML_SUFFIXES) or rel.startswith(TRAINER_CONFIGS)}
    if not others or not scope.existing:
        return []
    found: list[Change] = []
    for _, path, _ in discover(scope.existing, config):
        absolute = os.path.realpath(os.path.join(scope.cwd, path))
        rel = Path(os.path.relpath(absolute, scope.root)).as_posix()
        if rel in taken or rel.startswith("../"):
            continue
        loaded = load_file(Path(absolute), config.parser_limits())
        if loaded.fatal or not is_plan(loaded.data):
            continue
        watched = named_sources(loaded.data) | run_config_files(loaded.data, scope.root, base_tree)
        if not watched & others and any(rel.endswith(".py") for rel in others):
            watched |= trainer_code(loaded.data, Path(scope.root), config.parser_limits())  # a trainer's reward code (PL706's twin)
        if not watched & others:
            base_data = _base_plan(base_tree, rel, config)
            if base_data is None or not split_changes(base_data, loaded.data, plan_file=Path(absolute), base_rel=rel, config=config,
                                                      root=scope.root, base_tree=base_tree, changed=changed_files):
                continue
        found.append(Change("modified", rel, rel))
        taken.add(rel)
    return found


def _changed_training_configs(every_change: list[Change], root: str) -> dict[str, str]:
    """The training configs (`configs/training/**/*.toml`) the pull request adds ("added", also a new
    path by a rename) or changes ("modified"), by absolute path (as written and links resolved), for PL904."""
    found: dict[str, str] = {}
    prefix = "/".join(TRAINING_DIR) + "/"
    for change in every_change:
        rel = change.head_rel
        if not rel or not rel.startswith(prefix) or not rel.lower().endswith(".toml"):
            continue
        kind = "modified" if change.kind == "modified" else "added"
        absolute = os.path.join(root, *rel.split("/"))
        found[absolute] = found[os.path.realpath(absolute)] = kind
    return found


def _was_a_plan(base_tree, path: str, root: str, config: Config) -> bool:
    """Was the file at `path` (in the working tree) a plan at the base revision already? Only such a
    plan outside the linted paths may vouch for a run config (PL904): the pull request cannot add a decoy."""
    rel = os.path.relpath(os.path.realpath(path), root)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return False
    return _base_plan(base_tree, Path(rel).as_posix(), config) is not None


def _quiet_run_configs(plans: list[dict], root: str, config: Config, shown: set[str]) -> list[FileResult]:
    """A result holding the suppression comments of each run config the changed plans name that the run
    reported nothing in (no finding): their comments are listed too, when the pull request added them."""
    found: list[FileResult] = []
    for data in plans:
        run = data.get("run")
        keys = [key for key, _ in CONFIG_KEYS] + ["config", "script"]  # a trainer's config and launch script too
        for value in (run.get(key) for key in keys) if isinstance(run, dict) else ():
            path, _ = resolve_config(value, Path(root)) if isinstance(value, str) else (None, None)
            display = display_path(path) if path is not None else None
            if path is None or display is None or display in shown:
                continue
            shown.add(display)
            text, problem = read_text(path, config.max_file_size)
            if problem is None and text is not None and "planlint:" in text:
                result = FileResult(display, text=text)
                # A file's real comments only: TOML's, or a trainer's YAML or script's (never inside a quoted string).
                result.suppressions = supp.parse_toml(text, rule_code) if display.lower().endswith(".toml") else supp.parse(text, comment_free_spans(text, display), rule_code)
                found.append(result)
    return found


def run_config_files(data: Any, root: str, base_tree) -> set[str]:
    """Repository paths of every file the plan's run configs are or lead to: each path as written,
    and where its links lead, in the working tree and at the base (a change to any re-lints the plan)."""
    run = data.get("run") if isinstance(data, dict) else None
    found: set[str] = set()
    keys = [key for key, _ in CONFIG_KEYS] + ["config", "script"]  # a trainer's config and launch script too
    for value in (run.get(key) for key in keys) if isinstance(run, dict) else ():
        if not isinstance(value, str) or not value.strip():
            continue
        rel = posixpath.normpath(value.replace("\\", "/"))
        if rel.startswith(("/", "../")) or rel in ("..", "."):
            continue
        found.add(rel)
        real = os.path.relpath(os.path.realpath(os.path.join(root, *rel.split("/"))), root)
        if not (real == ".." or real.startswith(".." + os.sep) or os.path.isabs(real)):
            found.add(Path(real).as_posix())
        blob = tree_blob(base_tree, rel)
        if blob is not None:
            found.add(blob.path)
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


def _unchanged_plans(scope: Scope, config: Config, linted: set[str]):
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
