"""`planlint init [NAME]`: write a new plan from a commented template.

The template passes the schema and the pinning, split and grader rules, but
fails on purpose until the author makes the decisions no template can make:
the baseline (PL404), the spending cap (PL501) and, for SFT, the review of the
target answers (PL605). Placeholders read `TODO...` so that they are easy to
find. The templates are package data: `planlint/data/init-{grpo,sft}.yaml`;
the written plan starts with the yaml-language-server modeline naming the
published schema, so editors validate, complete and explain it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from planlint.core.messages import show

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
DEFAULT_NAME = "new-experiment"
# The published JSON Schema, for editors: yaml-language-server (VS Code's YAML
# extension and others) reads the modeline on a plan's first line.
SCHEMA_URL = "https://raw.githubusercontent.com/planlint/planlint/main/schemas/plan.schema.json"
MODELINE = f"# yaml-language-server: $schema={SCHEMA_URL}"
METHODS = ("grpo", "sft")


def template(method: str, name: str, path: str) -> str:
    from importlib.resources import files

    text = files("planlint").joinpath(f"data/init-{method}.yaml").read_text(encoding="utf-8")
    return MODELINE + "\n" + text.replace("__NAME__", name).replace("__PATH__", path)


def _error(message: str) -> int:
    print(f"planlint: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="planlint init",
        description="Write a new experiment plan from the commented template (plans/NAME.yaml).",
    )
    parser.add_argument("name", nargs="?", default=DEFAULT_NAME, metavar="NAME", help=f"the plan's metadata.name and file name (default: {DEFAULT_NAME})")
    parser.add_argument("--method", choices=METHODS, default="grpo", help="the training method the template is shaped for (default: grpo)")
    parser.add_argument("--dir", default="plans", metavar="DIR", help="directory to write the plan in (default: plans)")
    args = parser.parse_args(argv)
    if not SLUG.match(args.name):
        return _error(f"{show(args.name)} is not a valid plan name: use lowercase letters, digits and hyphens, starting with a letter or digit (at most 63 characters)")
    directory = Path(args.dir)
    path = directory / f"{args.name}.yaml"
    shown = path.as_posix()
    text = template(args.method, args.name, shown)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8", newline="\n") as fh:  # "x": never overwrite
            fh.write(text)
    except FileExistsError:
        return _error(f"{shown} already exists: edit it, or choose another NAME")
    except OSError as exc:
        return _error(f"cannot write {shown}: {exc.strerror or type(exc).__name__}")
    print(f"Wrote {shown} ({args.method}). Replace the TODOs, measure the baseline and set budget.max_spend; then run: planlint {shown}")
    return 0
