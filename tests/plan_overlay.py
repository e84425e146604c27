"""Build whole plans from the fragments rule docstrings and fixtures use.

A fragment's top-level sections replace the reference plan's sections of the
same name (in place); sections the reference lacks are appended. Directives,
as comment lines in the fragment:

  # whole file            the fragment is the whole file
  # without: a, b         drop these top-level sections of the reference
  # config: {...}         (read by callers) settings for the run
  # encoding: latin-1     (read by callers) write the file in this encoding
  # two files             (read by callers) lint two copies of the plan

Other files of the repository follow the plan fragment, each after a line
`--- PATH` (a run config, a rollout's entrypoint): `split_files()`; a PATH
ending in `/` is an empty directory (the workspace's `data/`).
"""

from __future__ import annotations

import re
from pathlib import Path

REFERENCE = (Path(__file__).resolve().parent / "fixtures" / "reference_plan.yaml").read_text(encoding="utf-8")
_TOP = re.compile(r"^([A-Za-z_][\w-]*):")


def directives(fragment: str) -> dict[str, str]:
    found = {}
    for line in fragment.splitlines():
        m = re.match(r"^#\s*(whole file|two files|found in a directory|without|config|encoding|base|catalog)\s*(?::\s*(.*))?$", line.strip())
        if m:
            found[m.group(1)] = (m.group(2) or "").strip()
    return found


def _blocks(text: str) -> list[tuple[str | None, list[str]]]:
    blocks: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        m = _TOP.match(line)
        if m:
            blocks.append((m.group(1), [line]))
        else:
            blocks[-1][1].append(line)
    return blocks


def build(fragment: str, reference: str = REFERENCE) -> str:
    d = directives(fragment)
    if "whole file" in d:
        return fragment
    without = {s.strip() for s in d.get("without", "").split(",") if s.strip()}
    replacements = {key: lines for key, lines in _blocks(fragment) if key}
    out: list[str] = []
    used = set()
    for key, lines in _blocks(reference):
        if key in without:
            continue
        if key in replacements:
            out.extend(replacements[key])
            used.add(key)
        else:
            out.extend(lines)
    for key, lines in replacements.items():
        if key not in used:
            out.extend(lines)
    return "\n".join(out) + "\n"


_FILE = re.compile(r"^--- (\S+)\s*$", re.M)


def split_files(fragment: str) -> tuple[str, dict[str, str]]:
    """(the plan fragment, {repository path: text}) of a fragment with `--- PATH` sections."""
    parts = _FILE.split(fragment)
    files = {path: (text.lstrip("\n") if text.strip() else "") for path, text in zip(parts[1::2], parts[2::2])}
    return parts[0], files


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
