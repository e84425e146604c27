"""A rule's documentation, from its docstring: `planlint explain` and docs/rules/PLxxx.md.

Both are rendered from the same blocks (`_blocks`), so the terminal and the
page say the same thing; `scripts/update_rule_docs.py` writes the pages and
tests/test_rule_pages.py fails when one is stale. SARIF points each rule's
`helpUri` at its page.
"""

from __future__ import annotations

DOCS_URI = "https://github.com/planlint/planlint/blob/main/docs/rules/"
GENERATED = "<!-- Generated from the rule's docstring by scripts/update_rule_docs.py: do not edit. -->"


def help_uri(code: str) -> str:
    """The rule's page on GitHub."""
    return f"{DOCS_URI}{code}.md"


def _title(rule) -> str:
    flags = [rule.severity] + (["fixable with --fix"] if rule.fixable else [])
    return f"{rule.code} {rule.name} ({', '.join(flags)})"


def _blocks(rule) -> list[tuple[str, str]]:
    """(kind, text): 'title', 'para' (prose) or 'example' (a titled YAML fragment)."""
    parts = rule.sections()
    blocks = [("title", _title(rule)), ("para", parts["summary"])]
    if parts["rationale"]:
        blocks += [("para", paragraph) for paragraph in parts["rationale"].split("\n\n")]
    if rule.scope == "diff":
        blocks.append((
            "para",
            "Runs only with --diff-base REV. The examples show the plan at the base revision (# base)\n"
            "and as the change leaves it (# head).",
        ))
    if rule.scope == "policy":
        blocks.append((
            "para",
            "Runs only with --diff-base REV. The examples show the configuration file (.planlint.yaml)\n"
            "at the base revision (# base) and as the pull request leaves it (# head).",
        ))
    for title, key in (("Example (fails)", "fails"), ("Example (passes)", "passes")):
        if parts[key]:
            blocks.append(("example", f"{title}:\n{parts[key].rstrip()}"))
    if rule.scope == "policy":  # a configuration file takes no suppression comments
        blocks.append(("para", f"A configuration file takes no suppression comments: turn {rule.code} off with\n"
                               f"ignore: [{rule.code}] in the base branch's configuration, or --ignore {rule.code}."))
    else:
        blocks.append(("silence", f"# planlint: disable={rule.code} -- <reason>"))
    return blocks


def explain_text(rule) -> str:
    """What `planlint explain CODE` prints."""
    out: list[str] = []
    for kind, text in _blocks(rule):
        if kind == "example":
            title, _, body = text.partition("\n")
            out.append(title)
            out += ["    " + line if line else "" for line in body.splitlines()]
        elif kind == "silence":
            out.append(f"Silence it on one line with: {text}")
        else:
            out.append(text)
        out.append("")
    return "\n".join(out[:-1]) + "\n"


def rule_page(rule) -> str:
    """docs/rules/CODE.md."""
    out = [GENERATED, ""]
    for kind, text in _blocks(rule):
        if kind == "title":
            out.append(f"# {text}")
        elif kind == "example":
            title, _, body = text.partition("\n")
            out += [f"## {title.rstrip(':')}", "", "```yaml", body, "```"]
        elif kind == "silence":
            out += ["## Silencing", "", f"Silence it on one line with: `{text}`"]
        else:
            out.append(text)
        out.append("")
    out += [
        f"Scope: `{rule.scope}`. The plan format and every rule: [docs/plan-format.md](../plan-format.md);"
        " all rules: [index](README.md).",
    ]
    return "\n".join(out) + "\n"


def index_page(rules) -> str:
    """docs/rules/README.md: one row per rule, linking its page."""
    out = [GENERATED, "", "# planlint rules", "", "| code | name | severity | what it catches |", "|---|---|---|---|"]
    for rule in rules:
        summary = rule.summary.replace("|", "\\|")
        out.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.severity} | {summary} |")
    return "\n".join(out) + "\n"


def pages(rules) -> dict[str, str]:
    """File name under docs/rules/ -> its text, for every rule and the index."""
    rules = list(rules)
    out = {f"{rule.code}.md": rule_page(rule) for rule in rules}
    out["README.md"] = index_page(rules)
    return out
