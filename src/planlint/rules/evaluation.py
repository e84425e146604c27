"""How results are measured: PL108 (pinned), PL407 (the same as the baseline's), PL614 (seeded).

The optional `evaluation:` block records what the run is evaluated with (the
harness and its version, the chat template or tokenizer revision, the
decoding settings, the seed); `baseline.evaluation` what the baseline was
measured with. A change of any of them moves the metric as surely as a
change of grader: the same model scores differently under another template,
temperature or harness version, so the two numbers are only comparable when
every setting is the same and pinned.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from planlint.core.floating import floating_reason
from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, lookup, rule
from planlint.rules.run.files import run_files

SECTIONS = (("evaluation",), ("baseline", "evaluation"))
# References that must be pinned when given (the harness version must be given with a harness).
PINNED = (("harness", "version"), ("chat_template",), ("tokenizer_revision",))
# What PL407 compares, in the order a reader meets them. The seed is not among them: it
# decides which samples are drawn, not what is sampled or how it is scored.
COMPARED = (
    ("harness", "name"),
    ("harness", "version"),
    ("chat_template",),
    ("tokenizer_revision",),
    ("decoding", "temperature"),
    ("decoding", "top_p"),
    ("decoding", "max_new_tokens"),
    ("decoding", "samples"),
)
COMPARED_AFTER_APPROVAL = ("approved", "running", "completed")


@rule("PL108", "evaluation-unpinned", ERROR)
def evaluation_unpinned(ctx: PlanContext) -> Iterator[Problem]:
    """The evaluation harness has no version, or its version, chat template or tokenizer revision floats.

    An evaluation harness that is installed at whatever version is newest
    scores the baseline with one release and the trained model with
    another: lm-evaluation-harness releases have changed prompts, answer
    extraction and defaults, and a chat template or tokenizer revision that
    moves changes what the model sees. Pin them like a model revision
    (PL103), in `evaluation` and in `baseline.evaluation`. A plan that gives
    no chat template uses the one at `base_model.revision`, which PL103 pins.

    Example (fails):
        evaluation:
          harness: {name: lm-evaluation-harness, version: latest}
          decoding: {temperature: 0.7, top_p: 0.95, max_new_tokens: 1024, samples: 4}
          seed: 1234
    Example (passes):
        evaluation:
          harness: {name: lm-evaluation-harness, version: 0.4.9}
          decoding: {temperature: 0.7, top_p: 0.95, max_new_tokens: 1024, samples: 4}
          seed: 1234
    """
    for section in SECTIONS:
        settings = ctx.get(*section)
        if not isinstance(settings, dict):
            continue
        where = ".".join(section)
        harness = settings.get("harness")
        if isinstance(harness, dict) and "version" not in harness:
            yield Problem(section + ("harness", "version"), f"{where}.harness has no version: pin the exact harness release that scores the run "
                                                            f"(e.g. version: 0.4.9), or every install may score differently", missing=True)
        for key in PINNED:
            route = section + key
            value = lookup(ctx.data, route)
            if value is MISSING or (key == ("harness", "version") and not isinstance(harness, dict)):
                continue
            reason = floating_reason(value)
            if reason:
                yield Problem(route, f"{'.'.join(route)} {show(value)} is floating ({reason}): pin an exact release or revision "
                                     f"(a version, a commit hash, sha256:<hash>), as base_model.revision is")



def _setting(value: Any) -> Any:
    """A setting as compared: numbers by value (0.7 is 0.70), references by their text."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else scalar_text(value)
    if isinstance(value, (dict, list)):
        return ("structured", repr(value))
    return scalar_text(value).strip()


