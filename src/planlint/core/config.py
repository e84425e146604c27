"""Configuration: `.planlint.yaml` or `[tool.planlint]` in pyproject.toml (spec section 4).

Looked up from the current directory upward, up to the repository root (the
directory holding `.git`); at each level `.planlint.yaml`
wins over `pyproject.toml`, and a pyproject.toml without `[tool.planlint]` is
passed over. Relative paths in a config (catalog, exclude) are relative to the
file that holds them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from planlint.core.file_rules import STATUSES, PerFileIgnore, parse_per_file_ignores, parse_status_levels
from planlint.core.loader import DEFAULT_MAX_FILE_SIZE, Limits, load_file, load_text
from planlint.core.paths import leads_outside, repository_root
from planlint.core.registry_settings import parse_settings


class ConfigError(Exception):
    """A config file that cannot be used; the CLI exits 2 with this message."""


KNOWN_KEYS = {
    "select", "ignore", "severity", "exclude", "max_file_size", "max_spend_limit",
    "catalog", "registry", "data", "limits", "cache_dir", "budget", "approvers", "calibration", "per-file-ignores",
}
LIMIT_KEYS = {"max_depth", "max_nodes", "max_aliases", "time_budget"}


@dataclass(frozen=True)
class RuleSelection:
    """The rules a run checks and their severities: the config resolved once (`Config.resolve`).

    Built after the command line's --select/--ignore are applied, and handed
    down to everything that decides whether a rule runs or how heavy its
    finding is; nothing below the run reads select/ignore/severity itself.
    `severities`: code -> the severity the config's `severity:` sets, which
    wins over the rule's own and over a problem's (PL105/PL106 warnings).
    """

    enabled: frozenset[str]
    severities: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __contains__(self, code: object) -> bool:
        return code in self.enabled

    def severity(self, code: str, default: str) -> str:
        """The severity of a finding of `code` whose rule (or problem) says `default`."""
        return self.severities.get(code, default)

    def __reduce__(self):  # MappingProxyType does not pickle; worker processes receive a selection
        return (_selection, (self.enabled, dict(self.severities)))


def _selection(enabled: frozenset[str], severities: dict[str, str]) -> RuleSelection:
    return RuleSelection(enabled, MappingProxyType(severities))


@dataclass
class Config:
    source: Path | None = None
    root: Path = field(default_factory=Path.cwd)
    select: list[str] = field(default_factory=lambda: ["PL"])
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)
    # `severity: {CODE: {STATUS: level}}`: code -> plan status -> level (core/file_rules.py)
    status_severity: dict[str, dict[str, str]] = field(default_factory=dict)
    per_file_ignores: list[PerFileIgnore] = field(default_factory=list)  # `per-file-ignores` (core/file_rules.py)
    exclude: list[str] = field(default_factory=list)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    max_spend_limit: dict[str, float] = field(default_factory=dict)
    catalog: str | None = None
    registry: dict | None = None
    data: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    cache_dir: str | None = None
    committed_limit: dict[str, float] = field(default_factory=dict)  # budget.committed_limit (PL507)
    approvers: dict[str, list[str]] = field(default_factory=dict)  # team -> logins (PL707; read from the base revision)
    calibration: dict = field(default_factory=dict)  # PL308 thresholds: min_labels, min_agreement
    # The catalog's content when it is not the file at `catalog` (diff mode: the base revision's); None reads the file.
    catalog_text: str | None = None
    _exclude_res: list = field(default_factory=list, repr=False)
    # select/ignore/severity resolved for one run (`resolved`); derived from the fields above, so not in the cache key.
    _rules: RuleSelection | None = field(default=None, repr=False, compare=False)
    _per_file_res: list = field(default_factory=list, repr=False, compare=False)
    # `narrowed`: the run's config for one file is made once per (rules turned off, status); `_wide` is the run's own.
    _narrowed: dict = field(default_factory=dict, repr=False, compare=False)
    _wide: Config | None = field(default=None, repr=False, compare=False)

    def enabled(self, code: str) -> bool:
        """ruff's rule: the most specific matching prefix wins; on a tie, ignore wins.

        The run asks this once per rule, through `resolve`; the layers below
        ask the RuleSelection it returns.
        """
        selected = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > ignored

    def resolve(self, codes: Iterable[str]) -> RuleSelection:
        """Which of `codes` (every rule code, from the caller: the registry lives above core) this
        config enables, and the severities it sets."""
        return RuleSelection(
            frozenset(code for code in codes if self.enabled(code)),
            MappingProxyType(dict(self.severity)),
        )

    def resolved(self, codes: Iterable[str]) -> Config:
        """This config for one run: a copy that carries its rules resolved (`rules`).

        The run calls it once, after the command line's --select/--ignore are
        applied; a config that is already resolved is returned as it is.
        """
        if self._rules is not None:
            return self
        return replace(self, _rules=self.resolve(codes))

    def without(self, codes: Iterable[str]) -> Config:
        """This resolved config with `codes` turned off, its severities kept (--fix's later
        passes: the data rules fix nothing, and reading the split files again would tell it nothing)."""
        rules = self.rules
        return replace(self, _rules=RuleSelection(rules.enabled - frozenset(codes), rules.severities))

    @property
    def rules(self) -> RuleSelection:
        """The run's rules and severities. Only a resolved config has them (`resolved`)."""
        if self._rules is None:
            raise RuntimeError("the configuration's rules were not resolved for this run (Config.resolved)")
        return self._rules

    def narrowed(self, path: str | os.PathLike | None, status: Any = None) -> Config:
        """The run's config for one file: without the rules `per-file-ignores` turns off for `path`,
        and with the severities `severity:` sets for plans whose `metadata.status` is `status`.

        The config itself when neither applies (nearly always: no lookup, no copy).
        """
        wide = self._wide or self
        if not wide.per_file_ignores and not wide.status_severity:
            return wide
        off = wide.ignored_for(path) if path is not None else frozenset()
        levels = {code: by_status[status] for code, by_status in wide.status_severity.items() if status in by_status} if isinstance(status, str) else {}
        if not off and not levels:
            return wide
        key = (off, status if levels else None)
        found = wide._narrowed.get(key)
        if found is None:
            rules = wide.rules
            selection = RuleSelection(rules.enabled - off, MappingProxyType({**rules.severities, **levels}))
            found = wide._narrowed[key] = replace(wide, _rules=selection, _narrowed={}, _wide=wide)
        return found

    def ignored_for(self, path: str | os.PathLike) -> frozenset[str]:
        """The codes `per-file-ignores` turns off for the file at `path` (relative to the working directory or absolute)."""
        if not self.per_file_ignores:
            return frozenset()
        if not self._per_file_res:
            self._per_file_res = [(_glob_regex(entry.pattern), entry.codes) for entry in self.per_file_ignores]
        try:
            rel = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(self.root))).as_posix()
        except ValueError:
            rel = Path(path).as_posix()
        return frozenset(code for regex, codes in self._per_file_res if regex.match(rel) for code in codes)

    def parser_limits(self) -> Limits:
        return Limits(max_file_size=self.max_file_size, **self.limits)

    def excluded(self, path: Path) -> bool:
        if not self.exclude:
            return False
        if not self._exclude_res:
            self._exclude_res = [_glob_regex(p) for p in self.exclude]
        try:
            rel = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(self.root))).as_posix()
        except ValueError:
            rel = Path(path).as_posix()
        return any(r.match(rel) for r in self._exclude_res)


