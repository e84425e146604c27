"""PL708 (diff mode): a running plan's run configs changed in the pull request.

What decides which code, model, data or recipe runs is frozen while the plan
runs: a training config's `[experiment]` (whole), `[training]`, `[sampling]`
and `[advanced]`; an eval config's `[experiment]`, `[evaluation]` and
`[advanced]`; a benchmark config's `[experiment]`, `[tasks]`, `[[agents]]`,
`[execution]` and `[verifier]`. `[checkpoints]`, `[env]` and `[secrets]` are operations: the
change card lists them, PL708 does not. The base revision's config is read
from git objects (`ctx.base_text`, links followed inside the tree), the
head's from the working tree (links resolved inside the repository), so a
config that became a link compares by what it leads to.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planlint.core.messages import show
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, lookup, rule
from planlint.rules.run import trainer_running
from planlint.rules.run.files import run_files
from planlint.services.benchmark_config import BENCHMARK
from planlint.services.run_config import EVAL, TRAINING, parse

# What a running plan's configs may not change: the code, the model, the data, the recipe, by kind of config.
FROZEN_SECTIONS = {
    TRAINING: ("experiment", "training", "sampling", "advanced"),
    EVAL: ("experiment", "evaluation", "advanced"),
    BENCHMARK: ("experiment", "tasks", "agents", "execution", "verifier"),
}
_KINDS = (("training_config", TRAINING), ("eval_config", EVAL), ("benchmark_config", BENCHMARK))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def config_changes(old: dict, new: dict, kind: str = TRAINING) -> list[tuple[tuple, str]]:
    """[(route, description)] of what changed in the frozen sections of two run configs, in the new file's order.

    A section that is a table compares key by key (keys of the new file first,
    then the removed ones); anything else (a section that is no table) as a whole.
    """
    changes: list[tuple[tuple, str]] = []
    routes: list[tuple] = []
    for name in FROZEN_SECTIONS[kind]:
        before, after = old.get(name, MISSING), new.get(name, MISSING)
        if isinstance(before, dict) and isinstance(after, dict) or (isinstance(before, dict) and after is MISSING) or (before is MISSING and isinstance(after, dict)):
            old_keys = before if isinstance(before, dict) else {}
            new_keys = after if isinstance(after, dict) else {}
            routes += [(name, key) for key in list(new_keys) + [key for key in old_keys if key not in new_keys]]
        else:
            routes.append((name,))
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
    """The plan was `running` at the base revision, and a run config it runs from changed what runs.

    A running experiment is being measured against its plan: its baseline,
    decision rule and spend were approved for one run. Changing which code
    runs (the rollout, its entrypoint, the commit), the model, the dataset
    or the recipe of its submit configs mid-run means the next submission
    is another experiment under the old plan's name and approval. Frozen
    are the training config's `[experiment]` (every key), `[training]`,
    `[sampling]` and `[advanced]`, the eval config's `[experiment]`,
    `[evaluation]` and `[advanced]`, and a benchmark config's
    `[experiment]`, `[tasks]`, `[[agents]]`, `[execution]` and
    `[verifier]`; `[checkpoints]`, `[env]` and
    `[secrets]` may change (operations: the change card lists them).
    Configs compare by content, links followed, so editing the file a
    config links to is a change too. Revert the change, or stop this plan
    and write a new one (own name, baseline, budget) for the new run. The
    finding is in the config, at the first changed key, and lists every
    change. Like PL707 it cannot be silenced by a comment the pull request
    writes (in the plan or the TOML): only the configuration turns it off.
    For a trainer run, the config that runs is the YAML with its launch
    script's overrides, and every value counts but where it logs, saves and
    runs (the operational keys, listed in docs/plan-format.md).

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
        commit_sha = "b616b904640efb0e4ff74ec7a18ad76c5f57dd1b"
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
        commit_sha = "b616b904640efb0e4ff74ec7a18ad76c5f57dd1b"
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
        commit_sha = "b616b904640efb0e4ff74ec7a18ad76c5f57dd1b"
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
        commit_sha = "b616b904640efb0e4ff74ec7a18ad76c5f57dd1b"
        [training]
        lr = 1e-5
        [checkpoints]
        checkpoint_save_freq = 10
    """
    yield from trainer_running.changed_while_running(ctx)  # a trainer's config (TRL, verl, axolotl)
    base, read_base = ctx.base, ctx.base_text
    if not isinstance(base, dict) or not ctx.data or read_base is None:
        return
    if lookup(base, ("metadata", "status")) != "running" or lookup(base, ("run", "platform")) != "osmosis":
        return
    for key, kind in _KINDS:
        yield from _changed_while_running(ctx, key, kind, read_base)


def _changed_while_running(ctx: PlanContext, key: str, kind: str, read_base) -> Iterator[Problem]:
    base_path = lookup(ctx.base, ("run", key))
    if not isinstance(base_path, str):
        return
    text = read_base(base_path)
    if text is None:
        return  # the base named no readable config: nothing was running from it
    old = parse(text, base_path, kind)
    if old.data is None:
        return
    head_path = ctx.get("run", key)
    document = run_files(ctx).documents.get(key)
    label = {TRAINING: "training", EVAL: "eval", BENCHMARK: "benchmark"}[kind]
    if document is None:
        if head_path is MISSING or ctx.get("run") is MISSING:
            yield Problem(
                ("run", key) if isinstance(ctx.get("run"), dict) else ("run",),
                f"the plan was running at the base revision from {show(base_path)}, and no longer names {'an' if kind == EVAL else 'a'} {label} config: "
                "restore it; a new run belongs in a new plan",
                missing=True,
            )
        return  # a named config that cannot be read is PL901's
    if document.data is None:
        return
    changes = config_changes(old.data, document.data, kind)
    if not changes:
        return
    # Point at the change a reader of the head file meets first (a removed key: its table).
    keys = document.positions.keys
    changes.sort(key=lambda change: keys.get(change[0]) or keys.get(change[0][:1]) or (1 << 30,))
    route, _ = changes[0]
    listed = "; ".join(description for _, description in changes[:8]) + (f"; and {len(changes) - 8} more" if len(changes) > 8 else "")
    yield Problem(
        route,
        f"the plan was running at the base revision, and its {label} config changed: {listed}. "
        "Revert it, or stop this plan and start the new run under a new plan with its own name and baseline",
        missing=lookup(document.data, route) is MISSING,
        document=document,
    )
