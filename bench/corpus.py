"""A deterministic corpus of realistic experiment plans, for the speed benchmark.

`make_plan(seed, index)` writes plan number `index` as YAML text the way people
write plans by hand: comments, block and flow style, folded descriptions,
optional sections, x- extension keys, one to six graders, task lists from a
handful to a few hundred ids. Plan `index` depends only on `(seed, index)`, so
the first 1,000 plans of a 10,000-plan corpus are the 1,000-plan corpus.

About 5% of the plans carry one defect from DEFECTS; the rest are clean under
every rule.
"""

from __future__ import annotations

import random
from pathlib import Path

DEFECT_RATE = 0.05

TOPICS = [
    "retail-refund", "billing-dispute", "support-replies", "airline-rebooking", "sql-repair",
    "code-review", "math-hints", "tool-routing", "tax-forms", "triage-notes", "contract-clauses",
    "kyc-checks", "returns-policy", "shipping-eta", "password-reset", "invoice-match",
]
MODELS = ["Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mistral-Small-24B", "google/gemma-3-12b-it"]
RUNTIMES = ["verl", "trl", "openrlhf", "axolotl", "hosted-ft"]
JUDGES = ["gpt-5-mini", "claude-judge", "qwen3-judge-32b"]
CURRENCIES = ["USD", "USD", "USD", "EUR", "GBP"]
OWNERS = ["@support-ml", "@agents", "@post-training", "@eval-infra", "@billing-ml"]
METRICS = ["pass@1", "pass@4", "exact_match", "win_rate", "db_state_accuracy"]
WORDS = (
    "the agent checks the order before it refunds and confirms the amount with the customer then closes "
    "the ticket politely without promising anything the policy does not allow while the verifier reads "
    "the final database state and the grader scores the reply against the rubric"
).split()

DEFECTS = (
    "release-latest",       # PL102
    "no-baseline",          # PL401
    "grader-range",         # PL302
    "spend-string",         # PL502
    "eval-not-frozen",      # PL205 (warning)
    "typo-key",             # PL003
    "decision-on-train",    # PL604, PL403
    "duplicate-key",        # PL002
    "estimate-over-cap",    # PL504
    "judge-uncalibrated",   # PL305 (warning); PL310 when it is the whole reward of an approved or running GRPO plan
    "stopping-empty",       # PL603
    "revision-main",        # PL103
    "syntax-error",         # PL001
    "secret",               # PL801
    "bare-suppression",     # PL009
)


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def _folded(rng: random.Random, indent: str, sentences: int) -> str:
    """A `>-` block of a few wrapped lines."""
    text = " ".join(_sentence(rng, 6, 14) for _ in range(sentences))
    lines, line = [], ""
    for word in text.split():
        if len(line) + len(word) > 76:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return ">-\n" + "\n".join(indent + part for part in lines)


def _version(rng: random.Random) -> str:
    return f"{rng.randint(0, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 30)}"


def _split_source(rng: random.Random, side: str, topic: str, task_base: int, shape: str) -> list[str]:
    """Lines (indented for a child of `splits`) giving where one split comes from."""
    if shape == "path":
        return [f"    path: data/{topic}/{side}.jsonl" + rng.choice(["", f"   # {rng.randint(100, 9000):,} rows"])]
    if shape == "selector":
        if rng.random() < 0.5:
            return [f"    selector: {{field: split, equals: {side}}}"]
        return ["    selector:", "      field: split", f"      equals: {side}"]
    count = rng.choice([3, 8, 20, 40, 120, 300])
    ids = [f"{topic[:4]}-{task_base + i:05d}" for i in range(count)]
    if count <= 20 and rng.random() < 0.6:
        return [f"    tasks: [{', '.join(ids)}]"]
    return ["    tasks:"] + [f"      - {task_id}" for task_id in ids]