_BYTE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def byte_size(value: Any) -> int | None:
    """A size in bytes from an integer or a string such as "2 GiB" or "500MB"; None if it is not a positive one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value) if value > 0 else None
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", value)
        if match and match.group(2).lower() in _BYTE_UNITS:
            size = int(float(match.group(1)) * _BYTE_UNITS[match.group(2).lower()])
            return size if size > 0 else None
    return None


def _glob_regex(pattern: str) -> re.Pattern:
    """gitignore-style globs: `**` spans directories, `*` and `?` stay within one.

    As in .gitignore (and ruff's exclude), a pattern without a slash (`*.yml`,
    `archive`) matches a file or directory name at any depth; a trailing slash
    only marks a directory.
    """
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/") or pattern
    if "/" not in pattern:
        pattern = "**/" + pattern
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    # A pattern naming a directory excludes what is under it.
    return re.compile(f"^{body}(?:/.*)?$")


def _confined(path: Path, shown: str | Path) -> Path:
    """`path`, unless it is a link out of its repository: then a ConfigError that quotes nothing of the target."""
    if leads_outside(path):
        raise ConfigError(
            f"{shown}: is a symbolic link that leads out of the repository: not read "
            "(a config comes with the code, so planlint reads it only from inside the checkout)"
        )
    return path


def find_config(start: Path) -> Path | None:
    """The config for `start`: looked up from it upward, stopping at the repository root.

    The root is the directory holding `.git` (a directory, or a file for a
    worktree or submodule): a repository nested in another never picks up the
    outer one's `.planlint.yaml` and catalog.
    """
    directory = start.resolve()
    while True:
        candidate = directory / ".planlint.yaml"
        if candidate.is_file() or candidate.is_symlink():
            return _confined(candidate, candidate)
        pyproject = directory / "pyproject.toml"
        if (pyproject.is_file() or pyproject.is_symlink()) and _has_tool_table(_confined(pyproject, pyproject)):
            return pyproject
        if directory.parent == directory or os.path.lexists(directory / ".git"):
            return None
        directory = directory.parent


def _has_tool_table(pyproject: Path) -> bool:
    """Does this pyproject.toml configure planlint? Parsed only when it mentions planlint."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if "planlint" not in text:
        return False
    doc = _parse_toml(pyproject)  # a broken file that mentions planlint is an error, not silence
    tool = doc.get("tool")
    return isinstance(tool, dict) and "planlint" in tool


