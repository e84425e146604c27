"""PL903: the training config trains another model or reads another dataset than the plan says."""

from __future__ import annotations

from collections.abc import Iterator

from planlint.core.messages import show
from planlint.rules.base import ERROR, PlanContext, Problem, rule
from planlint.rules.run.files import experiment_table, is_placeholder, run_files


@rule("PL903", "run-config-drift", ERROR)
def run_config_drift(ctx: PlanContext) -> Iterator[Problem]:
    """The training config trains another model or reads another dataset than the plan says.

    The plan's `base_model.name` and `dataset.name` are what reviewers
    approved; the training config's `model_path` and `dataset` are what the
    platform uses. When they differ, the run that starts is not the
    experiment that was reviewed ("review the compatible base ... prepared
    inputs ... before Start"). Make them name the same model and dataset.
    Eval configs are not compared: their model and dataset legitimately
    differ (a judge or reference model, an evaluation set).

    Example (fails):
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-4B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        --- rollouts/retail-refund/main.py
    Example (passes):
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        --- rollouts/retail-refund/main.py
    """
    document = run_files(ctx).documents.get("training_config")
    if document is None or document.data is None:
        return
    experiment = experiment_table(document)
    for key, plan_route, what in (("model_path", ("base_model", "name"), "model"), ("dataset", ("dataset", "name"), "dataset")):
        value, planned = experiment.get(key), ctx.get(*plan_route)
        if not isinstance(value, str) or not isinstance(planned, str) or is_placeholder(value):
            continue
        if value != planned:
            yield Problem(
                ("experiment", key),
                f"the training config's {key} is {show(value)}, but the plan's {'.'.join(plan_route)} is {show(planned)}: "
                f"the run would use another {what} than the one reviewed; make them the same",
                document=document,
            )
