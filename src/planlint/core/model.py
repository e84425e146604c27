"""The results of a lint and what makes a file a plan.

`Finding` is one problem at one place; `FileResult` is everything one file
produced (findings, suppressions, notes, the data for repo-level and diff
rules); `Report` is a whole run, what every output format renders.
Every layer above core speaks these types.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from planlint.core.positions import Positions, Span

PLAN_API_VERSION = "planlint/v1"
PLAN_KIND = "ExperimentPlan"


class UsageError(Exception):
    """Bad paths or arguments: exit status 2."""


def is_plan(data: Any) -> bool:
    return isinstance(data, dict) and data.get("apiVersion") == PLAN_API_VERSION and data.get("kind") == PLAN_KIND


def is_recurring(data: Any) -> bool:
    """A plan that runs on a schedule: its `recurrence` is a mapping (docs/plan-format.md, "Recurring plans")."""
    return isinstance(data, dict) and isinstance(data.get("recurrence"), dict)


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    yaml_path: str

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.yaml_path, self.message)


@dataclass
class FileResult:
    path: str
    is_plan: bool = False
    findings: list[Finding] = field(default_factory=list)
    suppressions: list = field(default_factory=list)
    plan_name: str | None = None
    name_span: Span | None = None
    text: str | None = None
    notes: list[str] = field(default_factory=list)  # not findings: e.g. rows a data check could not read
    data_skipped: list[str] = field(default_factory=list)  # split paths not found locally
    data: Any = None  # the plan's data, for repo-level and diff rules
    positions: Positions | None = None
    diff_checked: bool = False  # diff rules ran against a base version (diff mode)
    committed_currency: str | None = None  # approved/running with a valid cap: what it commits (PL507)
    committed_amount: float | None = None
    spend_span: Span | None = None  # where the committed cap is (budget.max_spend; a recurring plan's max_spend_per_month)
    committed_per_month: bool = False  # the committed amount is a recurring plan's per-month cap
    uncounted: bool = False  # approved/running, but its cap or currency is not valid
    missing_inputs: list[str] = field(default_factory=list)  # the plan's `missing_inputs`, for the Markdown summary
    attached: list["FileResult"] = field(default_factory=list)  # other files the plan names (run configs), with their findings
    repo_root: str | None = None  # the plan's repository (PL904)
    run_configs: list[str] = field(default_factory=list)  # the training configs the plan names, as written and real (PL904)
    status: str | None = None  # the plan's metadata.status, when a string: severities by status for the repo-level rules


@dataclass
class Report:
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # path -> text, for excerpts
    paths: list[str] = field(default_factory=list)  # every file checked, in order
    # Diff mode only (None otherwise): what the pull request changes, as the JSON report gives it.
    changes: list[dict] | None = None  # one card per plan: path, plan, change, status, fields
    committed_spend: dict | None = None  # currency -> {base, head, delta[, limit]}
    missing_inputs: dict[str, list[str]] = field(default_factory=dict)  # path -> what the plan still needs
    # diff mode: what the pull request adds that a reviewer must see ("catalog_added", "suppressions_added")
    review: dict = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")