def _parse_toml(path: Path) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read TOML: {exc}") from None


def load_config(explicit: str | None = None, cwd: Path | None = None, *, codes: Iterable[str] | None = None, names: Mapping[str, str] | None = None) -> Config:
    """The config in effect. `codes`: every rule code, so that `select`/`ignore`
    entries that select no rule are refused (the CLI passes the registry's).
    `names`: rule name -> code, so that rules may be named in `select`,
    `ignore` and `severity` (the CLI passes the registry's)."""
    cwd = cwd or Path.cwd()
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"{explicit}: config file not found")
        _confined(path, explicit)
    else:
        path = find_config(cwd)
        if path is None:
            return Config(root=cwd)
    raw = _read(path)
    return _build(raw, path, codes, names)


def raw_settings(path: Path) -> dict:
    """The settings a config file holds, as written (the table or mapping), validated only for shape."""
    return _read(path)


def settings_from_text(text: str, path: Path) -> dict | None:
    """The settings in `text`, the content `path` had elsewhere (a base revision); None when it configures nothing.

    A pyproject.toml without a [tool.planlint] table configures nothing, as in discovery.
    """
    if path.name == "pyproject.toml" or path.suffix == ".toml":
        try:
            import tomllib  # type: ignore[import-not-found]
        except ImportError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: cannot read TOML: {exc}") from None
        tool = doc.get("tool")
        table = tool.get("planlint") if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: tool.planlint must be a table of settings")
        return table
    loaded = load_text(text)
    if loaded.problems:
        first = loaded.problems[0]
        raise ConfigError(f"{path}:{first.span.line}:{first.span.column}: {first.message}")
    if loaded.data is None:
        return {}
    if not isinstance(loaded.data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return loaded.data


def build_config(raw: dict, path: Path, codes: Iterable[str] | None = None, names: Mapping[str, str] | None = None) -> Config:
    """A Config from settings read elsewhere (`settings_from_text`), as if they were in `path`."""
    return _build(raw, path, codes, names)


def _read(path: Path) -> dict:
    if path.name == "pyproject.toml" or path.suffix == ".toml":
        doc = _parse_toml(path)
        tool = doc.get("tool")
        table = tool.get("planlint") if isinstance(tool, dict) else None
        if table is None:
            raise ConfigError(f"{path}: has no [tool.planlint] table")
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: tool.planlint must be a table of settings")
        return table
    loaded = load_file(path)
    if loaded.problems:
        first = loaded.problems[0]
        raise ConfigError(f"{path}:{first.span.line}:{first.span.column}: {first.message}")
    if loaded.data is None:
        return {}
    if not isinstance(loaded.data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return loaded.data


def _inside_repository(target: str, root: Path) -> bool:
    """Is `target` (links resolved) inside `root` or the git repository that holds it?"""
    real = os.path.realpath(target)
    for base in {os.path.realpath(root), os.path.realpath(repository_root(os.path.abspath(root)))}:
        try:
            if os.path.commonpath([real, base]) == base:
                return True
        except ValueError:
            continue
    return False


def _fail(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {problem}")


def _str_list(path: Path, key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(path, key, "expected a list of strings")
    return list(value)


def _amounts(path: Path, key: str, value: Any) -> dict[str, float]:
    """A mapping of currency code to a positive amount ({USD: 1000})."""
    if not isinstance(value, dict):
        raise _fail(path, key, "expected a mapping of currency code to amount, e.g. {USD: 1000}")
    out: dict[str, float] = {}
    for currency, amount in value.items():
        if (
            not re.fullmatch(r"[A-Z]{3}", str(currency)) or isinstance(amount, bool) or not isinstance(amount, (int, float))
            or not 0 < amount < float("inf")
        ):
            raise _fail(path, key, f"{currency}: expected a 3-letter currency code mapped to a positive amount")
        out[str(currency)] = float(amount)
    return out


_LOGIN = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
_TEAM = re.compile(rf"^@?({_LOGIN})/([A-Za-z0-9_.-]{{1,100}})$")


def approvers_settings(raw: dict) -> list[tuple[str, Any]]:
    """The `approvers` maps of a config's settings: top level, and (also accepted) under `budget`."""
    found = [("approvers", raw["approvers"])] if "approvers" in raw else []
    budget = raw.get("budget")
    if isinstance(budget, dict) and "approvers" in budget:
        found.append(("budget.approvers", budget["approvers"]))
    return found


def parse_approvers(value: Any, fail) -> dict[str, list[str]]:
    """`approvers: {"@org/team": [alice, "@bob"]}` -> {"org/team": ["alice", "bob"]} (lower case: GitHub names ignore case).

    `fail(problem)` builds the exception to raise. A key may also be a plain
    group name (`ml-leads`), for plans that name `@ml-leads`.
    """
    if not isinstance(value, dict):
        raise fail("expected a mapping of team (@org/team) to a list of GitHub logins")
    out: dict[str, list[str]] = {}
    for team, members in value.items():
        key = str(team).strip()
        key = key[1:] if key.startswith("@") else key
        if not (_TEAM.match(key) or re.fullmatch(_LOGIN, key)):
            raise fail(f"{str(team)[:80]!r}: expected a team as @org/team")
        if isinstance(members, str):
            members = [members]
        if not isinstance(members, list) or not all(isinstance(m, str) and re.fullmatch(rf"@?{_LOGIN}", m.strip()) for m in members):
            raise fail(f"{str(team)[:80]!r}: expected a list of GitHub logins, e.g. [alice, bob]")
        out[key.lower()] = [m.strip().lstrip("@").lower() for m in members]
    return out


def check_selectors(prefixes: list[str], codes: Iterable[str] | None) -> str | None:
    """Why a list of codes/prefixes is wrong (like ruff: each must select a rule), or None.

    `codes`: every rule code, from the caller (the registry lives above core);
    None checks the form of each prefix only.
    """
    for prefix in prefixes:
        if not re.fullmatch(r"PL[0-9]{0,3}", prefix):
            return f"{prefix!r} is not a rule code, prefix or name (e.g. PL1, PL205, eval-not-frozen)"
        if codes is not None and not any(code.startswith(prefix) for code in codes):
            return f"{prefix!r} selects no rule (planlint rules lists them)"
    return None


def selector(written: str, names: Mapping[str, str] | None = None) -> str:
    """A rule name (`spend-over-limit`, any case) as its code; codes and prefixes in upper case; anything else as written.

    `names`: rule name -> code, from the caller (the registry lives above core).
    """
    written = written.strip()
    if names and written.lower() in names:
        return names[written.lower()]
    return written.upper() if re.fullmatch(r"[Pp][Ll][0-9]{0,3}", written) else written


def codes_list(value: str, names: Mapping[str, str] | None = None) -> list[str]:
    return [selector(c, names) for c in value.split(",") if c.strip()]


def _build(raw: dict, path: Path, codes: Iterable[str] | None, names: Mapping[str, str] | None = None) -> Config:
    config = Config(source=path, root=path.parent.resolve())
    unknown = sorted(set(raw) - KNOWN_KEYS)
    if unknown:
        raise _fail(path, unknown[0], f"unknown setting (known: {', '.join(sorted(KNOWN_KEYS))})")
    if "select" in raw:
        config.select = [selector(c, names) for c in _str_list(path, "select", raw["select"])]
    if "ignore" in raw:
        config.ignore = [selector(c, names) for c in _str_list(path, "ignore", raw["ignore"])]
    for key in ("select", "ignore"):
        problem = check_selectors(getattr(config, key), codes)
        if problem:
            raise _fail(path, key, problem)
    severity = raw.get("severity", {})
    if not isinstance(severity, dict):
        raise _fail(path, "severity", "expected a mapping of code to error|warning (or to {STATUS: error|warning})")
    for written, level in severity.items():
        code = selector(str(written), names)
        if not re.fullmatch(r"PL[0-9]{3}", code) or (codes is not None and code not in codes):
            raise _fail(path, "severity", f"{written}: {level!r}: expected a rule code or name mapped to error or warning")
        if isinstance(level, dict):  # by plan status: {approved: error, running: error}
            config.status_severity[code] = parse_status_levels(str(written), level, lambda problem: _fail(path, "severity", problem))
        elif level in ("error", "warning"):
            config.severity[code] = level
        else:
            raise _fail(path, "severity", f"{written}: {level!r}: expected error, warning, or a mapping of plan status ({', '.join(STATUSES)}) to error or warning")
    if "per-file-ignores" in raw:
        config.per_file_ignores = parse_per_file_ignores(
            raw["per-file-ignores"], lambda key, problem: _fail(path, key, problem), lambda written: selector(written, names), codes,
        )
    if "exclude" in raw:
        config.exclude = _str_list(path, "exclude", raw["exclude"])
    if "max_file_size" in raw:
        size = raw["max_file_size"]
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise _fail(path, "max_file_size", "expected a positive number of bytes")
        config.max_file_size = int(size)
    config.max_spend_limit = _amounts(path, "max_spend_limit", raw.get("max_spend_limit", {}))
    if "budget" in raw:
        budget = raw["budget"]
        if not isinstance(budget, dict) or set(budget) - {"committed_limit", "approvers"}:
            raise _fail(path, "budget", "expected a mapping with committed_limit (currency code -> amount, e.g. {USD: 20000}) and/or approvers")
        config.committed_limit = _amounts(path, "budget.committed_limit", budget.get("committed_limit", {}))
    for key, value in approvers_settings(raw):
        config.approvers.update(parse_approvers(value, lambda problem, key=key: _fail(path, key, problem)))
    if "catalog" in raw:
        if not isinstance(raw["catalog"], str):
            raise _fail(path, "catalog", "expected a file path")
        config.catalog = str((config.root / raw["catalog"]))
        if not _inside_repository(config.catalog, config.root):
            raise _fail(path, "catalog", "must be a file inside the repository (a config comes with the code, so it names no file elsewhere on the machine)")
    if "registry" in raw:
        try:
            parse_settings(raw["registry"], url_optional=True)  # $PLANLINT_REGISTRY_URL may name it
        except ValueError as exc:
            raise _fail(path, "registry", str(exc)) from None
        config.registry = dict(raw["registry"])
    if "data" in raw:
        data = raw["data"]
        if not isinstance(data, dict) or set(data) - {"input_fields", "require", "time_budget", "max_bytes"}:
            raise _fail(path, "data", "expected a mapping with input_fields (a list of field names), require (true/false), "
                                      "time_budget (seconds) and/or max_bytes (bytes per split, e.g. 2 GiB)")
        if "max_bytes" in data:
            size = byte_size(data["max_bytes"])
            if size is None:
                raise _fail(path, "data.max_bytes", "expected a positive number of bytes, e.g. 2147483648 or \"2 GiB\" (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
            data = {**data, "max_bytes": size}
        if "time_budget" in data:
            budget = data["time_budget"]
            if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0 < budget < float("inf"):
                raise _fail(path, "data.time_budget", "expected a positive number of seconds")
            data = {**data, "time_budget": float(budget)}
        if "input_fields" in data:
            data = {**data, "input_fields": _str_list(path, "data.input_fields", data["input_fields"])}
        if "require" in data and not isinstance(data["require"], bool):
            raise _fail(path, "data.require", "expected true or false")
        config.data = dict(data)
    if "limits" in raw:
        lim = raw["limits"]
        if not isinstance(lim, dict) or set(lim) - LIMIT_KEYS:
            raise _fail(path, "limits", f"expected a mapping with keys from {', '.join(sorted(LIMIT_KEYS))}")
        for key, value in lim.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise _fail(path, f"limits.{key}", "expected a positive number")  # not nan, not .inf
            config.limits[key] = int(value) if key != "time_budget" else float(value)
    if "calibration" in raw:
        config.calibration = _calibration(path, raw["calibration"])
    if "cache_dir" in raw:
        if not isinstance(raw["cache_dir"], str):
            raise _fail(path, "cache_dir", "expected a directory path")
        config.cache_dir = str(config.root / raw["cache_dir"])
    return config


def _calibration(path: Path, value: Any) -> dict:
    """PL308's thresholds: `min_labels` (a whole number >= 1), `min_agreement` (0 to 1)."""
    if not isinstance(value, dict) or set(value) - {"min_labels", "min_agreement"}:
        raise _fail(path, "calibration", "expected a mapping with min_labels (a whole number of labels) and/or min_agreement (0 to 1)")
    out: dict = {}
    if "min_labels" in value:
        labels = value["min_labels"]
        if isinstance(labels, bool) or not isinstance(labels, int) or labels < 1:
            raise _fail(path, "calibration.min_labels", "expected a whole number of labels, at least 1")
        out["min_labels"] = int(labels)
    if "min_agreement" in value:
        agreement = value["min_agreement"]
        if isinstance(agreement, bool) or not isinstance(agreement, (int, float)) or not 0 <= agreement <= 1:
            raise _fail(path, "calibration.min_agreement", "expected a fraction from 0 to 1, e.g. 0.8")
        out["min_agreement"] = float(agreement)
    return out
