"""Release and version pinning: PL101-PL104, and split paths that float (PL107)."""

from __future__ import annotations

from functools import partial
from typing import Any, Iterator

from planlint.core.floating import floating_reason
from planlint.core.urls import show_uri
from planlint.core.messages import show
from planlint.core.positions import Route, yaml_path
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, WARNING, Fix, PlanContext, Problem, Replace, rule

NEWEST_WORDS = frozenset({"latest", "newest", "current", "head", "tip"})
_WILD = ("x", "X", "*")
_MAX_VALUE = 128


def newest_matching(value: Any, published: tuple[str, ...]) -> str | None:
    """The published value a floating `value` certainly means, or None.

    A value that means "the newest" (`latest`, `newest`, `current`, `head`,
    `tip`, `*`) is the newest published one; `1.x` / `1.4.*` the newest
    published one with that prefix; anything else (a range, `stable`) is not
    certain.
    """
    if not published or value is None or isinstance(value, (bool, int, float, dict, list)):
        return None
    text = str(value).strip()
    if text.lower() in NEWEST_WORDS or text == "*":
        candidates = list(published)
    else:
        parts = text.split(".")
        first = next((i for i, p in enumerate(parts) if p in _WILD), None)
        if not first or any(p not in _WILD for p in parts[first:]) or any(p in _WILD or not p for p in parts[:first]):
            return None
        prefix = parts[:first]
        candidates = [v for v in published if v.split(".")[:first] == prefix]
    for candidate in reversed(candidates):
        if _usable(candidate):
            return candidate
    return None


def _usable(value: str) -> bool:
    return isinstance(value, str) and 0 < len(value) <= _MAX_VALUE and value.isprintable() and value == value.strip() and floating_reason(value) is None


def pin_newest(ctx: PlanContext, kind: str, name: Any, route: Route, value: Any, grader: Any = None) -> Fix | None:
    """The fix of a floating release or version: the newest published one it certainly means.

    `kind`: "datasets" or "graders"; `name`: the dataset's or grader's name;
    `grader`: the grader's id, when re-pinning a grader (the lint after --fix
    tells PL306 about it). Asks the catalog or registry, so rules attach it
    deferred (`functools.partial`) and only --fix calls it.
    """
    publications = ctx.services.publications
    if publications is None or not isinstance(name, str):
        return None
    published, source = publications.published_values(kind, name)
    new = newest_matching(value, published)
    if new is None:
        return None
    repin = (grader, scalar_text(value), new) if isinstance(grader, str) else None
    # Releases are written quoted, as the templates and the spec do (`release: "2026.11.03"`): one like
    # 2026.10 would be a number unquoted. Versions keep the plan's style (`version: 1.4.2`).
    change = Replace(route, new, quoted=kind == "datasets")
    return Fix(f"{yaml_path(route)} {show(value)} -> {show(new)} (newest published in {source})", (change,), repin=repin)


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
        route = ("dataset", "release")
        yield Problem(route, f"dataset.release {show(release)} is floating ({reason}): pin one exact published release, e.g. \"2026.11.03\"",
                      fix=partial(pin_newest, ctx, "datasets", ctx.get("dataset", "name"), route, release))


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
        graders:
          - {id: db-state, type: code, name: tau-retail-db-state, version: 1.4.2, qualified_on: [verl]}
          - {id: tone, type: llm_judge, name: polite-tone-judge, version: 3.0.1, judge_model: {name: gpt-5-mini, revision: "2026-08-07"}, calibration: {labels: 200, agreement: 0.87}}
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


def split_path_pin(path: str) -> tuple[str, str, str] | None:
    """(severity, why it floats, the pinned form) for a split path that can change under the same name; None if pinned.

    Local paths are pinned by the commit that holds them; what pins a path to
    a store (a commit hash as an `hf://` revision, an object's version) is the
    store's own knowledge (services/split_data/schemes). A path that certainly
    follows new data is an error, one open to an overwrite a warning.
    """
    if "://" not in path:
        return None
    # Deliberately lazy: the data services load only for plans whose splits name a store.
    from planlint.services.split_data.schemes import floating

    found = floating(path)
    if found is None:
        return None
    return (ERROR if found.moves else WARNING), found.why, found.pinned


@rule("PL107", "split-path-floating", ERROR)
def split_path_floating(ctx: PlanContext) -> Iterator[Problem]:
    """A split's `path` points at data that can change under the same name.

    A floating data reference is a floating release: the rows trained and
    evaluated on must be the rows that were reviewed. An `hf://` path without
    a commit hash as its revision follows whatever was pushed last (error).
    An object-store key can be overwritten, and an `https://` URL can serve
    something else tomorrow (warnings): pin `s3://` with `?versionId=`,
    `gs://` with `#generation`. Local paths are pinned by the commit.

    Example (fails):
        splits:
          train:
            path: hf://datasets/acme/retail-refunds/train.parquet
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    Example (passes):
        splits:
          train:
            path: hf://datasets/acme/retail-refunds@3f2a9c1d5e7b8a0f4c6d2e1b9a8c7d6e5f4a3b2c/train.parquet
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    """
    splits = ctx.mapping("splits")
    if splits is None:
        return
    for name, split in splits.items():
        if name == "boundary" or not isinstance(split, dict) or not isinstance(split.get("path"), str):
            continue
        found = split_path_pin(split["path"].strip())
        if found is None:
            continue
        severity, why, pinned = found
        # a URL's user part and query may hold a credential: never shown (core.urls)
        yield Problem(("splits", name, "path"), f"splits.{name}.path {show(show_uri(split['path']))} {why}: pin it, e.g. {show_uri(pinned)}", severity=severity)
