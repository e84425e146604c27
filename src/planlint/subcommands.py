"""The subcommands: `planlint explain | rules | schema | init | comment | server`.

Each is dispatched by name from the command line (cli.main); what a command
needs is imported when it runs, so a lint never pays for them.
"""

from __future__ import annotations

import argparse
import sys

SUBCOMMANDS = ("explain", "rules", "schema", "init", "comment", "server")


class CommandExit(Exception):
    """Exit with `status`, printing `message` (if any) as `planlint: error: ...` (the CLI does)."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def run(name: str, argv: list[str]) -> int:
    """Run subcommand `name` with its arguments; its exit status."""
    if name == "explain":
        parser = argparse.ArgumentParser(prog="planlint explain", description="Explain a rule: rationale, a failing and a passing example.")
        parser.add_argument("code", help="rule code (PL102) or name (dataset-release-floating)")
        args = parser.parse_args(argv)
        from planlint.rules import RULES, rule_code

        code = rule_code(args.code)
        rule = RULES[code] if code is not None else None
        if rule is None:
            raise CommandExit(2, f"unknown rule {args.code!r}; `planlint rules` lists them")
        sys.stdout.write(explain_text(rule))
        return 0
    if name == "rules":
        parser = argparse.ArgumentParser(prog="planlint rules", description="List every rule.")
        parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
        args = parser.parse_args(argv)
        sys.stdout.write(rules_text(args.format))
        return 0
    if name == "schema":
        argparse.ArgumentParser(prog="planlint schema", description="Print the JSON Schema of the plan format.").parse_args(argv)
        import json

        from planlint.rules.schema import plan_schema

        sys.stdout.write(json.dumps(plan_schema(), indent=2) + "\n")
        return 0
    if name == "init":
        from planlint import scaffold

        return scaffold.main(argv)
    if name == "comment":
        from planlint.integrations import pr_comment

        try:
            return pr_comment.main(argv)
        except pr_comment.UsageError as exc:
            raise CommandExit(2, str(exc)) from None
    if name == "server":
        from planlint import serve  # answers `initialize` before the language server is loaded

        return serve.main(argv)
    raise CommandExit(2, f"unknown command {name}")  # pragma: no cover


def explain_text(rule) -> str:
    """What `planlint explain` prints: the same blocks as the rule's page under docs/rules/."""
    from planlint.formats.rule_docs import explain_text as render

    return render(rule)


def rules_text(fmt: str) -> str:
    from planlint.rules import RULES

    if fmt == "json":
        import json

        rows = [
            {"code": r.code, "name": r.name, "severity": r.severity, "fixable": r.fixable, "scope": r.scope, "summary": r.summary}
            for r in RULES.values()
        ]
        return json.dumps(rows, indent=2) + "\n"
    if fmt == "markdown":
        lines = ["| code | name | severity | fix | what it catches |", "|---|---|---|---|---|"]
        for r in RULES.values():
            summary = r.summary.replace("|", "\\|")
            lines.append(f"| {r.code} | {r.name} | {r.severity} | {'yes' if r.fixable else ''} | {summary} |")
        return "\n".join(lines) + "\n"
    width = max(len(r.name) for r in RULES.values())
    lines = [f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {'fix' if r.fixable else '   '}  {r.summary}" for r in RULES.values()]
    return "\n".join(lines) + "\n"
