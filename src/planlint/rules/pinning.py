"""Release and version pinning: PL101-PL104."""

from __future__ import annotations

from typing import Iterator

from planlint.core.floating import floating_reason
from planlint.core.messages import show
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, rule


@rule("PL101", "dataset-release-missing", ERROR)
def dataset_release_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`dataset.release` is absent.

    A dataset name alone points at whatever the platform serves today. Results
    can only be compared and reproduced against one exact published release,
    so the plan must name it.

    Example (fails):
        dataset:
          name: retail-refunds
          format: task_metadata
    Example (passes):
        dataset:
          name: retail-refunds
          release: "2026.11.03"
          format: task_metadata
    """
    if "dataset" not in ctx.data:  # the section is absent: one finding, this one
        yield Problem(("dataset",), "the plan has no dataset: add dataset with its name and the exact published release", missing=True)
        return
    dataset = ctx.mapping("dataset")
    if dataset is not None and "release" not in dataset:
        yield Problem(("dataset", "release"), "dataset.release is missing: pin the exact published release the run trains on (e.g. release: \"2026.11.03\")", missing=True)


@rule("PL102", "dataset-release-floating", ERROR, fixable=True)
def dataset_release_floating(ctx: PlanContext) -> Iterator[Problem]:
    """`dataset.release` is floating (`latest`, a range, a wildcard, empty).

    A floating release silently moves to new data between the baseline and the
    training run, or between two runs that are later compared. Pin the exact
    published release; `planlint --fix` can pin it to the newest published
    release when a catalog or registry is configured.

    Example (fails):
        dataset:
          name: retail-refunds
          release: latest
    Example (passes):
        dataset:
          name: retail-refunds
          release: "2026.11.03"
    """
    release = ctx.get("dataset", "release")
    if release is MISSING:
        return
    reason = floating_reason(release)
    if reason:
        yield Problem(("dataset", "release"), f"dataset.release {show(release)} is floating ({reason}): pin one exact published release, e.g. \"2026.11.03\"")


def _revision(ctx: PlanContext, route: tuple, what: str) -> Iterator[Problem]:
    model = ctx.get(*route[:-1])
    if not isinstance(model, dict):
        return
    if "revision" not in model:
        yield Problem(route, f"{what} has no revision: pin the exact model revision (a commit hash) so the run and its baseline start from the same weights", missing=True)
        return
    reason = floating_reason(model["revision"])
    if reason:
        yield Problem(route, f"{what} revision {show(model['revision'])} is floating ({reason}): pin an exact revision, e.g. a 40-character commit hash")


@rule("PL103", "model-revision-unpinned", ERROR)
def model_revision_unpinned(ctx: PlanContext) -> Iterator[Problem]:
    """`base_model.revision` or `baseline.model.revision` is absent or floating.

    Model repositories move: `main` today is not `main` next week. Without an
    exact revision neither the training run nor its baseline can be
    reproduced, and a comparison between them may be between different models.

    Example (fails):
        base_model:
          name: Qwen/Qwen3-8B
          revision: main
    Example (passes):
        base_model:
          name: Qwen/Qwen3-8B
          revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345
    """
    if "base_model" not in ctx.data:
        yield Problem(("base_model",), "the plan has no base_model: name the model and pin its exact revision", missing=True)
    yield from _revision(ctx, ("base_model", "revision"), "base_model")
    yield from _revision(ctx, ("baseline", "model", "revision"), "baseline.model")


@rule("PL104", "runtime-version-unpinned", ERROR)
def runtime_version_unpinned(ctx: PlanContext) -> Iterator[Problem]:
    """`runtime` is given and its version is absent or floating.

    A training runtime that changes version mid-experiment changes defaults
    (sampling, precision, loss scaling) under the results. If the plan names a
    runtime, it pins it.

    Example (fails):
        runtime:
          name: verl
          version: latest
    Example (passes):
        runtime:
          name: verl
          version: 0.5.0
    """
    runtime = ctx.mapping("runtime")
    if runtime is None:
        return
    if "version" not in runtime:
        yield Problem(("runtime", "version"), "runtime has no version: pin the exact runtime version the run uses", missing=True)
        return
    reason = floating_reason(runtime["version"])
    if reason:
        yield Problem(("runtime", "version"), f"runtime.version {show(runtime['version'])} is floating ({reason}): pin one exact version")
