"""PL903: a run config trains or evaluates another model, or reads another dataset, than the plan says."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from planlint.core.messages import show
from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, rule
from planlint.rules.run import trainer_checks
from planlint.rules.run.files import ACTIVE_STATUSES, experiment_table, is_placeholder, plan_status, run_files
from planlint.services.benchmark_config import BENCHMARK


@rule("PL903", "run-config-drift", ERROR)
def run_config_drift(ctx: PlanContext) -> Iterator[Problem]:
    """A run config trains or evaluates another model, or reads another dataset, than the plan says.

    The plan's `base_model.name` and its datasets are what reviewers
    approved; the run configs' `model_path` and `dataset` are what the
    platform uses. When they differ, the run that starts is not the
    experiment that was reviewed ("review the compatible base ... prepared
    inputs ... before Start"). The training config must train
    `base_model.name` on `dataset.platform.train` (`dataset.name` when the
    plan names no platform datasets); the eval config must evaluate the
    model under test (`base_model.name`, or the trained model the plan
    names in `run.trained_model`) on `dataset.platform.eval`; a benchmark
    config's hosted agents must run `base_model.name` (and
    `run.trained_model` as the LoRA, when named). A trainer's config (TRL,
    verl, axolotl) is compared key by key with the plan: the model and its
    revision, the data files and splits (a random eval split beside the
    plan's own has no boundary), the rewards, the method, the adapter, and
    the config its launch script starts; one table per trainer in
    docs/plan-format.md, "Trainer configs".

    On the platform a dataset is only a name, and `osmosis dataset upload
    --overwrite` replaces its rows under the same name, so nothing ties a
    submit config to `dataset.release`: `dataset.platform: {train: NAME,
    eval: NAME}` records which platform datasets hold the reviewed release's
    rows. An approved or running plan with a training or eval config and no
    such link gets a warning: what cannot be checked. An overwritten
    platform dataset stays invisible to any repository check.

    Example (fails):
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds, eval: retail-refunds-eval}}
        run: {platform: osmosis, eval_config: configs/eval/retail-refund-window.toml}
        --- configs/eval/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        [secrets]
        required = []
        --- configs/training/
        --- data/
        --- rollouts/retail-refund/main.py
    Example (passes):
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds, eval: retail-refunds-eval}}
        run: {platform: osmosis, eval_config: configs/eval/retail-refund-window.toml}
        --- configs/eval/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds-eval"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        [secrets]
        required = []
        --- configs/training/
        --- data/
        --- rollouts/retail-refund/main.py
    """
    yield from trainer_checks.drift(ctx)  # a trainer's config (TRL, verl, axolotl)
    documents = run_files(ctx).documents
    platform = ctx.get("dataset", "platform")
    linked = platform if isinstance(platform, dict) else {}
    model = _text(ctx.get("base_model", "name"))
    trained = _text(ctx.get("run", "trained_model"))
    training = documents.get("training_config")
    if training is not None and training.data is not None:
        dataset = ("dataset", "platform", "train") if isinstance(linked.get("train"), str) else ("dataset", "name")
        yield from _compare(ctx, training, "model_path", [("base_model", "name")], "the training config", "model")
        yield from _compare(ctx, training, "dataset", [dataset], "the training config", "dataset")
    evaluation = documents.get("eval_config")
    if evaluation is not None and evaluation.data is not None:
        models = [("base_model", "name")] + ([("run", "trained_model")] if trained is not None else [])
        yield from _compare(ctx, evaluation, "model_path", models, "the eval config", "model under test")
        if isinstance(linked.get("eval"), str):
            yield from _compare(ctx, evaluation, "dataset", [("dataset", "platform", "eval")], "the eval config", "evaluation dataset")
    benchmark = documents.get("benchmark_config")
    if benchmark is not None and benchmark.data is not None and benchmark.kind == BENCHMARK:
        yield from _hosted_agents(benchmark, model, trained)
    yield from _missing_link(ctx, training is not None, evaluation is not None, platform)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and not is_placeholder(value) else None


def _compare(ctx: PlanContext, document: Any, key: str, plan_routes: Sequence[tuple[str, ...]], config: str, what: str) -> Iterator[Problem]:
    value = experiment_table(document).get(key)
    planned = [(route, ctx.get(*route)) for route in plan_routes]
    planned = [(route, name) for route, name in planned if isinstance(name, str)]
    if not isinstance(value, str) or is_placeholder(value) or not planned or any(is_placeholder(name) for _, name in planned):
        return
    if all(value != name for _, name in planned):
        names = " or ".join(f"the plan's {'.'.join(route)} {show(name)}" for route, name in planned)
        yield Problem(
            ("experiment", key),
            f"{config}'s {key} is {show(value)}, not {names}: the run would use another {what} than the one reviewed; make them the same",
            document=document,
        )


def _hosted_agents(document: Any, model: str | None, trained: str | None) -> Iterator[Problem]:
    """A benchmark's hosted agents run a model of the platform: the plan's, and its LoRA when the plan names it."""
    agents = document.data.get("agents")
    for index, agent in enumerate(agents if isinstance(agents, list) else []):
        hosted = agent.get("model") if isinstance(agent, dict) else None
        if not isinstance(hosted, dict) or hosted.get("type") != "hosted":
            continue
        for key, planned, where in (("base_model", model, "base_model.name"), ("lora_model_name", trained, "run.trained_model")):
            value = hosted.get(key)
            if planned is not None and isinstance(value, str) and not is_placeholder(value) and value != planned:
                yield Problem(
                    ("agents", index, "model", key),
                    f"the benchmark's hosted agents[{index}] runs {key} {show(value)}, not the plan's {where} {show(planned)}: "
                    "it would measure another model than the one reviewed",
                    document=document,
                )


def _missing_link(ctx: PlanContext, training: bool, evaluation: bool, platform: Any) -> Iterator[Problem]:
    """The warning of an approved or running plan whose run configs cannot be tied to its release."""
    if plan_status(ctx) not in ACTIVE_STATUSES or not (training or evaluation) or (platform is not MISSING and not isinstance(platform, dict)):
        return  # a draft, no submit config, or a dataset.platform of the wrong type (PL003's)
    linked = platform if isinstance(platform, dict) else {}
    lacking = [key for key, named in (("train", training), ("eval", evaluation)) if named and not isinstance(linked.get(key), str)]
    if not lacking:
        return
    release = ctx.get("dataset", "release")
    shown = f"the rows of release {show(release)}" if isinstance(release, (str, int, float)) and not isinstance(release, bool) else "the reviewed release's rows"
    configs = " and ".join({"train": "the training config's", "eval": "the eval config's"}[key] for key in lacking)
    route = ("dataset", "platform") if not linked else ("dataset", "platform", lacking[0])
    yield Problem(
        route,
        f"the plan does not say which platform datasets hold {shown} (dataset.platform: {{{', '.join(f'{key}: NAME' for key in lacking)}}}): "
        f"planlint cannot check that {configs} dataset is the reviewed data. A platform dataset is only a name "
        "(`osmosis dataset upload --overwrite` replaces its rows), so record which one holds this release",
        missing=True, severity=WARNING,
    )
