"""What a pull request changes, as a reviewer reads it: one change card per plan, and committed spend.

Diff mode (`planlint.modes.diff`) hands each changed plan's base and head data
here. A card holds the plan's status transition and each field that matters
to a reviewer, old -> new:

    {"path": "plans/retail.yaml", "plan": "retail-refund-window", "change": "changed",
     "status": ["draft", "approved"],
     "fields": [{"yaml_path": "budget.max_spend", "old": 600, "new": 1600}]}

`change` is added, changed, removed or renamed. A field that one side lacks
is null on that side (an input that went missing, or was supplied). Values
are compared as data (`rules.diff.same`), so layout, quoting and key order
are not changes. Committed spend is the sum of `max_spend` over approved and
running plans, per currency, at the base and at head; a recurring plan counts
at its per-month cap, and its card carries its month (`recurring`: runs a
month, the per-run and per-month caps, base and head).

Everything here is plain data: the JSON report carries it, and the Markdown
summary and pull-request comment are rendered from that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from planlint.core.model import is_recurring
from planlint.core.positions import yaml_path
from planlint.core.yaml_values import YamlFloat, YamlInt, scalar_text
from planlint.rules.budget import committed, uncounted
from planlint.rules.diff import same
from planlint.rules.recurrence import monthly_figures
from planlint.rules.secrets import redact
from planlint.rules.verdict import card_verdict
from planlint.services.run_config import parse as parse_toml
from planlint.services.trainer_configs import TRAINERS, parse_config, parse_script

# What a reviewer must see, in the order a plan is read. Mappings are shown leaf by leaf.
WATCHED: tuple[tuple, ...] = (
    ("method",),
    ("base_model", "name"),
    ("base_model", "revision"),
    ("dataset", "name"),
    ("dataset", "release"),
    ("splits", "train"),
    ("splits", "eval"),
    ("splits", "boundary"),
    ("graders",),  # each grader's version, matched by id
    ("baseline", "status"),
    ("baseline", "result"),
    ("decision", "metric"),
    ("decision", "split"),
    ("decision", "target_improvement"),
    ("decision", "stopping"),
    ("decision", "alpha"),  # the test the eval is sized with (PL611): pre-registered like the rest (PL711)
    ("decision", "power"),
    ("decision", "discordance"),
    ("outcome",),  # a completed plan's result; the card's "verdict" says what the numbers give (PL615)
    ("recurrence",),  # a recurring plan's schedule, source, admission, caps and stop rule, leaf by leaf
    ("budget", "currency"),
    ("budget", "max_spend"),
    ("budget", "estimated_cost"),
    ("budget", "approved_by"),
    ("missing_inputs",),  # what the plan still needs (the planning guide's "missing inputs"), a list of strings
    ("run",),  # which submit configs the run starts from; their contents follow (run_config_fields)
)
KINDS = {"added": "added", "modified": "changed", "deleted": "removed", "renamed": "renamed"}
_MAX_TEXT = 1000  # characters of one value in a card
_ABSENT = object()


def _status(data: Any) -> str | None:
    meta = data.get("metadata") if isinstance(data, dict) else None
    status = meta.get("status") if isinstance(meta, dict) else None
    return value_of(status) if status is not None else None


def _name(data: Any) -> str | None:
    meta = data.get("metadata") if isinstance(data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


_REFERENCES = ("release", "version", "revision", "name")  # identifiers, even when written as numbers


def value_of(value: Any, reference: bool = False) -> Any:
    """A plan scalar as JSON data, strings redacted and clipped.

    A `reference` (a release, version, revision) that YAML read as a number
    is the text it was written as (`release: 2026.10` is "2026.10", never
    2026.1); amounts stay numbers.
    """
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (YamlInt, YamlFloat)) and not reference:
        return int(value) if isinstance(value, YamlInt) else float(value)
    if isinstance(value, (YamlInt, YamlFloat)):
        return scalar_text(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return [value_of(v) for v in value[:50]]
    if isinstance(value, (dict, list)):
        return f"({'a mapping' if isinstance(value, dict) else 'a list'})"
    text = redact(str(value))  # a credential pasted into a plan is not repeated in the pull request
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _leaves(value: Any, route: tuple, out: dict, budget: list[int]) -> None:
    """Scalar leaves under `value` (lists of scalars are one leaf), at most budget[0] of them."""
    stack = [(value, route)]
    while stack and budget[0] > 0:
        node, at = stack.pop()
        if isinstance(node, dict) and node:
            stack.extend(reversed([(v, at + (k,)) for k, v in node.items() if isinstance(k, str)]))
        elif isinstance(node, list) and any(isinstance(v, (dict, list)) for v in node):
            stack.extend(reversed([(v, at + (i,)) for i, v in enumerate(node)]))
        else:
            out[at] = node
            budget[0] -= 1


def _lookup(data: Any, route: tuple) -> Any:
    for part in route:
        if isinstance(part, int):
            if not isinstance(data, list) or not 0 <= part < len(data):
                return _ABSENT
        elif not isinstance(data, dict) or part not in data:
            return _ABSENT
        data = data[part]
    return data


def _graders(data: Any) -> dict[str, tuple[int, Any]]:
    """Grader id (or #index when it has none) -> (index, version)."""
    graders = data.get("graders") if isinstance(data, dict) else None
    out: dict[str, tuple[int, Any]] = {}
    if not isinstance(graders, list):
        return out
    for index, grader in enumerate(graders):
        if not isinstance(grader, dict):
            continue
        gid = grader.get("id")
        key = gid if isinstance(gid, str) else f"#{index}"
        out.setdefault(key, (index, grader.get("version", _ABSENT)))
    return out


def changed_fields(base: Any, head: Any, limit: int = 500) -> list[dict]:
    """[{"yaml_path", "old", "new"}] for each watched field that differs; null where a side lacks it."""
    fields: list[dict] = []
    budget = [limit * 4]

    def add(route: tuple, old: Any, new: Any) -> None:
        if len(fields) >= limit:
            return
        if old is _ABSENT and new is _ABSENT:
            return
        if old is not _ABSENT and new is not _ABSENT and same(old, new):
            return
        reference = isinstance(route[-1], str) and route[-1] in _REFERENCES
        fields.append({
            "yaml_path": yaml_path(route),
            "old": None if old is _ABSENT else value_of(old, reference),
            "new": None if new is _ABSENT else value_of(new, reference),
        })

    for watched in WATCHED:
        if watched == ("graders",):
            old_g, new_g = _graders(base), _graders(head)
            for gid, (index, version) in new_g.items():
                old = old_g.get(gid, (None, _ABSENT))[1]
                add(("graders", index, "version"), old, version)
            for gid, (index, version) in old_g.items():
                if gid not in new_g:
                    add(("graders", index, "version"), version, _ABSENT)
            continue
        old, new = _lookup(base, watched), _lookup(head, watched)
        if not isinstance(old, dict) and not isinstance(new, dict):
            add(watched, old, new)
            continue
        old_leaves: dict = {}
        new_leaves: dict = {}
        if old is not _ABSENT:
            _leaves(old, watched, old_leaves, budget)
        if new is not _ABSENT:
            _leaves(new, watched, new_leaves, budget)
        for route, value in new_leaves.items():
            add(route, old_leaves.get(route, _ABSENT), value)
        for route, value in old_leaves.items():
            if route not in new_leaves:
                add(route, value, _ABSENT)
    return fields


def card(kind: str, path: str, base: Any, head: Any) -> dict:
    """The change card of one plan. `kind`: diff mode's added | modified | renamed | deleted.

    A plan that is completed or records an outcome at head also gets `verdict`:
    {"recorded", "computed"} (PL615), so the reviewer sees what the result claims
    and what its numbers give."""
    base = base if isinstance(base, dict) else None
    head = head if isinstance(head, dict) else None
    out: dict[str, Any] = {
        "path": path,
        "plan": _name(head) or _name(base),
        "change": KINDS.get(kind, kind),
        "status": [_status(base), _status(head)],
        "fields": changed_fields(base or {}, head or {}),
    }
    verdict = card_verdict(head)
    if verdict is not None:
        out["verdict"] = verdict
    if is_recurring(base) or is_recurring(head):  # per-month figures, only on a recurring plan's card
        out["recurring"] = [_month(base), _month(head)]
    return out


def split_fields(splits) -> list[dict]:
    """A field per split whose data changed under the same path (diff mode's `rules.diff.SplitChange`s):
    {"yaml_path": "splits.eval.path: data/eval.jsonl (data)", "old": "1 file", "new": "1 file: 15 rows removed and 0 added",
    "rows_added": 0, "rows_removed": 15}; the row counts are null where the files were not read (not text)."""
    fields = []
    for change in splits:
        fields.append({
            "yaml_path": f"splits.{change.split}.path: {value_of(change.path)} (data)",
            "old": _files(change.files_base),
            "new": f"{_files(change.files_head)}: {change.words()}",
            "rows_added": change.added,
            "rows_removed": change.removed,
        })
    return fields


def _files(count: int) -> str:
    return f"{count} file{'' if count == 1 else 's'}"


def _month(data: Any) -> dict | None:
    figures = monthly_figures(data)
    if figures is not None and figures["schedule"] is not None:
        figures["schedule"] = value_of(figures["schedule"])
    return figures


def _run_config(read, path: Any, key: str = "training_config", trainer: Any = None) -> dict | None:
    """The data of a run config at a revision: an Osmosis TOML, a trainer's YAML, or its launch script's overrides."""
    if not isinstance(path, str) or not path.strip():
        return None
    text = read(path)
    if text is None:
        return None
    if key == "config" and trainer in TRAINERS:
        return parse_config(text, path, trainer).data
    if key == "script" and trainer in TRAINERS:
        return parse_script(text, path, trainer).document.data
    return parse_toml(text, path, "training").data


def run_config_fields(base: Any, head: Any, read_base, read_head, limit: int = 200) -> list[dict]:
    """The fields of the run configs the plan names (`run.training_config`, `run.eval_config`; a trainer's
    `run.config` and the overrides of its `run.script`),
    beside the plan's own: {"yaml_path": "configs/training/x.toml: training.lr", "old", "new"}.

    `read_base(path)` / `read_head(path)`: the text of a repository file at
    the base revision / in the working tree, or None. Each side reads the
    config its own plan names, so a plan that points to another file shows
    what the run would now start from. Values are redacted like the plan's.
    """
    fields: list[dict] = []
    for key in ("training_config", "eval_config", "config", "script"):
        old_path, new_path = _lookup(base, ("run", key)), _lookup(head, ("run", key))
        old = _run_config(read_base, old_path, key, _lookup(base, ("run", "trainer")))
        new = _run_config(read_head, new_path, key, _lookup(head, ("run", "trainer")))
        if old is None and new is None:
            continue
        shown = new_path if isinstance(new_path, str) else old_path
        reference = key in ("training_config", "eval_config")  # a TOML number is one; a YAML number (YamlInt) too, not its text
        budget = [limit * 4]
        old_leaves: dict = {}
        new_leaves: dict = {}
        if old is not None:
            _leaves(old, (), old_leaves, budget)
        if new is not None:
            _leaves(new, (), new_leaves, budget)
        routes = list(new_leaves) + [route for route in old_leaves if route not in new_leaves]
        for route in routes:
            before, after = old_leaves.get(route, _ABSENT), new_leaves.get(route, _ABSENT)
            if before is not _ABSENT and after is not _ABSENT and same(before, after):
                continue
            if len(fields) >= limit:
                return fields
            fields.append({
                "yaml_path": f"{shown}: {yaml_path(route)}",
                "old": None if before is _ABSENT else value_of(before, reference),
                "new": None if after is _ABSENT else value_of(after, reference),
            })
    return fields


# --------------------------------------------------------------------------- committed spend


@dataclass
class CommittedSpend:
    """Sums of max_spend over approved and running plans, per currency, at the base and at head."""

    base: dict[str, float] = field(default_factory=dict)
    head: dict[str, float] = field(default_factory=dict)
    uncounted_head: int = 0  # approved/running plans at head whose cap or currency is not valid
    uncounted_recurring: int = 0  # of those, recurring plans (their per-month cap or its currency)
    # the part of base/head that recurring plans commit, at their per-month caps
    per_month: dict[str, dict[str, float]] = field(default_factory=lambda: {"base": {}, "head": {}})

    def add(self, side: str, data: Any) -> None:
        commitment = committed(data)
        if commitment is not None:
            totals = self.base if side == "base" else self.head
            totals[commitment[0]] = totals.get(commitment[0], 0.0) + commitment[1]
            if is_recurring(data):
                monthly = self.per_month[side]
                monthly[commitment[0]] = monthly.get(commitment[0], 0.0) + commitment[1]
        elif side == "head" and uncounted(data):
            self.uncounted_head += 1
            self.uncounted_recurring += is_recurring(data)

    def to_dict(self, limits: dict[str, float] | None = None) -> dict:
        """{currency: {"base", "head", "delta"[, "per_month"][, "limit"]}}, currencies in alphabetical order.

        `per_month` ({"base", "head"}): how much of each side recurring plans
        commit (at their per-month caps); only where a recurring plan counts.
        """
        out: dict[str, dict] = {}
        for currency in sorted(set(self.base) | set(self.head) | set(limits or {})):
            base, head = self.base.get(currency, 0.0), self.head.get(currency, 0.0)
            entry: dict[str, Any] = {"base": _number(base), "head": _number(head), "delta": _number(head - base)}
            if any(currency in self.per_month[side] for side in ("base", "head")):
                entry["per_month"] = {side: _number(self.per_month[side].get(currency, 0.0)) for side in ("base", "head")}
            if limits and currency in limits:
                entry["limit"] = _number(limits[currency])
            out[currency] = entry
        return out


def _number(amount: float) -> int | float:
    amount = round(amount, 2)
    return int(amount) if float(amount).is_integer() else amount
