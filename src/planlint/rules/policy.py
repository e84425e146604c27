"""PL705: the pull request changes planlint's own configuration.

Runs only in diff mode (`--diff-base REV`). Plans there are judged by the
configuration of the merge-base, not by the one the pull request brings:
otherwise a PR could add a bad plan and, in the same change, `ignore: [PL]`.
The change itself is reported here, one finding per changed setting, at its
key in the configuration file of the head, saying what it would do once
merged. Diff mode (`planlint.modes.diff`) hands the rule:

* `ctx.data`: the settings at head (the `.planlint.yaml` mapping or the
  `[tool.planlint]` table; empty when the PR removed the configuration);
* `ctx.base`: the settings at the merge-base (empty when none);
* `ctx.policy`: a `PolicyChange`, what the settings are judged by (both
  configurations, the plans a new `exclude` could hide, the rule registry).

Docstring examples show the configuration file: `# base` is committed at the
base revision, `# head` in the pull request.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from planlint.core.messages import show
from planlint.rules.base import WARNING, PlanContext, Problem, Rule, rule
from planlint.rules.diff import same

if TYPE_CHECKING:
    from planlint.core.config import Config


@dataclass(frozen=True)
class PolicyChange:
    """What PL705 judges a changed configuration by (diff mode builds it: `PlanContext.policy`)."""

    base_config: Config  # the merge-base's, which this run judged the plans by
    head_config: Config  # the pull request's, once merged
    plan_files: tuple[tuple[str, Path], ...]  # (display path, path) of the plans under the linted paths: what a new `exclude` would hide
    rules: Mapping[str, Rule]  # the rule registry: what `select`, `ignore` and `severity` would switch

_NESTED = ("severity", "max_spend_limit", "registry", "data", "limits")
_JUDGED = "this run judged the plans by the base revision's configuration"


def _value(value: Any) -> str:
    if isinstance(value, (dict, list)):
        import json

        try:
            text = json.dumps(value, sort_keys=True, default=str)
        except (TypeError, ValueError):
            text = "a mapping" if isinstance(value, dict) else "a list"
        return show(text, 120)
    return show(value, 120)


def _codes(codes: list[str], limit: int = 8) -> str:
    shown = ", ".join(codes[:limit])
    return shown + (f" and {len(codes) - limit} more" if len(codes) > limit else "")


def _switches(rules: Mapping[str, Rule], base_config, head_config) -> str:
    base, head = base_config.resolve(rules), head_config.resolve(rules)  # which rules each would run
    off = [code for code in rules if code in base and code not in head]
    on = [code for code in rules if code in head and code not in base]
    parts = []
    if off and not head.enabled:
        parts.append(f"turn off every rule ({len(off)} now on), so no finding would be reported")
    elif off:
        parts.append(f"turn off {len(off)} rule{'s' if len(off) != 1 else ''} ({_codes(off)}), whose findings would no longer be reported")
    if on:
        parts.append(f"turn on {len(on)} rule{'s' if len(on) != 1 else ''} ({_codes(on)})")
    return " and ".join(parts) or "not change which rules run"


def _severity(rules: Mapping[str, Rule], code: str, old: Any, new: Any) -> str:
    default = rules[code].severity if code in rules else None
    name = f"{code} ({rules[code].name})" if code in rules else code
    if isinstance(old, dict) or isinstance(new, dict):  # by plan status: {draft: warning}
        return f"set the severity of {name} from {_value(old if old is not None else default)} to {_value(new if new is not None else default)} (by plan status)"
    before = old if isinstance(old, str) else default
    after = new if isinstance(new, str) else default
    if before == "error" and after == "warning":
        return f"downgrade {name} from error to warning: its findings would no longer fail the check"
    if before == "warning" and after == "error":
        return f"make {name} an error: its findings would fail the check"
    return f"set the severity of {name} from {_value(before)} to {_value(after)}"


def _excluded(ctx: PlanContext, base_config, head_config) -> str:
    plan_files = ctx.policy.plan_files if ctx.policy is not None else ()
    hidden = [display for display, path in plan_files if head_config.excluded(path) and not base_config.excluded(path)]
    if not hidden:
        return "exclude no plan that is checked now"
    return f"stop checking {len(hidden)} plan file{'s' if len(hidden) != 1 else ''} ({_codes([show(h, 80) for h in hidden], 5)})"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _effect(ctx: PlanContext, key: str, sub: str | None, old: Any, new: Any, missing: object) -> str:
    policy: PolicyChange | None = ctx.policy
    base_config, head_config = (policy.base_config, policy.head_config) if policy is not None else (None, None)
    rules = policy.rules if policy is not None else {}
    where = f"{key}.{sub}" if sub is not None else key
    if key in ("select", "ignore") and base_config is not None and head_config is not None:
        return _switches(rules, base_config, head_config)
    if key == "severity" and sub is not None:
        return _severity(rules, sub, None if old is missing else old, None if new is missing else new)
    if key == "exclude" and base_config is not None and head_config is not None:
        return _excluded(ctx, base_config, head_config)
    if key == "max_spend_limit" and sub is not None:
        if new is missing:
            return f"remove the {sub} spending limit: caps in {sub} would no longer be checked against one (PL505)"
        if old is missing:
            return f"add a {sub} spending limit of {_value(new)}"
        before, after = _number(old), _number(new)
        if before is not None and after is not None and after > before:
            return f"raise the {sub} spending limit from {_value(old)} to {_value(new)}: caps up to {_value(new)} would pass PL505"
        return f"change the {sub} spending limit from {_value(old)} to {_value(new)}"
    if key == "catalog":
        if new is missing:
            return "stop checking releases and versions against a catalog (PL105, PL106)"
        return f"check releases and versions against {_value(new)} instead of {_value(old) if old is not missing else 'no catalog'}"
    if key == "data" and sub == "require" and old is True and new is not True:
        return "stop requiring the split files: missing data would no longer be an error"
    if key == "data" and sub == "time_budget":
        return f"give the data checks {_value(new) if new is not missing else 'the default'} seconds instead of {_value(old) if old is not missing else 'the default'}"
    if key == "registry":
        return f"change how publications are checked online (registry.{sub})" if sub else "change how publications are checked online"
    if key in ("limits", "max_file_size"):
        return f"change a parser limit ({where}) from {_value(old) if old is not missing else 'the default'} to {_value(new) if new is not missing else 'the default'}"
    if key == "cache_dir":
        return "move planlint's cache"
    if key == "per-file-ignores" and new is not missing:
        return f"turn rules off for the files its globs match ({_value(new)}), whose findings would no longer be reported"
    if new is missing:
        return f"remove {where} (was {_value(old)})"
    if old is missing:
        return f"set {where} to {_value(new)}"
    return f"change {where} from {_value(old)} to {_value(new)}"


@rule("PL705", "policy-changed", WARNING, scope="policy")
def policy_changed(ctx: PlanContext) -> Iterator[Problem]:
    """The pull request changes planlint's configuration (`.planlint.yaml` or `[tool.planlint]`).

    The configuration decides what the gate lets through: which rules run,
    how severe they are, which files are checked, which spending limits and
    which catalog apply. A pull request is written by its author, so in diff
    mode planlint judges its plans by the configuration of the merge-base and
    reports each changed setting here, at its key, with what it would do once
    merged (rules switched off, severities downgraded, plans no longer
    checked, a higher spending limit). A reviewer then decides about the
    policy change on its own; it takes effect for the pull requests after it.

    Example (fails):
        # base
        ignore: [PL305]
        # head
        ignore: [PL305, PL1]
    Example (passes):
        # base
        ignore: [PL305]
        # head
        ignore: [PL305]  # a comment is not a change
    """
    missing = object()
    base = ctx.base or {}
    head = ctx.data or {}
    if not isinstance(base, dict) or not isinstance(head, dict):
        return
    keys = list(head) + [key for key in base if key not in head]
    for key in keys:
        old, new = base.get(key, missing), head.get(key, missing)
        if old is not missing and new is not missing and same(old, new):
            continue
        if key in _NESTED and isinstance(old if old is not missing else {}, dict) and isinstance(new if new is not missing else {}, dict):
            old_map = old if isinstance(old, dict) else {}
            new_map = new if isinstance(new, dict) else {}
            subs = list(new_map) + [sub for sub in old_map if sub not in new_map]
            for sub in subs:
                o, n = old_map.get(sub, missing), new_map.get(sub, missing)
                if o is not missing and n is not missing and same(o, n):
                    continue
                what = _effect(ctx, key, str(sub), o, n, missing)
                route = (key, sub) if n is not missing else ((key,) if new is not missing else ())
                yield Problem(route, f"{key}.{show(str(sub), 60)} changed: once merged, this would {what}; {_JUDGED}", at_key=True)
            continue
        what = _effect(ctx, key, None, old, new, missing)
        verb = "was added" if old is missing else "was removed" if new is missing else "changed"
        route = (key,) if new is not missing else ()
        yield Problem(route, f"{show(str(key), 60)} {verb}: once merged, this would {what}; {_JUDGED}", at_key=True)
