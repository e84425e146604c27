"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Every rule is described in `tool.driver.rules` (summary, rationale, examples,
default level, tags), so a viewer needs nothing but the file; its `helpUri`
is the rule's own page, docs/rules/CODE.md. Results point
at repository-relative URIs under `%SRCROOT%`.

`partialFingerprints` identify a finding across runs without line numbers:
they hash the path, the rule code, the YAML path and the finding's rank among
findings with the same three (two suppression comments in one file, say).
Inserting or deleting unrelated lines therefore keeps every alert the same
alert, which is what code scanning needs to track it (and to close it when
it is fixed).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import quote

from planlint import __version__
from planlint.core.messages import json_text
from planlint.core.model import Finding, Report
from planlint.core.paths import repo_relative, source_root
from planlint.formats.rule_docs import help_uri
from planlint.rules import RULES

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/planlint/planlint"
FINGERPRINT_KEY = "planlintFinding/v1"

_FAMILIES = {
    "PL0": "file",
    "PL1": "pinning",
    "PL2": "splits",
    "PL3": "graders",
    "PL4": "baseline",
    "PL5": "budget",
    "PL6": "decision",
    "PL7": "diff",
    "PL8": "secrets",
}


# What GitHub code scanning reads for security rules: `security-severity` (a
# CVSS-like score as a string, 7.0-8.9 is "high") ranks the alert, `precision`
# says how often a finding is real. PL801 matches credentials by their issuers'
# fixed prefixes and shapes (sk-, ghp_, AKIA, BEGIN PRIVATE KEY, ...), so a
# finding is nearly always a real credential: high precision; a credential
# committed to a repository is exposed to everyone with read access and stays
# in its history: high severity.
SECURITY = {"PL801": {"security-severity": "8.0", "precision": "high"}}


def _level(severity: str) -> str:
    return "error" if severity == "error" else "warning"


def rule_descriptor(rule) -> dict:
    parts = rule.sections()
    text = [parts["summary"]]
    markdown = [parts["summary"]]
    if parts["rationale"]:
        text += ["", parts["rationale"]]
        markdown += ["", parts["rationale"]]
    for title, key in (("Example (fails)", "fails"), ("Example (passes)", "passes")):
        if parts[key]:
            text += ["", f"{title}:", *("    " + line for line in parts[key].rstrip("\n").splitlines())]
            markdown += ["", f"**{title}:**", "", "```yaml", parts[key].rstrip("\n"), "```"]
    silence = f"Silence it on one line with `# planlint: disable={rule.code} -- <reason>`."
    text += ["", silence.replace("`", "")]
    markdown += ["", silence]
    tags = ["planlint", _FAMILIES.get(rule.code[:3], "other")]
    properties: dict = {"tags": tags, "fixable": rule.fixable, "scope": rule.scope}
    if rule.code in SECURITY:
        tags.append("security")
        properties.update(SECURITY[rule.code])
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": parts["summary"]},
        "fullDescription": {"text": parts["rationale"] or parts["summary"]},
        "help": {"text": "\n".join(text), "markdown": "\n".join(markdown)},
        "helpUri": help_uri(rule.code),
        "defaultConfiguration": {"level": _level(rule.severity)},
        "properties": properties,
    }


def fingerprints(findings: list[Finding]) -> list[str]:
    """One stable hash per finding (see the module docstring), in the same order."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    relative: dict[str, str] = {}
    for f in sorted(findings, key=lambda f: f.sort_key):
        if f.path not in relative:
            relative[f.path] = repo_relative(f.path) or f.path
        key = (relative[f.path], f.code, f.yaml_path)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        digest = hashlib.sha256("\x00".join((*key, str(rank))).encode("utf-8")).hexdigest()
        out.append((f, digest[:32]))
    by_id = {id(f): digest for f, digest in out}
    return [by_id[id(f)] for f in findings]


def _artifact_location(path: str) -> dict:
    rel = repo_relative(path)
    if rel is not None:
        return {"uri": quote(rel, safe="/"), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(os.path.abspath(path)).as_uri()}


def format_sarif(report: Report, **_: object) -> str:
    rules = [rule_descriptor(rule) for rule in RULES.values()]
    index = {code: i for i, code in enumerate(RULES)}  # every finding's code is a registered rule
    results = []
    locations: dict[str, dict] = {}
    for finding, fingerprint in zip(report.findings, fingerprints(report.findings)):
        if finding.path not in locations:
            locations[finding.path] = _artifact_location(finding.path)
        results.append(
            {
                "ruleId": finding.code,
                "ruleIndex": index[finding.code],
                "level": _level(finding.severity),
                "message": {"text": finding.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": dict(locations[finding.path]),
                            "region": {
                                "startLine": finding.line,
                                "startColumn": finding.column,
                                "endLine": max(finding.end_line, finding.line),
                                "endColumn": max(finding.end_column, 1),
                            },
                        },
                        **(
                            {"logicalLocations": [{"fullyQualifiedName": finding.yaml_path, "kind": "member"}]}
                            if finding.yaml_path
                            else {}
                        ),
                    }
                ],
                "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
            }
        )
    invocation = {
        "executionSuccessful": True,
        "toolExecutionNotifications": [{"message": {"text": note}, "level": "note"} for note in report.notes],
    }
    if not report.notes:
        del invocation["toolExecutionNotifications"]
    run = {
        "tool": {
            "driver": {
                "name": "planlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(source_root()).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "results": results,
    }
    return json_text({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}) + "\n"
