"""Pins that point at something published: PL105, PL106.

These rules run only when a catalog or registry is in use (the CLI puts a
`Publications` in `ctx.services.publications`). A reference that is missing
or floating is PL101/PL102/PL301/PL302's business, so it is not checked here.
A name the catalog does not list at all is a warning: the catalog may lag
behind, or the name may be a typo, and either way the pin went unchecked.
"""

from __future__ import annotations

from typing import Iterator

from planlint.core.messages import show
from planlint.rules.base import ERROR, WARNING, PlanContext, Problem, rule
from planlint.services.publications import NOT_PUBLISHED, UNKNOWN, Publications, pinned_ref

_SHOWN = 3  # published values quoted in a message


def _published_hint(known: tuple[str, ...], example: str, source: str) -> str:
    """The fix, from the values `source` (the one that gave the verdict) lists as published."""
    if not known:
        return f"pin a release {source} lists as published" if example == "release" else f"pin a version {source} lists as published"
    newest = known[-1]
    recent = ", ".join(show(v) for v in known[-_SHOWN:])
    more = f" (newest of {len(known)})" if len(known) > _SHOWN else ""
    return f"{source} lists as published: {recent}{more}; pin one of them, e.g. {show(newest)}"


@rule("PL105", "release-not-published", ERROR)
def release_not_published(ctx: PlanContext) -> Iterator[Problem]:
    """`dataset.release` is not a published release of the dataset.

    A pin is only as good as what it points at: a release that was never cut
    (a typo, a date from a draft) makes the run fail at start-up or, worse,
    train on something nobody reviewed. Checked against the catalog
    (`catalog:` in the config) or, with `--online`, the registry. A dataset
    the catalog does not list at all is a warning (the catalog may lag
    behind, or the name is a typo); `severity: {PL105: error}` makes it an
    error too.

    Example (fails):
        # catalog: {datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}}
        dataset:
          name: retail-refunds
          release: "2026.11.30"
    Example (passes):
        # catalog: {datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}}
        dataset:
          name: retail-refunds
          release: "2026.11.03"
    """
    publications: Publications | None = ctx.services.publications
    dataset = ctx.mapping("dataset")
    if publications is None or dataset is None:
        return
    ref = pinned_ref(dataset.get("name"), dataset.get("release"), "release" in dataset)
    if ref is None:
        return
    name, release = ref
    verdict = publications.check("datasets", name, release)
    if verdict is None:
        return
    if verdict.state == UNKNOWN:
        yield Problem(
            ("dataset", "name"),
            f"dataset {show(name)} is not in the catalog ({verdict.source}), so release {show(release)} was not checked: add the dataset to the catalog, or check the name for a typo",
            severity=WARNING,
        )
    elif verdict.state == NOT_PUBLISHED:
        yield Problem(
            ("dataset", "release"),
            f"dataset {show(name)} has no published release {show(release)} (according to {verdict.source}): {_published_hint(verdict.known, 'release', verdict.source)}",
        )


@rule("PL106", "grader-version-not-published", ERROR)
def grader_version_not_published(ctx: PlanContext) -> Iterator[Problem]:
    """A grader's `version` is not a published version of that grader.

    The baseline and the run are only comparable if both are scored by a
    grader version that exists and can be run again. Graders are looked up by
    their published `name` (not the plan's `id`) in the catalog or, with
    `--online`, the registry. A grader the catalog does not list at all is a
    warning; `severity: {PL106: error}` makes it an error too.

    Example (fails):
        # catalog: {graders: {tau-retail-db-state: {versions: ["1.4.1", "1.4.2"]}, polite-tone-judge: {versions: ["3.0.1"]}}}
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.3
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    Example (passes):
        # catalog: {graders: {tau-retail-db-state: {versions: ["1.4.1", "1.4.2"]}, polite-tone-judge: {versions: ["3.0.1"]}}}
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    """
    publications: Publications | None = ctx.services.publications
    if publications is None:
        return
    for index, grader in ctx.graders():
        ref = pinned_ref(grader.get("name"), grader.get("version"), "version" in grader)
        if ref is None:
            continue
        name, version = ref
        verdict = publications.check("graders", name, version)
        if verdict is None:
            continue
        if verdict.state == UNKNOWN:
            yield Problem(
                ("graders", index, "name"),
                f"grader {show(name)} is not in the catalog ({verdict.source}), so version {show(version)} was not checked: add the grader to the catalog, or check the name for a typo",
                severity=WARNING,
            )
        elif verdict.state == NOT_PUBLISHED:
            yield Problem(
                ("graders", index, "version"),
                f"grader {show(name)} has no published version {show(version)} (according to {verdict.source}): {_published_hint(verdict.known, 'version', verdict.source)}",
            )
