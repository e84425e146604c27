"""What a GitHub Actions run is about, read from `$GITHUB_EVENT_PATH` (the event payload).

The action reads the base revision here rather than from `${{ github.event... }}`
inside a shell script, where a value would be pasted into the script's text.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def payload(env: dict | None = None) -> dict:
    """The event payload, or {} when there is none or it cannot be read."""
    env = os.environ if env is None else env
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _get(data: Any, *route: str) -> Any:
    for key in route:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def base_sha(env: dict | None = None) -> str | None:
    """The revision a pull request (or merge-queue entry) is compared with, else None."""
    data = payload(env)
    for route in (("pull_request", "base", "sha"), ("merge_group", "base_sha")):
        value = _get(data, *route)
        if isinstance(value, str) and _SHA.match(value):
            return value
    return None


def pull_request_number(env: dict | None = None) -> int | None:
    data = payload(env)
    for value in (_get(data, "pull_request", "number"), data.get("number") if "pull_request" in data else None):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    if isinstance(_get(data, "issue", "pull_request"), dict):  # issue_comment on a pull request
        value = _get(data, "issue", "number")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


if __name__ == "__main__":  # python -m planlint.integrations.github_event base-sha (used by action.yml)
    import sys

    if sys.argv[1:] == ["base-sha"]:
        print(base_sha() or "")
        sys.exit(0)
    print("usage: python -m planlint.integrations.github_event base-sha", file=sys.stderr)
    sys.exit(2)