def make_plan(seed: int, index: int) -> tuple[str, str | None]:
    """(YAML text, the defect it carries or None) for plan number `index`."""
    rng = random.Random(f"{seed}:{index}")
    defect = rng.choice(DEFECTS) if rng.random() < DEFECT_RATE else None
    topic = rng.choice(TOPICS)
    name = f"{topic}-{index:05d}"
    method = rng.choice(["grpo", "grpo", "sft"])
    status = rng.choice(["draft", "approved", "approved", "running", "completed"])
    model = rng.choice(MODELS)
    revision = _hex(rng, 40)
    currency = rng.choice(CURRENCIES)
    max_spend = rng.choice([150, 250, 400, 600, 900, 1500, 4000])
    metric = rng.choice(METRICS)
    value: int | None = None  # the baseline's result in hundredths, once drawn
    out: list[str] = []
    add = out.append

    if rng.random() < 0.7:
        add(f"# {_sentence(rng, 5, 12)}")
        if rng.random() < 0.4:
            add("#")
            add(f"# {_sentence(rng, 8, 16)}")
    add("apiVersion: planlint/v1")
    add("kind: ExperimentPlan")
    add("")
    add("metadata:")
    add(f"  name: {name}" + ("                 # unique across plans/" if rng.random() < 0.3 else ""))
    add(f"  {'ownr' if defect == 'typo-key' else 'owner'}: \"{rng.choice(OWNERS)}\"")
    add(f"  status: {status}")
    if rng.random() < 0.5:
        add("  description: " + _folded(rng, "    ", rng.randint(1, 3)))
    if rng.random() < 0.4:
        add("  labels:")
        add(f"    team: {rng.choice(OWNERS)[1:]}")
        add(f"    pilot: {rng.choice(['true', 'false'])}")
        add(f"    quarter: {rng.choice(['2026q3', '2026q4'])}")
    if rng.random() < 0.5:
        add(f"  tags: [{', '.join(rng.sample(['rl', 'sft', 'tool-use', 'agents', 'eval', 'lora', 'support'], rng.randint(1, 4)))}]")
    if defect == "secret":
        add("  x-tracker-token: ghp_" + _hex(rng, 36))
    elif rng.random() < 0.2:
        add(f"  x-tracker: https://tracker.example.com/EXP-{rng.randint(100, 9999)}")
    add("")
    add("behavior:")
    add(f"  summary: {_sentence(rng, 6, 14)}")
    if rng.random() < 0.8:
        add("  good_example: " + (_folded(rng, "    ", 2) if rng.random() < 0.5 else _sentence(rng, 6, 14)))
        add("  failure_example: " + (_folded(rng, "    ", 2) if rng.random() < 0.5 else _sentence(rng, 6, 14)))
        add("  signal: " + (_folded(rng, "    ", 3) if rng.random() < 0.5 else _sentence(rng, 6, 14)))
    add("")
    add("method:")
    add(f"  type: {method}")
    add(f"  adapter: {rng.choice(['lora', 'lora', 'full'])}")
    add(f"  seed: {index % 997 + 1}")  # a running plan records one (PL614)
    add("")
    add("base_model:")
    add(f"  name: {model}")
    add(f"  revision: {'main' if defect == 'revision-main' else revision}" + ("   # HF commit" if rng.random() < 0.3 else ""))
    runtime = None
    if rng.random() < 0.4:
        runtime = rng.choice(RUNTIMES)
        add("")
        add("runtime:")
        add(f"  name: {runtime}")
        add(f"  version: {_version(rng)}")
    add("")
    add("dataset:")
    add(f"  name: {topic}s")
    if defect == "release-latest":
        add("  release: latest")
    else:
        add(f"  release: \"2026.{rng.randint(1, 12):02d}.{rng.randint(1, 28):02d}\"" + ("   # listed in catalog.yaml" if rng.random() < 0.3 else ""))
    if defect == "duplicate-key":
        add(f"  name: {topic}-v2")
    add(f"  source: {_sentence(rng, 4, 9)}")
    rng.choice(["task_metadata", "prompt_answer"])  # drawn as before, so the corpus stays the same otherwise
    add(f"  format: {'task_metadata' if method == 'grpo' else 'prompt_answer'}")  # the format that fits (PL609)
    if method == "sft" or rng.random() < 0.3:
        if rng.random() < 0.5:
            add("  targets: {reviewed: true}")
        else:
            add("  targets:")
            add("    reviewed: true")
            add(f"    reviewed_by: \"{rng.choice(OWNERS)}\"")
    add("")
    add("splits:")
    shape = rng.choice(["path", "path", "selector", "tasks"])
    base = rng.randint(0, 50_000)
    add("  train:")
    out.extend(_split_source(rng, "train", topic, base, shape))
    add("  eval:")
    eval_source = _split_source(rng, "eval", topic, base + 1000, shape)
    # A listed eval of 3-300 tasks cannot tell the corpus's targets from noise (PL611): the
    # eval of a plan whose train tasks are listed is selected instead (drawn as before).
    out.extend(eval_source if shape != "tasks" else ["    selector: {field: split, equals: eval}"])
    if defect == "eval-not-frozen":
        add("    frozen: false")
    else:
        add("    frozen: true")
    add("  boundary:")
    if rng.random() < 0.3:
        add("    # Repeat customers reuse phrasing; keep each on one side.")
    time_boundary = rng.random() < 0.5
    if not time_boundary or rng.random() < 0.5:
        add(f"    group_key: {rng.choice(['customer_id', 'account_id', 'repo', 'conversation_id'])}")
    if time_boundary:
        add("    time_key: created_at")
        add(f"    cutoff: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    add("")

    graders = []
    for number in range(rng.choice([1, 1, 2, 2, 3, 4, 6])):
        kind = rng.choice(["code", "code", "native", "llm_judge"])
        graders.append((f"{rng.choice(['db-state', 'tone', 'policy', 'format', 'safety', 'rubric'])}-{number}", kind, _version(rng)))
    add("graders:")
    for position, (grader_id, kind, version) in enumerate(graders):
        add(f"  - id: {grader_id}")
        add(f"    type: {kind}")
        add(f"    name: {topic}-{grader_id}")
        if defect == "grader-range" and position == 0:
            add(f"    version: \"^{version}\"")
        else:
            add(f"    version: {version}")
        if kind == "llm_judge":
            if rng.random() < 0.5:
                add(f"    judge_model: {{name: {rng.choice(JUDGES)}, revision: \"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\"}}")
            else:
                add("    judge_model:")
                add(f"      name: {rng.choice(JUDGES)}")
                add(f"      revision: \"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\"")
            if defect != "judge-uncalibrated":
                add(f"    calibration: {{labels: {rng.randint(50, 500)}, agreement: 0.{rng.randint(80, 97)}}}")  # PL308: >= 50, >= 0.8
        if kind == "code" and runtime is not None:
            add(f"    qualified_on: [local, {runtime}]")  # PL309
        if rng.random() < 0.4:
            add("    description: " + (_folded(rng, "      ", 1) if rng.random() < 0.5 else _sentence(rng, 5, 12)))
    if defect == "judge-uncalibrated" and not any(kind == "llm_judge" for _, kind, _ in graders):
        add("  - id: judge-extra")
        add("    type: llm_judge")
        add(f"    name: {topic}-judge")
        add("    version: 1.0.0")
        add(f"    judge_model: {{name: {rng.choice(JUDGES)}, revision: \"2026-05-01\"}}")
    reward = [g for g in graders if rng.random() < 0.8] or graders[:1]
    if method == "grpo":
        add("")
        add("reward:")
        add(f"  graders: [{', '.join(g[0] for g in reward)}]")
        if len(reward) > 1 and rng.random() < 0.5:
            add("  weights:")
            for grader_id, _, _ in reward:
                add(f"    {grader_id}: {rng.choice(['1', '0.5', '2'])}")
    add("")

    if defect != "no-baseline":
        add("baseline:")
        if rng.random() < 0.5:
            add(f"  model: {{name: {model}, revision: {revision}}}")
        else:
            add("  model:")
            add(f"    name: {model}")
            add(f"    revision: {revision}")
        add("  split: eval")
        planned = status == "draft" and rng.random() < 0.5
        if method == "grpo" and not planned:
            add("  grader_versions:" + ("                      # must equal the versions in graders" if rng.random() < 0.3 else ""))
            for grader_id, _, version in graders:
                if defect == "grader-range" and grader_id == graders[0][0]:
                    version = f"\"^{version}\""
                add(f"    {grader_id}: {version}")
        if planned:
            add("  status: planned")
            add(f"  next_step: \"{rng.choice([32, 64, 128])} rollouts on eval\"")
        elif rng.random() < 0.5:
            value = rng.randint(10, 90)
            add(f"  result: {{metric: {metric}, value: 0.{value}, rollouts: {rng.choice([64, 300, 1200])}}}")
        else:
            add("  result:")
            add(f"    metric: {metric}")
            value = rng.randint(10, 90)
            add(f"    value: 0.{value}")
            add(f"    rollouts: {rng.choice([64, 300, 1200])}")
            add(f"    measured_at: \"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\"")
        if rng.random() < 0.3:
            add(f"  notes: {_sentence(rng, 6, 14)}")
        add("")
    add("decision:")
    add(f"  metric: {metric}")
    add(f"  split: {'train' if defect == 'decision-on-train' else 'eval'}")
    target = rng.randint(2, 15)
    if value is not None:
        target = min(target, 100 - value)  # a proportion cannot pass 1 (PL612)
    add(f"  target_improvement: 0.{target:02d}" + ("              # absolute, in the metric's units" if rng.random() < 0.3 else ""))
    if defect == "stopping-empty":
        add("  stopping: {}")
    elif rng.random() < 0.5:
        add(f"  stopping: {{max_steps: {rng.choice([200, 400, 800])}, patience_evals: {rng.randint(2, 5)}}}")
    else:
        add("  stopping:")
        add(f"    max_steps: {rng.choice([200, 400, 800])}")
        add(f"    patience_evals: {rng.randint(2, 5)}")
        if rng.random() < 0.5:
            add(f"    max_hours: {rng.choice([12, 24, 36, 48])}")
    add("")
    add("budget:")
    add(f"  currency: {currency}")
    if defect == "spend-string":
        add(f"  max_spend: \"${max_spend}\"")
    else:
        add(f"  max_spend: {max_spend}")
    if defect == "estimate-over-cap":
        add(f"  estimated_cost: {max_spend + 50}")
    elif rng.random() < 0.6:
        add(f"  estimated_cost: {int(max_spend * rng.uniform(0.4, 0.95))}")
    if rng.random() < 0.7 or status in ("approved", "running", "completed"):  # PL506
        add(f"  approved_by: \"{rng.choice(OWNERS)}\"")
    if defect == "bare-suppression":
        add("  # planlint: disable-file=PL305")
    if status == "completed" and value is not None:  # its result, met: the target reached exactly (PL615)
        add("")
        add(f"outcome: {{value: 0.{value + target:02d}, verdict: met}}" if value + target < 100 else "outcome: {value: 1.0, verdict: met}")
    text = "\n".join(out) + "\n"
    if defect == "syntax-error":
        text = text.replace("  summary: ", "  summary: \"", 1)
    return text, defect


def write_corpus(directory: Path, count: int, seed: int = 0) -> dict[str, str | None]:
    """Write plans 0..count-1 under `directory` (in subdirectories, like a monorepo)."""
    defects: dict[str, str | None] = {}
    for index in range(count):
        text, defect = make_plan(seed, index)
        path = directory / f"team-{index % 16:02d}" / f"plan-{index:05d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        defects[path.relative_to(directory).as_posix()] = defect
    return defects
