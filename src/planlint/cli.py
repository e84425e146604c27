"""The command line (spec section 5).

Start-up matters (a pre-commit hook runs on every commit): only what a given
command needs is imported, and only when it needs it. The imports inside the
functions of this module are therefore deliberate; the layering contract
(pyproject.toml, [tool.importlinter]) sees them like any other import.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
from dataclasses import replace
from pathlib import Path

from planlint.subcommands import SUBCOMMANDS, CommandExit as _Exit, explain_text, rules_text, run as _subcommand

__all__ = ["entry", "explain_text", "main", "rules_text"]

FORMATS = ("text", "json", "sarif", "github", "junit", "markdown", "gitlab")
MAX_NOTES = 10
REPORT_URL = "https://github.com/planlint/planlint/issues"


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own, as wide as shutil.get_terminal_size() would make it, without importing shutil.

    argparse makes a formatter for every add_argument; the default one imports
    shutil (and with it bz2, lzma and zlib) to size itself: a pre-commit hook's
    start-up pays for that on every commit.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else the terminal's width, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _lint_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="planlint",
        formatter_class=_HelpFormatter,
        description="Lint ML post-training experiment plans (planlint/v1).",
        epilog="Configuration: .planlint.yaml or [tool.planlint] in pyproject.toml, found from the working directory up to the "
        "repository root (from --stdin-filename's directory for -): select, ignore, severity (CODE: error|warning, or CODE: "
        "{STATUS: error|warning} by metadata.status), per-file-ignores (GLOB: \"CODES -- reason\"), exclude, catalog, registry, "
        "data, limits, budget, approvers, calibration, max_file_size, max_spend_limit, cache_dir (docs/plan-format.md, section 4). "
        "Other commands: planlint explain CODE | planlint rules [--format json] | planlint schema | planlint init [NAME]"
        " | planlint comment --report REPORT.json | planlint server",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files and directories to lint (default: plans/); - reads one plan from standard input")
    parser.add_argument("-V", "--version", action="version", version=_version_text(), help="print planlint's version and exit")
    parser.add_argument("--format", choices=FORMATS, help="output format (default: text; github under GitHub Actions); gitlab: a GitLab Code Quality report")
    parser.add_argument(
        "--output", metavar="[FORMAT=]FILE", action="append", default=[],
        help="FILE: write the --format report to FILE instead of standard output; FORMAT=FILE (repeatable): "
        "also write that format to FILE, e.g. --output sarif=planlint.sarif",
    )
    parser.add_argument(
        "--summary", metavar="FILE",
        help="write a Markdown summary to FILE (default under GitHub Actions: append to $GITHUB_STEP_SUMMARY)",
    )
    parser.add_argument("--no-summary", action="store_true", help="write no Markdown summary, not even under GitHub Actions")
    parser.add_argument(
        "--github-output", metavar="FILE",
        help="append the report's counts as `errors=N` and `warnings=N` lines to FILE (the action passes $GITHUB_OUTPUT)",
    )
    parser.add_argument(
        "--skip-non-plans", action="store_true",
        help="treat named files like discovered ones: skip files that are not plans instead of reporting PL004 (for pre-commit)",
    )
    parser.add_argument(
        "--changed-files", action="store_true",
        help="the PATHs are the files a commit changes (the pre-commit hook passes them): lint the plans among them, and the plans "
        "under plans/ whose split files or run configs are among them (every plan when the config or the catalog is); other files are ignored",
    )
    parser.add_argument(
        "--stdin-filename", metavar="PATH",
        help="with PATH -: the path of the plan read from standard input, as if it were there (configuration, exclude, "
        "per-file-ignores, relative split paths, the repository's other plans)",
    )
    parser.add_argument("--select", metavar="CODES", action="append", help="comma-separated codes or prefixes to enable (replaces the config's select; repeatable)")
    parser.add_argument("--ignore", metavar="CODES", action="append", help="comma-separated codes or prefixes to disable (added to the config's ignore; repeatable)")
    parser.add_argument("--config", metavar="FILE", help="use this config file instead of looking one up")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, one line each")
    parser.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    parser.add_argument("--no-color", action="store_true", help="never colour the text output")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are reported (2 still means a usage, configuration or internal error)")
    parser.add_argument(
        "--fail-on", choices=("error", "warning"), default="error",
        help="the lowest severity that makes the exit status 1 (default: error; warning: any finding fails)",
    )
    parser.add_argument("--diff-base", metavar="REV", help="lint only plans changed since the merge-base of REV and HEAD, and run the PL7xx rules")
    accepted = parser.add_mutually_exclusive_group()
    accepted.add_argument("--baseline", metavar="FILE", help="report only findings not accepted in FILE (see --write-baseline)")
    accepted.add_argument("--write-baseline", metavar="FILE", help="accept every current finding: write them to FILE and exit 0")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes in place, keeping comments and layout; then report what remains")
    parser.add_argument("--diff", action="store_true", help="with --fix: print the fixes as a unified diff and write nothing")
    parser.add_argument("--online", action="store_true", help="check pins against the configured registry")
    parser.add_argument("--jobs", "-j", type=_jobs, metavar="N", help="lint in N processes (default: the available CPUs; small inputs use one)")
    parser.add_argument("--cache-dir", metavar="DIR", help="where lint results, data-check results and registry answers are cached (default: cache_dir from the config, else .planlint_cache/ beside the config)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write cached lint results, data-check results or registry answers")
    parser.add_argument("--require-data", action="store_true", help="a split path that does not exist locally is an error (default: data checks are skipped with a note)")
    return parser


def _version_text() -> str:
    from planlint import __version__

    return f"planlint {__version__}"


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes >= 1, got {value!r}")
    return jobs


# Set by entry(): this process is planlint's own, so it may skip what a library call may not.
_WHOLE_PROCESS = False


def entry() -> None:
    """The console script and `python -m planlint`: main() as a whole process, started and ended fast.

    A pre-commit hook starts planlint on every commit, so start-up and exit are
    much of its time. Everything imported lives until the process ends, so the
    cyclic garbage collector waits until the imports are done (`_imports_done`);
    and once the output is flushed the process ends with os._exit, skipping the
    interpreter's teardown (freeing every module: milliseconds that change
    nothing), unless an atexit handler or another thread is there to be run or
    joined: then it exits normally.
    """
    global _WHOLE_PROCESS
    _WHOLE_PROCESS = True
    gc.disable()
    status = main()
    if not isinstance(status, int) or not 0 <= status <= 255:
        sys.exit(status)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken stream: the normal exit reports it as it always did
        sys.exit(status)
    if _nothing_left_to_run():
        os._exit(status)
    sys.exit(status)


def _nothing_left_to_run() -> bool:
    """No atexit handler, no other thread, no profiler or tracer (`python -m cProfile -m planlint` writes
    its statistics after the program returns): the interpreter's teardown would only free memory."""
    callbacks = getattr(atexit, "_ncallbacks", None)
    if callbacks is None or callbacks() != 0 or sys.getprofile() is not None or sys.gettrace() is not None:
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _imports_done() -> None:
    """Under entry(): the long-lived objects are made; freeze them out of the collector's way and turn it on."""
    if _WHOLE_PROCESS and not gc.isenabled():
        gc.freeze()
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            _imports_done()
            return _subcommand(argv[0], argv[1:])
        return _lint(argv)
    except SystemExit as exc:  # argparse: usage errors and --help
        return exc.code if isinstance(exc.code, int) else 2
    except _Exit as exc:
        if exc.message:
            from planlint.core.messages import sanitize

            print(f"planlint: error: {sanitize(exc.message)}", file=sys.stderr)  # one line, whatever a config held
        return exc.status
    except KeyboardInterrupt:
        print("planlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
    except Exception as exc:  # noqa: BLE001 - never a traceback
        detail = _scrub_secrets(str(exc).splitlines()[0]) if str(exc) else ""
        print(
            f"planlint: internal error: {type(exc).__name__}{': ' + detail[:200] if detail else ''}. "
            f"This is a bug in planlint; please report it at {REPORT_URL} with the input that caused it.",
            file=sys.stderr,
        )
        return 2


def _scrub_secrets(text: str) -> str:
    """Text safe to print: no value of a token-like environment variable, nothing shaped like a credential."""
    from planlint.services.http import scrub
    from planlint.core.messages import sanitize
    from planlint.rules.secrets import redact

    secret_names = ("TOKEN", "SECRET", "PASSWORD", "API_KEY", "APIKEY")
    secrets = [v for k, v in os.environ.items() if len(v) >= 8 and any(n in k.upper() for n in secret_names)]
    return sanitize(redact(scrub(text, sorted(secrets, key=len, reverse=True))))


def _lint(argv: list[str]) -> int:
    args = _lint_parser().parse_args(argv)
    from planlint.core.config import ConfigError, check_selectors, codes_list, load_config
    from planlint.core.model import UsageError
    from planlint.engine.run import lint_paths
    from planlint.rules import RULES, resolved, rule_names

    _imports_done()
    stdin = _stdin_target(args)
    names = rule_names()  # rules may be named wherever their codes go
    try:
        # A plan on standard input is linted as if it were at --stdin-filename: its configuration is found from there.
        start = Path(os.path.dirname(os.path.abspath(args.stdin_filename))) if args.stdin_filename else None
        config = load_config(args.config, start, codes=RULES, names=names)
    except ConfigError as exc:
        raise _Exit(2, str(exc)) from None
    policy = None
    if args.diff_base is not None and not args.fix:
        # A pull request is judged by the merge-base's configuration and catalog, not by the ones it brings.
        from planlint.modes.diff_policy import base_policy

        try:
            policy = base_policy(args.config, args.diff_base, config)
        except (UsageError, ConfigError) as exc:
            raise _Exit(2, str(exc)) from None
        config = policy.config
    for target in [config] + ([policy.head_config] if policy is not None else []):
        if args.select:
            target.select = [c for value in args.select for c in codes_list(value, names)]
        if args.ignore:
            target.ignore = target.ignore + [c for value in args.ignore for c in codes_list(value, names)]
    problem = check_selectors(config.select + config.ignore, RULES)
    if problem:
        raise _Exit(2, f"--select/--ignore: {problem}")
    paths = [] if stdin is not None or args.changed_files else args.paths or ["plans/"]
    if args.diff and not args.fix:
        raise _Exit(2, "--diff shows what --fix would change: use --fix --diff")
    if args.fix and (args.diff_base is not None or args.write_baseline is not None):
        raise _Exit(2, "--fix edits the files given; it cannot be combined with --diff-base or --write-baseline")
    output, extra_outputs = _outputs(args.output)
    accepted = None
    if args.baseline is not None or args.write_baseline is not None:
        from planlint.modes import accepted_findings
    if args.baseline is not None:
        try:
            accepted = accepted_findings.load_baseline(args.baseline)
        except accepted_findings.BaselineError as exc:
            raise _Exit(2, str(exc)) from None
    if args.require_data:
        config.data = {**config.data, "require": True}
    # Settled: which rules run and at what severity, resolved once; everything below reads config.rules.
    config = resolved(config)
    run_notes: list[str] = []  # notes about the run itself, reported with the lint's own
    if not args.no_cache and args.cache_dir is None:
        from planlint.engine.cache_dir import checked_directory

        directory, why = checked_directory(config)
        if directory is None:  # the repository put a link where the cache goes: write nothing there
            run_notes.append(f"{why}; this run caches nothing")
            args.no_cache = True
        else:
            args.cache_dir = str(directory)
    cache = _result_cache(args, config)
    if args.changed_files:  # the pre-commit hook: the plans the changed files belong to
        from planlint.engine.changed_files import plans_for_changes

        paths = plans_for_changes(args.paths, config, facts=cache.plan_facts if cache is not None else None)
    services, publications = _services(args, config, paths)
    if not args.no_cache:
        services = replace(services, cache_dir=args.cache_dir or config.cache_dir or str(config.root / ".planlint_cache"))
    try:
        if args.fix:
            status, services = _fix(args, paths, config, services, output)
            if status is not None:
                return status
        if args.diff_base is not None:
            from planlint.modes.diff import lint_diff

            if "PL707" in config.rules:  # the GitHub pull request whose reviews PL707 reads, if this run is for one
                from planlint.integrations.pull_request import from_environment

                pull_request = from_environment()
            else:
                pull_request = None
            report = lint_diff(paths, config, args.diff_base, services=services, pull_request=pull_request, policy=policy)
        elif stdin is not None:
            from planlint.engine.run import lint_content

            display, path = stdin
            report = lint_content(display, path, sys.stdin.buffer.read(), config, services=services, named_as_discovered=args.skip_non_plans)
        else:
            report = lint_paths(paths, config, services=services, named_as_discovered=args.skip_non_plans or args.changed_files, jobs=args.jobs, cache=cache)
    except UsageError as exc:
        raise _Exit(2, str(exc)) from None
    finally:
        if publications is not None:
            publications.close()
    _after_registry(publications)
    # Every format says what could not be checked, not only a terminal: the
    # registry's warnings (printed as warnings on stderr) are notes there too.
    registry_notes = publications.notes() if publications is not None else []
    report.notes[:0] = run_notes
    report.notes.extend(registry_notes)
    if args.write_baseline is not None:
        try:
            findings, entries = accepted_findings.write_baseline(args.write_baseline, report)
        except accepted_findings.BaselineError as exc:
            raise _Exit(2, str(exc)) from None
        print(f"planlint: wrote {args.write_baseline}: {findings} finding{'s' if findings != 1 else ''} accepted ({entries} entr{'ies' if entries != 1 else 'y'})", file=sys.stderr)
        return 0
    stale = accepted_findings.apply_baseline(report, accepted, args.baseline) if accepted is not None else []

    from planlint.formats.reporters import REPORTERS
    from planlint.core.messages import sanitize

    fmt = args.format
    if fmt is None:
        fmt = "github" if os.environ.get("GITHUB_ACTIONS") == "true" and "github" in REPORTERS else "text"
    if fmt not in REPORTERS:
        raise _Exit(2, f"--format {fmt} is not available in this version")
    to_terminal = output is None and sys.stdout.isatty()
    color = fmt == "text" and to_terminal and not args.no_color and not os.environ.get("NO_COLOR")
    options = {"quiet": args.quiet, "statistics": args.statistics}
    for extra_fmt, file in extra_outputs:
        _write(file, REPORTERS[extra_fmt](report, color=False, **options))
    _write_summary(args, report)
    if args.github_output:
        _append(args.github_output, f"errors={report.errors}\nwarnings={report.warnings}\n")
    text = REPORTERS[fmt](report, color=color, **options)
    _write(output, text)
    if stale:
        sys.stderr.write(accepted_findings.stale_text(args.baseline, stale))
    if fmt in ("text", "gitlab") and not args.quiet:  # the machine formats carry their notes in the report; GitLab's has no place for them
        notes = [note for note in report.notes if note not in registry_notes]  # those were printed as warnings
        for note in notes[:MAX_NOTES]:
            print(f"planlint: note: {sanitize(note)}", file=sys.stderr)
        if len(notes) > MAX_NOTES:
            print(f"planlint: note: ... and {len(notes) - MAX_NOTES} more notes (--quiet hides them)", file=sys.stderr)
    if args.exit_zero:
        return 0
    return 1 if report.errors or (args.fail_on == "warning" and report.warnings) else 0


def _stdin_target(args: argparse.Namespace) -> tuple[str, Path] | None:
    """(display path, path) of the plan on standard input (`planlint -`), or None; exit 2 on a combination that cannot work."""
    if args.stdin_filename is not None and args.paths != ["-"]:
        raise _Exit(2, "--stdin-filename names the plan read from standard input: give - as the only PATH")
    if "-" not in args.paths:
        return None
    if args.paths != ["-"]:
        raise _Exit(2, "- reads one plan from standard input: give it as the only PATH")
    for flag, given in (("--fix", args.fix), ("--diff-base", args.diff_base is not None), ("--write-baseline", args.write_baseline is not None),
                        ("--changed-files", args.changed_files)):
        if given:
            raise _Exit(2, f"- (a plan on standard input) cannot be combined with {flag}, which works on files")
    if args.stdin_filename is None:
        return "-", Path("-")
    if not args.stdin_filename.strip():
        raise _Exit(2, "--stdin-filename: give the path the plan would have")
    return args.stdin_filename, Path(args.stdin_filename)


def _result_cache(args, config):
    """The cache of per-file lint results, unless --no-cache."""
    if args.no_cache:
        return None
    from planlint.engine.cache_dir import default_directory
    from planlint.engine.result_cache import ResultCache

    return ResultCache(args.cache_dir or config.cache_dir or default_directory(config), config)


def _services(args, config, paths: list[str]):
    """Per-run services for the rules (the catalog and, with --online, the registry), and the Publications to close."""
    from planlint.rules.base import Services

    if not (config.catalog or config.registry or args.online):
        return Services(), None
    from planlint.core.model import UsageError
    from planlint.engine.run import prefetch_paths
    from planlint.services.publications import PublicationsError, build

    try:
        publications = build(config, online=args.online, cache_dir=args.cache_dir, use_cache=not args.no_cache)
    except PublicationsError as exc:
        raise _Exit(2, str(exc)) from None
    if publications is None:
        return Services(), None
    try:
        prefetch_paths(publications, paths, config)
    except UsageError as exc:
        publications.close()
        raise _Exit(2, str(exc)) from None
    _after_registry(publications, final=False)
    return Services(publications=publications), publications


def _after_registry(publications, final: bool = True) -> None:
    """Exit 2 on a registry failure with on_error: fail; otherwise warn once, at the end."""
    if publications is None:
        return
    fatal = publications.fatal()
    if fatal:
        publications.close()
        raise _Exit(2, fatal)
    if final:
        from planlint.core.messages import sanitize

        for note in publications.notes():
            print(f"planlint: warning: {sanitize(note)}", file=sys.stderr)


def _fix(args, paths: list[str], config, services, output: str | None):
    """Apply (or, with --diff, show) the safe fixes. (A status to exit with, or None to lint what
    remains; the services for that lint, which now know what --fix re-pinned.)"""
    from planlint.modes.fixes import fix_paths

    outcome = fix_paths(paths, config, services, write=not args.diff)
    from planlint.core.messages import sanitize

    for line in ([] if args.quiet else outcome.lines) + outcome.notes:
        print(f"planlint: {sanitize(line)}", file=sys.stderr)  # paths from the repository: one line each
    print(f"planlint: {outcome.summary(would=args.diff)}", file=sys.stderr)
    if args.diff:
        _after_registry(services.publications)
        _write(output, outcome.diff)
        return (1 if outcome.diff and not args.exit_zero else 0), services
    return None, replace(services, repinned=outcome.repinned)


def _outputs(values: list[str]) -> tuple[str | None, list[tuple[str, str]]]:
    """Split --output values into the plain FILE (at most one) and FORMAT=FILE pairs.

    A value with `=` before any path separator is FORMAT=FILE: an unknown
    FORMAT (`Sarif=`, `bogus=`) is a usage error, never a file literally named
    `Sarif=...` that a CI upload would not find. A target that is a directory
    is a usage error too. (A plain file whose name holds `=`: write `./a=b`.)
    """
    known = ", ".join(FORMATS)
    plain: list[str] = []
    extra: list[tuple[str, str]] = []
    for value in values:
        fmt, sep, file = value.partition("=")
        if sep and "/" not in fmt and os.sep not in fmt:
            if fmt not in FORMATS:
                raise _Exit(2, f"--output {value}: unknown format {fmt!r}; known formats: {known} (FORMAT=FILE, or a plain FILE for the --format report)")
            if not file:
                raise _Exit(2, f"--output {value}: give a file name after '='; known formats: {known}")
            target = file
            extra.append((fmt, file))
        else:
            target = value
            plain.append(value)
        if target != "-" and (os.path.isdir(target) or target.endswith(("/", os.sep))):
            raise _Exit(2, f"--output {value}: {target} is a directory, not a file; give a file name (FORMAT=FILE with a format from: {known})")
    if len(plain) > 1:
        raise _Exit(2, f"--output given {len(plain)} plain files ({', '.join(plain)}); use FORMAT=FILE for the others (known formats: {known})")
    return (plain[0] if plain else None), extra


def _write_summary(args: argparse.Namespace, report) -> None:
    """The Markdown summary: --summary FILE (overwritten), or appended to the job summary under Actions."""
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY") if os.environ.get("GITHUB_ACTIONS") == "true" else None
    if args.no_summary or not (args.summary or step_summary):
        return
    from planlint.formats.markdown import SUMMARY_LIMIT, render_summary

    if args.summary:
        _write(args.summary, render_summary(report))
        return
    try:
        # The step's summary file may hold an earlier step's part: GitHub drops the whole over 1 MiB.
        room = SUMMARY_LIMIT - (os.path.getsize(step_summary) if os.path.exists(step_summary) else 0)
        if room < 4096:
            print("planlint: warning: $GITHUB_STEP_SUMMARY is nearly 1 MiB already (GitHub's limit): no summary added", file=sys.stderr)
            return
        with open(step_summary, "a", encoding="utf-8", newline="\n") as fh:
            fh.write(render_summary(report, room))
    except OSError as exc:  # the job summary is a courtesy: never lose the lint result over it
        print(f"planlint: warning: cannot append to $GITHUB_STEP_SUMMARY: {exc.strerror or exc}", file=sys.stderr)


def _append(path: str, text: str) -> None:
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise _Exit(2, f"cannot write {path}: {exc.strerror or exc}") from None


def _write(output: str | None, text: str) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        parent = os.path.dirname(output)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(output, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise _Exit(2, f"cannot write {output}: {exc.strerror or exc}") from None


if __name__ == "__main__":  # pragma: no cover
    entry()
