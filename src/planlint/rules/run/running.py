"""PL708 (diff mode): a running plan's training config changed in the pull request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planlint.core.messages import show
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, lookup, rule
from planlint.rules.run.files import run_files
from planlint.services.run_config import TRAINING, parse

# What a running plan's training config may not change: the code, the model, the data, the recipe.
_PINNED_EXPERIMENT = ("commit_sha", "branch", "model_path", "dataset")
_PINNED_SECTIONS = ("training", "sampling")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def config_changes(old: dict, new: dict) -> list[tuple[tuple, str]]:
    """[(route, description)] of what changed between two training configs, in the new file's order."""
    def section(data: dict, name: str) -> dict:
        value = data.get(name)
        return value if isinstance(value, dict) else {}

    changes: list[tuple[tuple, str]] = []
    routes = [("experiment", key) for key in _PINNED_EXPERIMENT]
    for name in _PINNED_SECTIONS:
        keys = list(section(new, name)) + [key for key in section(old, name) if key not in section(new, name)]
        routes += [(name, key) for key in keys]
    for route in routes:
        before, after = lookup(old, route), lookup(new, route)
        if before is MISSING and after is MISSING:
            continue
        where = ".".join(route)
        if before is MISSING:
            changes.append((route, f"{where} was added ({show(after)})"))
        elif after is MISSING:
            changes.append((route, f"{where} was removed (was {show(before)})"))
        elif not _same(before, after):
            changes.append((route, f"{where} changed from {show(before)} to {show(after)}"))
    return changes


@rule("PL708", "run-config-changed-while-running", ERROR, scope="diff")
def run_config_changed_while_running(ctx: PlanContext) -> Iterator[Problem]:
    """The plan was `running` at the base revision, and its training config changed.

    A running experiment is being measured against its plan: its baseline,
    decision rule and spend were approved for one run. Changing the code
    commit, the model, the dataset or a `[training]`/`[sampling]` value of
    its submit config mid-run means the next submission is another
    experiment under the old plan's name and approval. Revert the change,
    or stop this plan and write a new one (own name, baseline, budget) for
    the new run. The finding is in the training config, at the first
    changed key, and lists every change. `[checkpoints]`, `[env]`,
    `[secrets]` and `[advanced]` may change (operations, not the recipe).

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds}}
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "b9475f28a503b9dea244a002e1a768ea05882d30"
        [training]
        lr = 1e-5
        --- rollouts/retail-refund/main.py
        --- configs/eval/
        --- data/
        # head
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "b9475f28a503b9dea244a002e1a768ea05882d30"
        [training]
        lr = 3e-5
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds}}
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "b9475f28a503b9dea244a002e1a768ea05882d30"
        [training]
        lr = 1e-5
        --- rollouts/retail-refund/main.py
        --- configs/eval/
        --- data/
        # head
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "b9475f28a503b9dea244a002e1a768ea05882d30"
        [training]
        lr = 1e-5
        [checkpoints]
        checkpoint_save_freq = 10
    """
    base, read_base = ctx.base, ctx.base_text
    if not isinstance(base, dict) or not ctx.data or read_base is None:
        return
    if lookup(base, ("metadata", "status")) != "running" or lookup(base, ("run", "platform")) != "osmosis":
        return
    base_path = lookup(base, ("run", "training_config"))
    if not isinstance(base_path, str):
        return
    text = read_base(base_path)
    if text is None:
        return  # the base named no readable config: nothing was running from it
    old = parse(text, base_path, TRAINING)
    if old.data is None:
        return
    head_path = ctx.get("run", "training_config")
    document = run_files(ctx).documents.get("training_config")
    if document is None:
        if head_path is MISSING or ctx.get("run") is MISSING:
            yield Problem(
                ("run", "training_config") if isinstance(ctx.get("run"), dict) else ("run",),
                f"the plan was running at the base revision from {show(base_path)}, and no longer names a training config: "
                "restore it; a new run belongs in a new plan",
                missing=True,
            )
        return  # a named config that cannot be read is PL901's
    if document.data is None:
        return
    changes = config_changes(old.data, document.data)
    if not changes:
        return
    # Point at the change a reader of the head file meets first (a removed key: its table).
    keys = document.positions.keys
    changes.sort(key=lambda change: keys.get(change[0]) or keys.get(change[0][:1]) or (1 << 30,))
    route, _ = changes[0]
    listed = "; ".join(description for _, description in changes[:8]) + (f"; and {len(changes) - 8} more" if len(changes) > 8 else "")
    yield Problem(
        route,
        f"the plan was running at the base revision, and its training config changed: {listed}. "
        "Revert it, or stop this plan and start the new run under a new plan with its own name and baseline",
        missing=lookup(document.data, route) is MISSING,
        document=document,
    )
