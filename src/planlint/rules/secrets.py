"""Credentials pasted into plans: PL801."""

from __future__ import annotations

import re
from typing import Any, Iterator

from planlint.core.positions import Span, split_lines
from planlint.core.suppressions import _Scalars, comment_start
from planlint.core.urls import mask_uris
from planlint.rules.base import ERROR, PlanContext, Problem, plan_strings, rule
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
_ANY = re.compile(r"sk-|gh[pousr]_|github_pat_|AKIA|ASIA|ABIA|ACCA|hf_|PRIVATE KEY|xox[abposr]-|xapp-|AIza")


# What PL801 reports: each provider's documented token shape (prefix, length,
# alphabet) as a whole token, not touching another token character, so prose
# that merely contains a prefix (`grpo-sk-market-refund-window`, a quoted
# `sk-proj-abc123...`) is not a credential. `redact()` above stays broader: it
# masks anything near a credential shape in excerpts and error text.
_T = r"(?<![A-Za-z0-9_\-])"  # token start
_E = r"(?![A-Za-z0-9_\-])"  # token end
_TOKENS = [
    ("an OpenAI API key (sk-...)", re.compile(
        _T + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{48}|[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,})" + _E)),
    ("an Anthropic API key (sk-ant-...)", re.compile(_T + r"sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{93}AA" + _E)),
    ("a GitHub token", re.compile(_T + r"(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})" + _E)),
    ("an AWS access key id", re.compile(_T + r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}" + _E)),
    ("a Hugging Face token", re.compile(_T + r"hf_[A-Za-z0-9]{34}" + _E)),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")),
    ("a Slack token", re.compile(_T + r"(?:xox[baprs]-(?:[0-9]{10,13}-){1,3}[A-Za-z0-9]{24,34}|xapp-[0-9]-[A-Z0-9]{9,11}-[0-9]{10,13}-[a-f0-9]{64})" + _E)),
    ("a Google API key", re.compile(_T + r"AIza[0-9A-Za-z_\-]{35}" + _E)),
]


def credential_kind(text: str) -> str | None:
    """What kind of credential `text` holds (a whole token of a provider's documented shape), or None."""
    if not _ANY.search(text):
        return None
    for kind, pattern in _TOKENS:
        if pattern.search(text):
            return kind
    return None


def credential_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each credential-shaped token in `text`."""
    if not _ANY.search(text):
        return
    for kind, pattern in _TOKENS:
        for match in pattern.finditer(text):
            yield match.start(), match.end(), kind


def _comments_may_hold(text: str) -> bool:
    """Could a comment of `text` hold a credential? Only the text from each line's first `#`
    to its end is searched (a comment starts at a `#`; a credential holds an _ANY prefix), not the whole file."""
    search, find = _ANY.search, text.find
    start = find("#")
    while start != -1:
        end = find("\n", start)
        if end == -1:
            return search(text, start) is not None
        if search(text, start, end):  # to the \n: a \r ends a line sooner, so this searches no less
            return True
        start = find("#", end)
    return False


def comment_secrets(text: str, quoted) -> Iterator[tuple[int, int, int, str]]:
    """(line, column, end column, kind) of credentials in the YAML comments of `text` (1-based).

    Comments are committed and reviewed like values. `quoted`: the loader's
    quoted and block scalar spans, where a `#` is text, not a comment.
    """
    if not _comments_may_hold(text):
        return
    scalars = _Scalars(quoted) if quoted else None
    for number, line in enumerate(split_lines(text), start=1):
        if "#" not in line or not _ANY.search(line):
            continue
        start = comment_start(line, number, scalars)
        if start == -1:
            continue
        for begin, end, kind in credential_spans(line[start:]):
            yield number, start + begin + 1, start + end + 1, kind
            break  # one finding per comment


def comment_problems(text: str, quoted) -> Iterator[Problem]:
    """PL801 in the YAML comments of `text`: a comment has no route, so each problem carries its `span`.

    The engine, which holds the text, calls this after the plan rules (engine/lint.lint_file).
    """
    for line, column, end, kind in comment_secrets(text, quoted):
        yield Problem(
            (),
            f"this comment looks like {kind}: comments are committed too; remove it, revoke it, and reference the secret by name (e.g. an environment variable)",
            span=Span(line, column, line, end),
        )


def redact(text: str) -> str:
    """`text` with anything that looks like a credential masked (for source excerpts),
    and URLs' user parts and query values (`https://user:token@host/x?sig=...`)."""
    if "://" in text:
        text = mask_uris(text)
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
    """A value or comment looks like a credential (API key, access token, private key).

    Plans are committed, reviewed in pull requests and copied into run
    configs: a token pasted into one (a value, a key, or a YAML comment) is
    leaked to everyone who can read the repository. Reference it by name (an
    environment variable or secret store) instead. Each provider's documented
    token shape is matched as a whole token (prefix, length, alphabet): OpenAI
    `sk-`/`sk-proj-`, Anthropic `sk-ant-api03-`, GitHub `ghp_` (36 characters)
    and `github_pat_`, AWS `AKIA`, Hugging Face `hf_`, Slack `xox?-`, Google
    `AIza`, PEM private keys. A name that merely contains a prefix
    (`grpo-sk-market-refund-window`) or a shortened example (`sk-proj-abc123…`)
    is not one. The message never repeats the value.

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
            x-api-key: sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901Vwx234
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
    # credential_kind() needs _ANY to match: a plan where no string holds it is not walked string by string.
    for route, text, is_key in _walk(ctx.data, ()) if _ANY.search(plan_strings(ctx)) else ():
        kind = credential_kind(text)
        if kind:
            where = "a key" if is_key else "this value"
            yield Problem(route, f"{where} looks like {kind}: remove it from the plan, revoke it, and reference the secret by name (e.g. an environment variable)", at_key=is_key)
    # The run configs the plan names (rules/run/): [env] values are injected verbatim and shown by the CLI.
    for document, route, text in string_values(ctx):
        kind = credential_kind(text)
        if kind:
            advice = "register it as a platform secret (osmosis secret set NAME) named in [secrets] required = [...]" \
                if getattr(document, "kind", None) in ("training", "eval") else "have the job's environment provide it (a secret of the runner or cluster)"
            yield Problem(route, f"this value looks like {kind}: remove it from the run config, revoke it, and {advice}", document=document)
