"""What a rule is: a code, a name, a severity, a docstring and a check."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Union

from planlint.core.positions import Route, Span

ERROR = "error"
WARNING = "warning"


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Replace:
    """A fix's change: the scalar at `route` becomes `value`.

    `value` is a `str` (written in the original's quoting style where it reads
    back as that string, else double-quoted) or a number (a `YamlInt` or
    `YamlFloat`, written as its source text). `quoted`: a string replacing a
    plain scalar is written double-quoted, as the plan format writes that
    value (a release: `2026.10` unquoted would be a number).
    """

    route: Route
    value: Any
    quoted: bool = False


@dataclass(frozen=True)
class Insert:
    """A fix's change: the key `route[-1]` with `value` is added to the mapping at `route[:-1]`.

    `beside`: a key of that mapping the new entry goes next to (in a flow
    mapping just before it; in a block mapping on the line after it, at its
    indentation).
    """

    route: Route
    value: Any
    beside: str


@dataclass(frozen=True)
class Fix:
    """A certain fix of one problem, as changes to the plan's data (symbolic, no positions).

    `--fix` (modes/edits.py) turns the changes into exact text edits at the
    loader's spans and keeps the fix only when the edited file reads back as
    the original data plus exactly these changes. `summary` is what `--fix`
    prints for it; `also`: other findings, (code, route), it resolves;
    `repin`: a grader it re-pins, (grader id, old version, new version), which
    the lint after `--fix` sees as `Services.repinned`.
    """

    summary: str
    changes: tuple[Union[Replace, Insert], ...]
    also: tuple[tuple[str, Route], ...] = ()
    repin: tuple[str, str, str] | None = None


#: What `Problem.fix` holds: a Fix; or, when working it out costs something (a
#: catalog or registry lookup), a function that returns one (or None) and that
#: only `--fix` calls, so a lint without --fix never pays for it.
FixOrLater = Union[Fix, Callable[[], Union[Fix, None]]]


@dataclass(frozen=True)
class Problem:
    """What a rule reports: where (a route) and what. The engine does the rest.

    `missing`: the key at `route` is absent; point at the mapping that should
    hold it. `at_key`: point at the key itself rather than its value.
    `code`: for checks that report several codes (file-level and data rules).
    `severity`: for a rule whose findings differ in weight (PL105/PL106 report
    a name the catalog does not know as a warning); a per-code `severity:` in
    the config still wins.
    `path`: for repo-level rules, which linted file the problem is in.
    `span`: for checks about the text rather than the data (a suppression
    comment has no route): where, directly.
    `document`: the finding is in another file the plan names (a run config,
    `run_config.TomlDocument`): the route is into that file's data, and the
    engine places it with that file's positions, under that file's path.
    `fix`: how `--fix` resolves it with certainty (a `Fix`, or a function
    returning one or None); only rules registered with `fixable=True` may
    attach one (tests/test_fix_declared.py checks both ways).
    """

    route: Route
    message: str
    missing: bool = False
    at_key: bool = False
    code: str | None = None
    severity: str | None = None
    path: str | None = None
    span: Span | None = None
    document: Any = None
    fix: FixOrLater | None = field(default=None, compare=False)


def fix_of(problem: Problem) -> Fix | None:
    """The problem's fix, worked out now if the rule deferred it."""
    fix = problem.fix
    if fix is None or isinstance(fix, Fix):
        return fix
    return fix()


def lookup(data: Any, route: tuple) -> Any:
    """The value at `route` in `data`, or MISSING when a key is absent or a step is not a container."""
    node: Any = data
    for part in route:
        if isinstance(part, int):
            if not isinstance(node, list) or not -len(node) <= part < len(node):
                return MISSING
            node = node[part]
        elif isinstance(node, dict):
            node = node.get(part, MISSING)  # one hash lookup, not `in` then `[]`; no plan value is MISSING
            if node is MISSING:
                return MISSING
        else:
            return MISSING
    return node


_STRINGS = "_plan_strings"


def plan_strings(ctx: "PlanContext") -> str:
    """Every string key and value of the plan (an aliased collection once), joined by NUL.

    A rule that reports strings holding some text (a credential's prefix, a
    placeholder word) searches this first, in one pass at C speed, and walks
    the plan with routes only when the text is there. Made once per plan.
    """
    joined = ctx.memo.get(_STRINGS)
    if joined is None:
        found: list[str] = []
        add = found.append
        data = ctx.data
        stack = [data] if isinstance(data, (dict, list)) else []
        if isinstance(data, str):
            add(data)
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, dict):
                for key, value in node.items():
                    if isinstance(key, str):
                        add(key)
                    if isinstance(value, str):
                        add(value)
                    elif isinstance(value, (dict, list)):
                        stack.append(value)
            else:
                for value in node:
                    if isinstance(value, str):
                        add(value)
                    elif isinstance(value, (dict, list)):
                        stack.append(value)
        joined = ctx.memo[_STRINGS] = "\x00".join(found)
    return joined


@dataclass(frozen=True)
class Note:
    """What a rule yields besides problems: not a finding, something it could not check.

    `skipped`: the text is a split path the data checks did not find in this
    checkout (the engine makes one note of them for the whole run); otherwise
    the text is a note of its own.
    """

    text: str
    skipped: bool = False


#: How the result cache treats a service (the `cache` metadata of each field of
#: Services): NEUTRAL changes no finding; CATALOG is keyed by the catalog as the
#: rules see it; a field without one makes a run that sets it uncacheable.
NEUTRAL = "neutral"
CATALOG = "catalog"


