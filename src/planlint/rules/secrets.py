"""Credentials pasted into plans: PL801."""

from __future__ import annotations

import re
from typing import Any, Iterator

from planlint.rules.base import ERROR, PlanContext, Problem, rule
from planlint.rules.run import string_values

# (kind, pattern). Anchored on the well-known prefixes so prose does not match.
_PATTERNS = [
    ("an OpenAI/Anthropic-style API key (sk-...)", re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}")),
    ("a GitHub token", re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("an AWS access key id", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("a Hugging Face token", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}")),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")),
    ("a Slack token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}")),
]


# Every pattern above contains one of these literals; nearly no string in a plan
# does, so one cheap search spares the seven real ones.
_ANY = re.compile(r"sk-|gh[pousr]_|github_pat_|AKIA|ASIA|hf_|PRIVATE KEY|xox[abposr]-|AIza")


def credential_kind(text: str) -> str | None:
    if not _ANY.search(text):
        return None
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    return None


def redact(text: str) -> str:
    """`text` with anything that looks like a credential masked (for source excerpts)."""
    for _, pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(0)[:3] + "*" * 8, text)
    return text


def _walk(node: Any, route: tuple) -> Iterator[tuple[tuple, str, bool]]:
    """(route, text, is_key) for every string in the plan, without recursion."""
    stack = [(node, route)]
    seen: set[int] = set()
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            if id(value) in seen:  # aliased: already walked
                continue
            seen.add(id(value))
            for key, item in value.items():
                yield where + (key,), key, True
                stack.append((item, where + (key,)))
        elif isinstance(value, list):
            if id(value) in seen:
                continue
            seen.add(id(value))
            for index, item in enumerate(value):
                stack.append((item, where + (index,)))
        elif isinstance(value, str):
            yield where, value, False


@rule("PL801", "secret-in-plan", ERROR)
def secret_in_plan(ctx: PlanContext) -> Iterator[Problem]:
    """A value looks like a credential (API key, access token, private key).

    Plans are committed, reviewed in pull requests and copied into run
    configs: a token pasted into one is leaked to everyone who can read the
    repository. Reference it by name (an environment variable or secret
    store) instead. The message never repeats the value.

    Example (fails):
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
            x-api-key: sk-proj-Abc123Def456Ghi789Jkl012
    Example (passes):
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
            x-api-key-env: OPENAI_API_KEY
    """
    for route, text, is_key in _walk(ctx.data, ()):
        kind = credential_kind(text)
        if kind:
            where = "a key" if is_key else "this value"
            yield Problem(route, f"{where} looks like {kind}: remove it from the plan, revoke it, and reference the secret by name (e.g. an environment variable)", at_key=is_key)
    # The run configs the plan names (rules/run.py): [env] values are injected verbatim and shown by the CLI.
    for document, route, text in string_values(ctx):
        kind = credential_kind(text)
        if kind:
            yield Problem(
                route,
                f"this value looks like {kind}: remove it from the run config, revoke it, and register it as a platform secret "
                "(osmosis secret set NAME) named in [secrets] required = [...]",
                document=document,
            )
