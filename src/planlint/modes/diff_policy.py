"""Diff mode's policy and review: the base revision's configuration, and what a pull request brings.

A pull request is judged by the configuration and catalog of its merge-base
(`base_policy`, read from git objects), never by the ones it edits. After
the run, `review` reports what the pull request changes in that policy:
PL705 at each changed key, the catalog entries and the suppression comments
it adds (`Report.review`). `Approvals` reads the pull request's reviews for
PL707, once and only when a plan's change needs an approval, with the base
revision's `approvers` map.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from planlint.core import suppressions as supp
from planlint.core.config import Config, ConfigError, approvers_settings, build_config, find_config, parse_approvers, raw_settings, settings_from_text
from planlint.core.loader import decode, load_file, load_text
from planlint.core.model import FileResult, Report, UsageError, is_plan
from planlint.core.positions import START, Span
from planlint.core.reviews import ReviewState
from planlint.engine.discovery import discover
from planlint.engine.lint import make_finding, place
from planlint.modes.diff_git import (
    FETCH_HINT,
    Scope,
    base_commit,
    base_text,
    check_rev,
    commit_of,
    git_stderr,
    import_git,
    is_shallow,
    open_repo,
    tree_text,
)
from planlint.rules import RULES, PlanContext, rule_names
from planlint.rules.approvals import approval_needed, approval_subject, subject_changes
from planlint.rules.policy import PolicyChange
from planlint.services.catalog import CatalogError, catalog_from_text


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
    git = import_git()
    repo = open_repo(git, cwd)
    try:
        base = base_commit(repo, git, base_rev)
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
                base_catalog = base_text(base.tree, rel, config.max_file_size) or ""
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
        raise UsageError(f"git failed: {git_stderr(exc)}") from None
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
        text = base_text(tree, rel, 1 << 20)
        return (rel, text) if text is not None else None
    start = _rel(cwd, root)
    parts = [] if start in (None, ".") else start.split("/")
    while True:
        for name in (".planlint.yaml", "pyproject.toml"):
            rel = "/".join(parts + [name])
            text = base_text(tree, rel, 1 << 20)
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


# --------------------------------------------------------------------------- the pull request's reviews (PL707)


class Approvals:
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

    def changed_since(self, repo, rel: str, head: dict, read_head):
        """commit -> what of the plan's approval subject differs between that commit and the head
        (`rules.approvals.subject_changes`), or why that cannot be told: for PL707's stale approvals.

        The plan is read at `rel` (its path at head) from the commit's git objects, and the
        run configs it names there with links followed inside that commit's tree; the head's
        from the working tree (`read_head`). Each commit is read once.
        """
        head_subject = approval_subject(head, read_head)
        answers: dict[str, object] = {}

        def changed(commit_id: str):
            if commit_id not in answers:
                answers[commit_id] = self._changed(repo, commit_id, rel, head_subject)
            return answers[commit_id]

        return changed

    def _changed(self, repo, commit_id: str, rel: str, head_subject: dict):
        commit = commit_of(repo, commit_id)
        if commit is None:
            where = f" ({FETCH_HINT})" if is_shallow(repo) else ""
            return f"is not in this clone{where}, so what it approved cannot be compared with the head"
        limit = self.config.max_file_size
        text = tree_text(commit.tree, rel, limit)
        loaded = load_text(text, self.config.parser_limits()) if text is not None else None
        if loaded is None or loaded.fatal or not is_plan(loaded.data):
            return f"has no readable plan at {rel}, so what it approved cannot be compared with the head"
        return subject_changes(approval_subject(loaded.data, lambda path: tree_text(commit.tree, path, limit)), head_subject)

    def notes(self) -> list[str]:
        if "PL707" not in self.config.rules:
            return []
        if self.pull_request is None:
            return [
                "PL707 (approval-not-verified) did not run: this is no GitHub pull request run ($GITHUB_EVENT_PATH holds no "
                "pull_request or pull_request_review event), so no budget.approved_by was checked against the pull request's reviews"
            ]
        return list(self.base_notes)


def base_approvers(base_tree, config: Config, root: str, cwd: str) -> tuple[dict[str, list[str]], list[str]]:
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
        if why is not None or raw is None:
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
    if problem is not None or text is None:
        return None, "not UTF-8"
    loaded = load_text(text)
    if loaded.problems or (loaded.data is not None and not isinstance(loaded.data, dict)):
        return None, "not a YAML mapping"
    return loaded.data or {}, None


# --------------------------------------------------------------------------- what the PR changes in policy


def review(
    report: Report, policy: Policy, scope: Scope, root: str, config: Config, results: list[FileResult], base_of: dict, base_texts: dict,
    read_base=None,
) -> None:
    """PL705 findings, and the catalog entries and suppression comments the pull request adds.

    `results`: every file reported on (plans, and the run configs they name or PL904 reports);
    `read_base(path)`: a repository file's text at the base, for the run configs' earlier comments.
    """
    if "PL705" in config.rules:
        _policy_findings(report, policy, scope, root, config)
    report.review["catalog_added"] = _catalog_added(policy, root, scope)
    report.review["suppressions_added"] = _suppressions_added(results, base_of, base_texts, root, read_base)


def _policy_findings(report: Report, policy: Policy, scope: Scope, root: str, config: Config) -> None:
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
    found: set[tuple[str, str, str]] = set()
    for section in ("datasets", "graders"):
        for name, values in (getattr(catalog, section) or {}).items():
            found.update((section, str(name), value) for value in values)
    return found


def _catalog_added(policy: Policy, root: str, scope: Scope) -> list[dict]:
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


def _suppressions_added(results: list[FileResult], base_of: dict, base_texts: dict, root: str, read_base=None) -> list[dict]:
    """Suppression comments in the changed plans and the run configs reported on that their base
    versions did not have (same kind, codes and reason)."""
    added: list[dict] = []
    for result in results:
        if not result.suppressions:
            continue
        toml = result.path.lower().endswith(".toml")
        if toml:  # a run config: its text at the base, where the same path was (links followed)
            rel = _rel(os.path.abspath(result.path), root)
            base_text = read_base(rel) if rel is not None and read_base is not None else None
            earlier = supp.parse_toml(base_text) if base_text else []
        else:
            base_rel = base_of.get(id(result))
            base_text = base_texts.get(base_rel) if base_rel else None
            earlier = supp.parse(base_text) if base_text else []
        before = Counter((s.kind, tuple(s.codes), s.reason) for s in earlier)
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


def policy_files(config: Config, root: str, policy: Policy | None) -> set[str]:
    """Repo-relative paths of the files that set policy for every plan: the config files and catalogs (base and head)."""
    found = set(policy.files) if policy is not None else set()
    for path in (config.source, config.catalog):
        if path is None:
            continue
        rel = os.path.relpath(os.path.abspath(path), root)
        if rel != ".." and not rel.startswith(".." + os.sep) and not os.path.isabs(rel):
            found.add(Path(rel).as_posix())
    return found
