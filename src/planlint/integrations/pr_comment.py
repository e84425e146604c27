"""`planlint comment --report REPORT.json`: one sticky summary comment per pull request.

The comment is the job summary's Markdown behind a hidden marker
(`<!-- planlint:sticky-comment -->`): the first run with findings creates it,
later runs update it in place (also when the plan became clean, so a stale
comment never claims errors that are gone). A clean run with no comment yet
creates none.

Reads GITHUB_API_URL, GITHUB_REPOSITORY and GITHUB_EVENT_PATH (the pull
request number); the token from PLANLINT_GITHUB_TOKEN or GITHUB_TOKEN. Only
a marked comment written by the token's own identity is updated (GET /user
for a user token; for an installation token `--author` /
PLANLINT_COMMENT_AUTHOR, default `github-actions[bot]`): a comment that
someone else started with the marker is never adopted. A
comment that cannot be posted is a warning (exit 0): it never changes the
lint result, which comes from the lint run itself. A report that cannot be
read is exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from planlint.core.messages import sanitize
from planlint.core.model import Finding, Report
from planlint.formats.github import escape_data
from planlint.formats.markdown import COMMENT_LIMIT, STICKY_MARKER, render_within  # COMMENT_LIMIT: GitHub's maximum comment body
from planlint.integrations import github_event


class UsageError(Exception):
    """Exit status 2 with this message."""


_FIELDS = {
    "code": str, "name": str, "severity": str, "path": str, "line": int, "column": int,
    "end_line": int, "end_column": int, "message": str, "yaml_path": str,
}


def load_report(path: str) -> Report:
    """A Report from `planlint --format json` output."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON ({exc}); write it with planlint --output json=FILE") from None
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("findings"), list):
        raise UsageError(f"{path} is not a planlint JSON report (version 1); write it with planlint --output json=FILE")
    report = Report(files=data.get("files") if isinstance(data.get("files"), int) else 0)
    for index, item in enumerate(data["findings"]):
        if not isinstance(item, dict) or any(
            not isinstance(item.get(key), kind) or isinstance(item.get(key), bool) for key, kind in _FIELDS.items()
        ):
            raise UsageError(f"{path}: findings[{index}] lacks one of {', '.join(_FIELDS)}")
        report.findings.append(Finding(**{key: item[key] for key in _FIELDS}))
    if "changes" in data:  # diff mode: the change cards and committed spend, rendered as they are
        changes, spend = data.get("changes"), data.get("committed_spend")
        if not isinstance(changes, list) or not all(isinstance(c, dict) for c in changes) or not isinstance(spend, dict):
            raise UsageError(f"{path}: changes must be a list of change cards and committed_spend a mapping")
        report.changes, report.committed_spend = changes, spend
    missing = data.get("missing_inputs", {})
    if not isinstance(missing, dict) or not all(
        isinstance(items, list) and all(isinstance(item, str) for item in items) for items in missing.values()
    ):
        raise UsageError(f"{path}: missing_inputs must map plan paths to lists of strings")
    report.missing_inputs = {str(plan): list(items) for plan, items in missing.items()}
    for key in ("catalog_added", "suppressions_added"):  # diff mode's additive keys
        value = data.get(key)
        if isinstance(value, list):
            report.review[key] = [entry for entry in value if isinstance(entry, dict)]
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="planlint comment",
        description="Create or update the pull request's planlint comment from a JSON report.",
        epilog="Environment: GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_EVENT_PATH; token in PLANLINT_GITHUB_TOKEN or GITHUB_TOKEN; "
               "PLANLINT_COMMENT_AUTHOR for --author.",
    )
    parser.add_argument("--report", required=True, metavar="FILE", help="the report written by planlint --output json=FILE")
    parser.add_argument("--pull-request", type=int, metavar="N", help="the pull request number (default: from the event payload)")
    parser.add_argument("--repository", metavar="OWNER/NAME", help="default: $GITHUB_REPOSITORY")
    parser.add_argument(
        "--author", metavar="LOGIN",
        help="the login comments written with an installation token carry, e.g. my-app[bot] for a GitHub App's token "
             "(default: $PLANLINT_COMMENT_AUTHOR, else github-actions[bot]; a user token's login is read from GET /user)",
    )
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per-request read timeout (default 30; connect: 10)")
    parser.add_argument("--max-wait", type=float, default=60.0, metavar="SECONDS", help="total time to spend waiting between retries (default 60)")
    parser.add_argument("--dry-run", action="store_true", help="print the comment instead of posting it")
    return parser


def _warn(message: str) -> None:
    message = sanitize(message)  # one line, whatever a server put into it
    print(f"planlint: warning: {message}", file=sys.stderr)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        print(f"::warning title=planlint comment::{escape_data(message)}", flush=True)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.timeout <= 0 or args.max_wait < 0:
        raise UsageError("--timeout must be > 0 and --max-wait >= 0")
    report = load_report(args.report)

    body = render_within(report, COMMENT_LIMIT, marker=STICKY_MARKER, what="GitHub's limit of 65,536 characters for a comment")
    if args.dry_run:
        sys.stdout.write(body)
        return 0

    number = args.pull_request or github_event.pull_request_number()
    if number is None:
        print("planlint: not a pull request (no number in $GITHUB_EVENT_PATH, no --pull-request): no comment", file=sys.stderr)
        return 0
    repo = args.repository or os.environ.get("GITHUB_REPOSITORY", "")
    token = os.environ.get("PLANLINT_GITHUB_TOKEN") or os.environ.get("GITHUB_TOKEN") or ""
    if not token:
        _warn("no token in PLANLINT_GITHUB_TOKEN or GITHUB_TOKEN: the pull request comment was not posted")
        return 0
    from importlib.util import find_spec

    if find_spec("requests") is None:
        _warn("the pull request comment needs requests: pip install 'planlint[http]'")
        return 0

    # Deliberately lazy: the HTTP client only once requests is known to be installed.
    from planlint.integrations.github_api import DEFAULT_API_URL, GitHub, upsert_sticky_comment
    from planlint.services.http import HTTPError, RetryPolicy, scrub

    try:
        client = GitHub(
            token, os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL,
            timeout=(10.0, args.timeout), policy=RetryPolicy(max_wait=args.max_wait),
        )
        action, comment = upsert_sticky_comment(
            client, repo, number, body, STICKY_MARKER, create=bool(report.findings or report.changes or any(report.review.values())),
            app_login=args.author or os.environ.get("PLANLINT_COMMENT_AUTHOR", ""),
        )
    except HTTPError as exc:
        _warn(f"the pull request comment was not posted: {exc}")
        return 0
    except Exception as exc:  # noqa: BLE001 - commenting must never hide the lint result
        _warn(scrub(f"the pull request comment was not posted: {type(exc).__name__}", [token]))
        return 0
    if action == "skipped":
        print(f"planlint: no findings, nothing added to silence them, and no earlier comment on #{number}: nothing to post", file=sys.stderr)
    else:
        url = comment.get("html_url") if isinstance(comment, dict) else None
        url = sanitize(url[:300]) if isinstance(url, str) else None
        print(f"planlint: {action} the comment on #{number}{': ' + url if isinstance(url, str) else ''}", file=sys.stderr)
    return 0