@dataclass(frozen=True)
class Services:
    """What a run hands every rule besides the plan and the config: typed, read-only, one per run.

    The result cache keys on these fields as their `cache` metadata says
    (engine.parallel.services_fingerprint), so a new field cannot be forgotten there.
    """

    publications: Any = field(default=None, metadata={"cache": CATALOG})  # services.publications.Publications: catalog, registry
    cache_dir: str | None = field(default=None, metadata={"cache": NEUTRAL})  # where the data checks keep their results
    repinned: Mapping[str, Mapping[str, tuple[str, str]]] = field(default_factory=dict)  # --fix: path -> grader id -> (old, new)


@dataclass
class PlanContext:
    """One plan as the rules see it: its data, the config, the run's services, and what
    the engine knows about this plan (its file; in diff mode its base version)."""

    data: dict
    path: str
    config: Any = None
    services: Services = field(default_factory=Services)
    file: Path | None = None  # the plan's file: data rules look for split paths beside it
    base: Any = None  # diff mode: the plan's data at the merge-base, or None
    change: Any = None  # diff mode: a rules.diff.PlanChange
    reviews: Any = None  # diff mode, PL707: the pull request's reviews, when the run is for one
    changed_since: Callable[[str], Any] | None = None  # diff mode, PL707: commit -> what of the approval subject changed since (or why unknown)
    base_text: Callable[[str], str | None] | None = None  # diff mode: reads a file of the base revision (PL708)
    history: Any = None  # diff mode: the repository's history (modes.diff_git.History: PL902's pinned commit)
    policy: Any = None  # diff mode, PL705: a rules.policy.PolicyChange
    memo: dict = field(default_factory=dict, repr=False)  # work rules of one plan share (the data checks run once for three)

    def get(self, *route: Any) -> Any:
        """The value at `route`, or MISSING when a key is absent or a step is not a container."""
        return lookup(self.data, route)

    def mapping(self, *route: Any) -> dict | None:
        value = lookup(self.data, route)
        return value if isinstance(value, dict) else None

    def graders(self) -> Iterator[tuple[int, dict]]:
        graders = self.data.get("graders") if isinstance(self.data, dict) else None
        if isinstance(graders, list):
            for index, grader in enumerate(graders):
                if isinstance(grader, dict):
                    yield index, grader


@dataclass(frozen=True)
class NamedPlan:
    """A linted plan as repo-level rules see it: its file, its metadata.name, and what
    the engine kept of it for them (the plan's data is gone by then)."""

    path: str
    name: str | None
    committed: tuple[str, float] | None = None  # (currency, max_spend) when approved or running with a valid cap (PL507)
    repo_root: str | None = None  # the plan's repository (PL904)
    run_configs: tuple[str, ...] = ()  # the training configs it names or reports in, as written and real (PL904)
    per_month: bool = False  # committed is a recurring plan's per-month cap (recurrence.budget.max_spend_per_month)


@dataclass
class RepoContext:
    """Every plan of the run, for rules that compare plans with each other (scope "repo").

    `others`: plans that are not linted in this run but still count
    (metadata.name -> path: diff mode's unchanged plans, or the repository's
    other plans when files are named).
    `other_commitments`: (currency, max_spend) of approved and running plans
    that are not linted but count for the committed spend (PL507), in order.
    `named_elsewhere(root, candidates)`: the real and as-written paths of those
    `candidates` (training configs) that the repository's plans not linted in
    this run name, counting only plans without errors of their own (PL904); the
    engine reads those plans, as only it can find them.
    `changed_configs`, `changed_root`: diff mode's training configs the pull
    request adds ("added") or changes ("modified"), by absolute path, in the
    repository at `changed_root` (PL904 judges them even when no plan is linted).
    """

    plans: list[NamedPlan]
    others: dict[str, str] = field(default_factory=dict)
    config: Any = None
    other_commitments: list[tuple[str, float]] = field(default_factory=list)
    named_elsewhere: Callable[[str, list[Path]], set[str]] | None = None
    changed_configs: dict[str, str] = field(default_factory=dict)
    changed_root: str | None = None


@dataclass
class SuppressionContext:
    """One file's suppression comments, after every other finding of the run was
    matched against them (scope "file"; `judged(code)`: did the rule with that code
    run on this file, so that its absence means the suppression is not needed?)."""

    path: str
    suppressions: list
    judged: Callable[[str], bool]
    config: Any = None


_SECTION = re.compile(r"^(Example \(fails\)|Example \(passes\)):\s*$", re.M)


@dataclass
class Rule:
    code: str
    name: str
    severity: str
    check: Callable[[PlanContext], Iterator[Problem]]
    doc: str
    fixable: bool = False  # its problems may carry a Problem.fix (`planlint rules` and the docs say so)
    scope: str = "plan"  # plan | file | repo | diff | data | files | policy

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0].strip()

    def sections(self) -> dict[str, str]:
        """Docstring parts: 'summary', 'rationale', 'fails', 'passes'."""
        import textwrap

        doc = textwrap.dedent("\n".join(self.doc.splitlines()[1:])) if "\n" in self.doc else ""
        parts = _SECTION.split(doc)
        out = {"summary": self.summary, "rationale": parts[0].strip(), "fails": "", "passes": ""}
        for title, body in zip(parts[1::2], parts[2::2]):
            key = "fails" if "fails" in title else "passes"
            out[key] = textwrap.dedent(body).strip("\n") + "\n"
        return out


def rule(code: str, name: str, severity: str, *, fixable: bool = False, scope: str = "plan"):
    """Turn a generator function into a Rule; its docstring is its documentation."""

    def wrap(func: Callable[[PlanContext], Iterator[Problem]]) -> Rule:
        return Rule(code, name, severity, func, func.__doc__ or "", fixable, scope)

    return wrap


def no_check(ctx: PlanContext) -> Iterator[Problem]:
    """Rules the engine emits itself (file-level) have no per-plan check."""
    return iter(())
