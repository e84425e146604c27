"""Accepted findings (a baseline file): `--write-baseline FILE` and `--baseline FILE`.

Adopting planlint on a repository with existing plans should not mean fixing
everything first. `--write-baseline FILE` records today's findings; later runs
with `--baseline FILE` report only findings that are not in it, so a pull
request is judged on what it adds.

The file is JSON, meant to be committed and reviewed:

    {
      "version": 1,
      "generated_by": "planlint 0.1.0",
      "findings": [
        {"path": "plans/retail.yaml", "code": "PL205", "name": "eval-not-frozen",
         "yaml_path": "splits.eval.frozen", "count": 1}
      ]
    }

A finding is matched by (path, code, yaml_path), never by line, so edits
elsewhere in a plan do not invalidate it. `count` is how many findings share
that key: two identical findings need a count of 2. `path` is relative to the
directory that holds the baseline file (so it does not matter where planlint
runs from); `name` and `generated_by` are for readers and are not checked.

An entry that no longer matches (the problem was fixed, or the plan moved) is
stale: it is reported on standard error, whatever the output format (the JSON
report's shape is fixed by the spec), for files checked in this run and for
files that no longer exist. Stale entries never change the exit status.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Iterable

from planlint import __version__
from planlint.core.messages import json_text, sanitize
from planlint.core.model import Finding, Report
from planlint.rules import RULES

VERSION = 1
_CODE = re.compile(r"^PL[0-9]{3}$")

Key = tuple[str, str, str]  # (path relative to the baseline's directory, code, yaml_path)


class BaselineError(Exception):
    """A baseline file that cannot be used: exit status 2."""


def _base_dir(baseline: str) -> str:
    return os.path.dirname(os.path.abspath(baseline))


def _key_path(path: str, base_dir: str) -> str:
    return os.path.relpath(os.path.abspath(path), base_dir).replace(os.sep, "/")


def key_of(finding: Finding, base_dir: str) -> Key:
    return (_key_path(finding.path, base_dir), finding.code, finding.yaml_path)


def write_baseline(baseline: str, report: Report) -> tuple[int, int]:
    """Write every finding of `report` to `baseline`; (findings, entries) written."""
    base_dir = _base_dir(baseline)
    counts = Counter(key_of(f, base_dir) for f in report.findings)
    entries = [
        {"path": path, "code": code, "name": RULES[code].name if code in RULES else "", "yaml_path": yaml_path, "count": count}
        for (path, code, yaml_path), count in sorted(counts.items())
    ]
    payload = {"version": VERSION, "generated_by": f"planlint {__version__}", "findings": entries}
    try:
        with open(baseline, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(json_text(payload) + "\n")
    except OSError as exc:
        raise BaselineError(f"cannot write baseline {baseline}: {exc.strerror or exc}") from None
    return sum(counts.values()), len(entries)


def load_baseline(baseline: str) -> Counter:
    """The accepted findings in `baseline`, as {key: count}; BaselineError when it is broken."""
    fix = f"fix it, or write a new one with --write-baseline {baseline}"
    try:
        with open(baseline, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise BaselineError(f"baseline {baseline} not found: create it with --write-baseline {baseline}") from None
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {baseline}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BaselineError(f"baseline {baseline} is not UTF-8 text: {fix}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {baseline} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}): {fix}") from None
    except RecursionError:
        raise BaselineError(f"baseline {baseline} is nested too deeply to be a baseline: {fix}") from None
    if not isinstance(data, dict) or "findings" not in data:
        raise BaselineError(f"baseline {baseline} is not a planlint baseline (expected an object with \"version\" and \"findings\"): {fix}")
    if data.get("version") != VERSION or isinstance(data.get("version"), bool):
        raise BaselineError(f"baseline {baseline} has version {sanitize(json.dumps(data.get('version')))[:40]}; this planlint reads version {VERSION}: {fix}")
    findings = data["findings"]
    if not isinstance(findings, list):
        raise BaselineError(f"baseline {baseline}: \"findings\" must be a list: {fix}")
    accepted: Counter = Counter()
    for index, entry in enumerate(findings):
        where = f"baseline {baseline}: findings[{index}]"
        if not isinstance(entry, dict):
            raise BaselineError(f"{where} must be an object with path, code, yaml_path and count: {fix}")
        path, code, yaml_path, count = entry.get("path"), entry.get("code"), entry.get("yaml_path"), entry.get("count")
        if not isinstance(path, str) or not path:
            raise BaselineError(f"{where}.path must be a non-empty string: {fix}")
        if not isinstance(code, str) or not _CODE.match(code):
            raise BaselineError(f"{where}.code must be a rule code such as \"PL205\": {fix}")
        if not isinstance(yaml_path, str):
            raise BaselineError(f"{where}.yaml_path must be a string (\"\" for the whole file): {fix}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise BaselineError(f"{where}.count must be a whole number of at least 1: {fix}")
        accepted[(path.replace("\\", "/"), code, yaml_path)] += count
    return accepted


def apply_baseline(report: Report, accepted: Counter, baseline: str) -> list[tuple[Key, int, int]]:
    """Drop accepted findings from `report`; return the stale entries as (key, unmatched, count).

    An entry is stale when fewer findings match it than its count, and its
    file was checked in this run or no longer exists (an entry for a file this
    run did not look at says nothing either way).
    """
    base_dir = _base_dir(baseline)
    remaining = Counter(accepted)
    kept = []
    for finding in report.findings:
        key = key_of(finding, base_dir)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            kept.append(finding)
    report.findings = kept
    checked = {_key_path(p, base_dir) for p in report.paths}
    stale = []
    for key, left in sorted(remaining.items()):
        if left > 0 and (key[0] in checked or not os.path.lexists(os.path.join(base_dir, key[0]))):
            stale.append((key, left, accepted[key]))
    return stale


def stale_text(baseline: str, stale: Iterable[tuple[Key, int, int]]) -> str:
    stale = list(stale)
    if not stale:
        return ""
    total = sum(left for _, left, _ in stale)
    lines = [
        f"planlint: baseline {sanitize(baseline)}: {total} accepted finding{'s' if total != 1 else ''} no longer "
        f"occur{'s' if total == 1 else ''}; remove {'it' if total == 1 else 'them'} from the file (or rerun --write-baseline):"
    ]
    for (path, code, yaml_path), left, count in stale:
        where = yaml_path or "(whole file)"
        part = f" ({left} of {count})" if count > 1 else ""
        lines.append(f"  {sanitize(path)}: {code} at {sanitize(where)}{part}")
    return "\n".join(lines) + "\n"
