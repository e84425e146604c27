"""Rules about the file itself; the engine emits these while loading and linting."""

from planlint.rules.base import ERROR, WARNING, no_check, rule

yaml_syntax = rule("PL001", "yaml-syntax", ERROR, scope="file")(no_check)
yaml_syntax.doc = """The file is not valid YAML, or uses YAML the plan format refuses.

    A plan that does not parse cannot be checked at all, so nothing else is
    reported for it. Tags other than the YAML core ones (`!!python/...`, custom
    `!tags`) are refused and never constructed: a plan is data, not code.
    The finding points at the parser's error position.

    Example (fails):
        # whole file
        apiVersion: planlint/v1
        kind: ExperimentPlan
        metadata:
          name: retail-refund-window
           owner: "@support-ml"
    Example (passes):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
    """

duplicate_key = rule("PL002", "duplicate-key", ERROR, scope="file")(no_check)
duplicate_key.doc = """A mapping repeats a key.

    YAML loaders silently keep one of the two values (which one depends on the
    tool), so a reviewer reading the first value may approve the second. The
    first value is kept and the repeated key is reported.

    Example (fails):
        budget:
          currency: USD
          max_spend: 250
          max_spend: 2500
    Example (passes):
        budget:
          currency: USD
          max_spend: 250
    """

schema = rule("PL003", "schema", ERROR, scope="file")(no_check)
schema.doc = """The plan breaks the JSON Schema of the plan format.

    Unknown keys (typos must not pass silently), wrong types and missing
    required sections are reported at the offending key or value. Keys starting
    with `x-` and anything under `metadata.labels` are allowed. A missing key
    that has a rule of its own (dataset release, eval split, baseline, budget,
    ...) is reported by that rule instead.

    Example (fails):
        dataset:
          name: retail-refunds
          release: "2026.11.03"
          fromat: task_metadata
    Example (passes):
        dataset:
          name: retail-refunds
          release: "2026.11.03"
          format: task_metadata
          x-owner-note: imported from the ticket export
    """

not_a_plan = rule("PL004", "not-a-plan", ERROR, scope="file")(no_check)
not_a_plan.doc = """A file named on the command line is not a v1 experiment plan.

    A plan's top level is a mapping with `apiVersion: planlint/v1` and
    `kind: ExperimentPlan`. Files found by searching a directory that are not
    plans are skipped; a file you name explicitly is expected to be one.

    Example (fails):
        # whole file
        apiVersion: planlint/v2
        kind: ExperimentPlan
    Example (passes):
        apiVersion: planlint/v1
        kind: ExperimentPlan
    """

duplicate_plan_name = rule("PL005", "duplicate-plan-name", ERROR, scope="repo")(no_check)
duplicate_plan_name.doc = """Two linted plans share `metadata.name`.

    Plan names identify experiments in dashboards, run names and review
    threads; two plans with one name make results attributable to the wrong
    design. Every plan after the first with a given name is reported.
    When files are named (as pre-commit names the staged ones) inside a git
    repository, the repository's other plans under `plans/` count too, so a
    new plan that reuses a committed plan's name fails the hook, not the
    next full run; in diff mode the unchanged plans count.

    Example (fails):
        # two files
        metadata:
          name: retail-refund-window
    Example (passes):
        metadata:
          name: retail-refund-window
    """

unreadable_file = rule("PL006", "unreadable-file", ERROR, scope="file")(no_check)
unreadable_file.doc = """The file cannot be read as a plan: not UTF-8, too large, or unreadable.

    Also reported when the file exceeds the parser's safety limits (nesting
    depth, alias expansion, time budget): plan files come from pull requests
    and are treated as untrusted input.

    Example (fails):
        # encoding: latin-1
        behavior:
          summary: Refund only eligible orders (café vouchers excluded)
    Example (passes):
        behavior:
          summary: Refund only eligible orders (café vouchers excluded)
    """

suppression_without_reason = rule("PL009", "suppression-without-reason", ERROR, scope="file")(no_check)
suppression_without_reason.doc = """A suppression comment gives no reason after `--`.

    A suppression is a decision someone made; the reason is what lets the next
    reviewer judge whether it still holds.

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: false  # planlint: disable=PL205
          boundary:
            group_key: customer_id
    Example (passes):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: false  # planlint: disable=PL205 -- eval rotates weekly by design
          boundary:
            group_key: customer_id
    """

unused_suppression = rule("PL010", "unused-suppression", WARNING, scope="file")(no_check)
unused_suppression.doc = """A suppression comment suppresses nothing.

    Stale suppressions hide the next real problem on that line. Remove the
    comment, or the codes in it that no longer fire.

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true  # planlint: disable=PL205 -- eval rotates weekly
          boundary:
            group_key: customer_id
    Example (passes):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    """