@rule("PL407", "evaluation-settings-differ", ERROR)
def evaluation_settings_differ(ctx: PlanContext) -> Iterator[Problem]:
    """`evaluation` and `baseline.evaluation` differ: the run would be measured otherwise than its baseline.

    The baseline is the number the trained model is compared with, so both
    must be measured the same way. Decoding at another temperature has moved
    pass@1 from 0.31 to 0.51 for one model; another chat template, top_p,
    max_new_tokens, number of samples or harness version moves it as well.
    When the plan records both, every setting (harness name and version,
    chat template, tokenizer revision, decoding temperature, top_p,
    max_new_tokens, samples) must be the same; one recorded on one side
    only differs too. One finding per setting, at the run's value (else the
    baseline's), naming both. A warning while the plan is a draft, an error
    once it is approved, running or completed. The seed may differ.

    Example (fails):
        evaluation:
          harness: {name: lm-evaluation-harness, version: 0.4.9}
          decoding: {temperature: 0.7, top_p: 0.95, max_new_tokens: 1024, samples: 4}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
          evaluation:
            harness: {name: lm-evaluation-harness, version: 0.4.9}
            decoding: {temperature: 0.0, top_p: 0.95, max_new_tokens: 1024, samples: 4}
    Example (passes):
        evaluation:
          harness: {name: lm-evaluation-harness, version: 0.4.9}
          decoding: {temperature: 0.7, top_p: 0.95, max_new_tokens: 1024, samples: 4}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
          evaluation:
            harness: {name: lm-evaluation-harness, version: 0.4.9}
            decoding: {temperature: 0.7, top_p: 0.95, max_new_tokens: 1024, samples: 4}
    """
    run, baseline = ctx.get("evaluation"), ctx.get("baseline", "evaluation")
    if not isinstance(run, dict) or not isinstance(baseline, dict):
        return
    severity = None if ctx.get("metadata", "status") in COMPARED_AFTER_APPROVAL else WARNING
    for key in COMPARED:
        new, old = lookup(run, key), lookup(baseline, key)
        if new is MISSING and old is MISSING:
            continue
        if new is not MISSING and old is not MISSING and _setting(new) == _setting(old):
            continue
        name = ".".join(key)
        route = ("evaluation",) + key if new is not MISSING else ("baseline", "evaluation") + key
        if old is MISSING:
            what = f"evaluation.{name} is {show(new)}, but baseline.evaluation does not record it"
        elif new is MISSING:
            what = f"the baseline was measured with baseline.evaluation.{name} {show(old)}, but evaluation does not record it"
        else:
            what = f"evaluation.{name} is {show(new)}, but the baseline was measured with {show(old)} (baseline.evaluation.{name})"
        yield Problem(
            route,
            f"{what}: the comparison would not be like for like; evaluate the run as the baseline was "
            f"(or re-measure the baseline with the run's settings), and record the setting on both sides",
            severity=severity,
        )


def _seed_in(data: Any) -> bool:
    """Does a run config hold a seed: an integer under a key `seed` or `*_seed`, at any depth?"""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and (key == "seed" or key.endswith("_seed")) and isinstance(value, int) and not isinstance(value, bool):
                    return True
                if isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (dict, list)))
    return False


_SEEDS = (("evaluation", "seed"), ("baseline", "evaluation", "seed"), ("method", "seed"))


@rule("PL614", "seed-missing", WARNING, scope="files")
def seed_missing(ctx: PlanContext) -> Iterator[Problem]:
    """A running plan records no seed: not in `evaluation`, `baseline.evaluation`, `method`, nor in its run config.

    The planning guide's baseline "can establish whether the reward and
    trajectory are usable" only if it can be run again and give the same
    answer: without a seed, neither the training run nor its evaluation
    can be reproduced, and a surprising result cannot be told from a lucky
    draw. Record the seed the run uses (`method.seed`, or a `seed` in the
    run config the plan names) and the one its evaluation samples with
    (`evaluation.seed`). Reported at the `evaluation` key (line 1 without
    one).

    Example (fails):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        evaluation:
          harness: {name: lm-evaluation-harness, version: 0.4.9}
          decoding: {temperature: 0.7, top_p: 0.95, max_new_tokens: 1024, samples: 4}
    Example (passes):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        evaluation:
          harness: {name: lm-evaluation-harness, version: 0.4.9}
          decoding: {temperature: 0.7, top_p: 0.95, max_new_tokens: 1024, samples: 4}
          seed: 1234
    """
    if ctx.get("metadata", "status") != "running":
        return
    if any(lookup(ctx.data, route) not in (MISSING, None) for route in _SEEDS):
        return
    documents = run_files(ctx).documents
    if any(document.data is not None and _seed_in(document.data) for document in documents.values()):
        return
    configs = [show(document.path) for document in documents.values()]
    where = "evaluation.seed, baseline.evaluation.seed or method.seed"
    if configs:
        where = f"{where}, nor in the run config{'s' if len(configs) > 1 else ''} {' or '.join(configs)}"
    route = ("evaluation", "seed") if isinstance(ctx.get("evaluation"), dict) else ("evaluation",)
    yield Problem(route, f"the plan is running but records no seed (not in {where}): record the seed the run and its evaluation use, "
                         f"so the result can be reproduced", missing=True)
