"""`planlint server`: the findings in the editor, over the Language Server Protocol (stdio, pygls).

A document is linted when it is a plan by content (as a discovered file is: not
by folder), with the project's configuration, catalog and suppressions found
from the document's directory exactly as the CLI finds them, so a diagnostic is
the finding `planlint --format json` reports for the same text.

What runs when:
* on open and on change (debounced): every rule but the data checks; the diff
  rules never run here (they need a base revision);
* on save: the same, plus the data checks (PL207-PL211) when the editor's
  settings turn them on (`dataChecksOnSave`), since they read split files;
* the registry is asked only when the configuration turns it on
  (`registry.online: true`); otherwise nothing here touches the network.

Code actions: the fix `--fix`'s first pass makes for a finding (one it enables
is offered on the next lint, once that one is applied), and a suppression
comment with a reason for any finding. Hover on a rule code in a suppression
comment shows `planlint explain` for it.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlint import __version__
from planlint.core import suppressions as supp
from planlint.core.config import ConfigError, load_config
from planlint.core.loader import Limits, load_text
from planlint.core.messages import sanitize
from planlint.core.model import Finding
from planlint.core.positions import yaml_path as format_path
from planlint.engine.lint import lint_file
from planlint.engine.run import finish, repository_commitments, repository_plan_names
from planlint.formats.rule_docs import explain_text, help_uri
from planlint.modes.edits import apply_edits, non_overlapping, verified
from planlint.modes.fixes import candidate_fixes
from planlint.rules import BY_NAME, RULES, resolved, rule_names
from planlint.rules.base import Services
from planlint.services.publications import PublicationsError, build

# pygls and lsprotocol (the lsp extra) are imported in the functions that use them: `planlint server`
# (planlint.serve) checks they are installed, answers `initialize`, and only then builds the server.

REASON_PLACEHOLDER = "TODO: say why this is fine"
DEBOUNCE_SECONDS = 0.3
SOURCE = "planlint"
_SUPPRESSION = re.compile(r"#\s*planlint:\s*(disable|disable-file)\s*=\s*([^#\n]*?)(?:\s+--\s+.*)?$")
_CODE_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Settings:
    """The editor's settings for the server (LSP initializationOptions)."""

    data_checks_on_save: bool = False

    @classmethod
    def from_options(cls, options: Any) -> "Settings":
        if not isinstance(options, dict):
            return cls()
        return cls(data_checks_on_save=options.get("dataChecksOnSave") is True)


@dataclass
class Linted:
    """One lint of one document: its findings, and what the code actions need."""

    findings: list[Finding] = field(default_factory=list)
    text: str | None = None
    data: Any = None
    positions: Any = None
    publications: Any = None
    config: Any = None
    error: str | None = None  # the configuration cannot be used: said once, no findings


def rule_page(code: str) -> str:
    """The rule's documentation page (what SARIF's helpUri points at)."""
    return help_uri(code)


def lint_document(path: Path, text: str, *, data_checks: bool, root: Path | None = None) -> Linted:
    """Lint `text` as the content of `path`. No findings when it is not a plan."""
    try:
        config = load_config(cwd=path.parent, codes=RULES, names=rule_names())  # as the CLI: rules by code or name
    except ConfigError as exc:
        return Linted(error=sanitize(str(exc)))
    if config.excluded(path):  # the CLI skips it, named or found in a directory
        return Linted(text=text, config=config)
    if not data_checks:
        config.ignore = config.ignore + [code for code, rule in RULES.items() if rule.scope == "data"]
    config = resolved(config)  # which rules run and at what severity, once for this lint

    try:
        publications = build(config, online=False, use_cache=config.registry is not None)
    except PublicationsError as exc:
        return Linted(error=sanitize(str(exc)))
    services = Services(publications=publications)
    display = _display(path, root or config.root)
    try:
        result = lint_file(display, path, False, config, services, content=text.encode("utf-8"))
    finally:
        if publications is not None:
            publications.close()
    if result is None:
        return Linted(text=text, config=config)
    other_names = None
    if "PL005" in config.rules and result.plan_name is not None:
        # As for a file named on the command line: the repository's other plans count (issue 14, item 6).
        other_names = repository_plan_names(
            [path], {result.plan_name}, config, start=str(path.parent), display_root=os.path.abspath(root or config.root)
        )
    other_commitments = None
    if config.committed_limit and "PL507" in config.rules:  # the repository's committed spend, as for a named file
        other_commitments = repository_commitments([path], config, start=str(path.parent))
    report = finish([result], config, other_names=other_names, other_commitments=other_commitments)
    return Linted(report.findings, text, result.data, result.positions, publications, config)


def _display(path: Path, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(root))).as_posix()
    except ValueError:
        return path.as_posix()


# --------------------------------------------------------------------------- LSP positions


def _line_starts(text: str) -> list[int]:
    """Offsets of line starts, counting lines at \\n, \\r\\n and \\r as the loader does."""
    starts = [0]
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            starts.append(i + 1)
        elif ch == "\r":
            if i + 1 < n and text[i + 1] == "\n":
                i += 1
            starts.append(i + 1)
        i += 1
    return starts


def _utf16(text: str, start: int, end: int) -> int:
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text[start:end])


class Lines:
    """Code-point offsets and (line, column) to LSP positions (0-based, UTF-16 code units) and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = _line_starts(text)

    def _line_end(self, line: int) -> int:
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        while end > self.starts[line] and self.text[end - 1] in "\r\n":
            end -= 1
        return end

    def position(self, line: int, column: int):
        """1-based (line, column in code points) -> lsprotocol Position."""
        from lsprotocol import types

        index = min(max(line - 1, 0), len(self.starts) - 1)
        start = self.starts[index]
        offset = min(start + max(column - 1, 0), self._line_end(index))
        return types.Position(line=index, character=_utf16(self.text, start, offset))

    def offset_position(self, offset: int):
        import bisect

        from lsprotocol import types

        index = bisect.bisect_right(self.starts, offset) - 1
        return types.Position(line=index, character=_utf16(self.text, self.starts[index], offset))

    def offset(self, position) -> int:
        """An LSP position -> a code-point offset into the text."""
        index = min(position.line, len(self.starts) - 1)
        start, end = self.starts[index], self._line_end(index)
        units, i = 0, start
        while i < end and units < position.character:
            units += 2 if ord(self.text[i]) > 0xFFFF else 1
            i += 1
        return i


def diagnostic(finding: Finding, lines: Lines):
    from lsprotocol import types

    return types.Diagnostic(
        range=types.Range(start=lines.position(finding.line, finding.column), end=lines.position(finding.end_line, finding.end_column)),
        message=finding.message,
        severity=types.DiagnosticSeverity.Error if finding.severity == "error" else types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=rule_page(finding.code)),
        source=SOURCE,
        data={"yaml_path": finding.yaml_path, "name": finding.name},
    )


# --------------------------------------------------------------------------- code actions


def fix_actions(linted: Linted, uri: str, code: str, yaml_path: str, diag) -> list:
    """The `--fix` fixes for one finding, as quick fixes."""
    from lsprotocol import types

    rule = RULES.get(code)
    if rule is None or not rule.fixable or linted.text is None or not isinstance(linted.data, dict) or linted.positions is None:
        return []
    limits = linted.config.parser_limits()
    original = load_text(linted.text, limits)
    if original.fatal or original.problems:  # PL002: --fix leaves such a file alone, so does the editor
        return []
    services = Services(publications=linted.publications)
    fixes = non_overlapping(candidate_fixes(linted.text, original, {(code, yaml_path)}, config=linted.config, services=services))
    lines = Lines(linted.text)
    actions = []
    for fix in fixes:
        if fix.code != code or format_path(fix.route) != yaml_path:
            continue
        if not verified(original, apply_edits(linted.text, fix.edits), [fix], limits):
            continue
        edits = [types.TextEdit(range=types.Range(start=lines.offset_position(e.start), end=lines.offset_position(e.end)), new_text=e.text) for e in fix.edits]
        actions.append(types.CodeAction(
            title=f"Fix {code}: {fix.summary}", kind=types.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=True,
            edit=types.WorkspaceEdit(changes={uri: edits}),
        ))
    return actions


def suppression_edit(text: str, code: str, line: int, limits=None) -> tuple[int, int, str] | None:
    """(start, end, new text) that silences `code` on `line` (1-based) with a reason to fill in; None if none fits.

    Tried in order, and kept only when the plan reads back as the same data
    and a suppression of `code` then covers that line: add the code to the
    line's `# planlint: disable=` comment; put the suppression in front of the
    line's comment (which then follows it); add it at the end of the line; add
    it on a line of its own above.
    """
    limits = limits or Limits()
    lines = Lines(text)
    if not 1 <= line <= len(lines.starts):
        return None
    start, end = lines.starts[line - 1], lines._line_end(line - 1)
    source = text[start:end]
    comment = f"# planlint: disable={code} -- {REASON_PLACEHOLDER}"
    candidates: list[tuple[int, int, str, int]] = []
    existing = _SUPPRESSION.search(source)
    if existing and existing.group(1) == "disable":
        at = start + existing.end(2)
        candidates.append((at, at, f",{code}", line))
    for hash_mark in re.finditer(r"(?:(?<=\s)|^)#", source):
        candidates.append((start + hash_mark.start(), start + hash_mark.start(), comment + " ", line))
        break
    candidates.append((end, end, "  " + comment, line))
    indent = re.match(r"[ \t-]*", source).group().replace("-", " ")
    newline = "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"
    candidates.append((start, start, indent + comment + newline, line + 1))
    original = load_text(text, limits)
    for at, until, insert, target in candidates:
        new = text[:at] + insert + text[until:]
        loaded = load_text(new, limits)
        if loaded.fatal or loaded.data != original.data:
            continue
        if any(code in s.codes and (s.kind == "disable-file" or s.target_line == target) for s in supp.parse(new)):
            return at, until, insert
    return None


def suppression_action(linted: Linted, uri: str, finding_code: str, line: int, diag):
    from lsprotocol import types

    if linted.text is None:
        return None
    edit = suppression_edit(linted.text, finding_code, line, linted.config.parser_limits() if linted.config else None)
    if edit is None:
        return None
    start, end, new_text = edit
    lines = Lines(linted.text)
    return types.CodeAction(
        title=f"Suppress {finding_code} on this line (give the reason after --)",
        kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(
            range=types.Range(start=lines.offset_position(start), end=lines.offset_position(end)), new_text=new_text)]}),
    )


# --------------------------------------------------------------------------- hover


def hover_rule(text: str, line: int, character: int) -> tuple[str, tuple[int, int]] | None:
    """The rule code or name under the cursor in a suppression comment: (code, (start, end) columns, 0-based)."""
    lines = Lines(text)
    if line >= len(lines.starts):
        return None
    source = text[lines.starts[line]:lines._line_end(line)]
    match = _SUPPRESSION.search(source)
    if not match:
        return None
    offset = lines.offset(_position(line, character)) - lines.starts[line]
    for token in _CODE_TOKEN.finditer(source, match.start(2), match.end(2)):
        if token.start() <= offset <= token.end():
            rule = RULES.get(token.group().upper()) or BY_NAME.get(token.group())
            if rule is not None:
                return rule.code, (token.start(), token.end())
    return None


def _position(line: int, character: int):
    from lsprotocol import types

    return types.Position(line=line, character=character)


# --------------------------------------------------------------------------- the server


def build_server():
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    server = LanguageServer("planlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
    state: dict[str, Any] = {"settings": Settings(), "linted": {}, "pending": {}, "root": None}

    def _path(uri: str) -> Path | None:
        from pygls.uris import to_fs_path

        fs = to_fs_path(uri)
        return Path(fs) if fs else None

    def _publish(uri: str, linted: Linted, version: int | None) -> None:
        lines = Lines(linted.text or "")
        diagnostics = [diagnostic(f, lines) for f in linted.findings]
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    async def _lint(uri: str, *, data_checks: bool, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        document = server.workspace.get_text_document(uri)
        path = _path(uri)
        if path is None or not path.name.lower().endswith((".yaml", ".yml")):
            return
        text, version = document.source, document.version
        loop = asyncio.get_running_loop()
        linted = await loop.run_in_executor(None, lambda: lint_document(path, text, data_checks=data_checks, root=state["root"]))
        current = server.workspace.get_text_document(uri)
        if current.version != version:
            return  # typed on meanwhile: a newer lint is on its way
        if linted.error and state["linted"].get(uri, Linted()).error != linted.error:
            server.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"planlint: {linted.error}"))
        state["linted"][uri] = linted
        _publish(uri, linted, version)

    def _schedule(uri: str, *, data_checks: bool, delay: float) -> None:
        pending = state["pending"].pop(uri, None)
        if pending is not None:
            pending.cancel()
        state["pending"][uri] = asyncio.ensure_future(_lint(uri, data_checks=data_checks, delay=delay))

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        state["settings"] = Settings.from_options(params.initialization_options)
        if params.root_uri:
            state["root"] = _path(params.root_uri)
            # The CLI runs from the workspace root, and paths in messages (the catalog's, say) are relative to
            # where it runs: so does the server, wherever the editor started it.
            if state["root"] is not None and state["root"].is_dir():
                os.chdir(state["root"])

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        _schedule(params.text_document.uri, data_checks=False, delay=0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        _schedule(params.text_document.uri, data_checks=False, delay=DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        _schedule(params.text_document.uri, data_checks=state["settings"].data_checks_on_save, delay=0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = state["pending"].pop(uri, None)
        if pending is not None:
            pending.cancel()
        state["linted"].pop(uri, None)
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(params: types.CodeActionParams) -> list:
        uri = params.text_document.uri
        linted = state["linted"].get(uri)
        if linted is None or linted.text is None:
            return []
        if linted.text != server.workspace.get_text_document(uri).source:
            return []  # the findings are of an older text; the next lint brings fresh ones
        actions = []
        for diag in params.context.diagnostics:
            if diag.source != SOURCE or not isinstance(diag.code, str):
                continue
            yaml_path = (diag.data or {}).get("yaml_path", "") if isinstance(diag.data, dict) else ""
            actions.extend(fix_actions(linted, uri, diag.code, yaml_path, diag))
            action = suppression_action(linted, uri, diag.code, diag.range.start.line + 1, diag)
            if action is not None:
                actions.append(action)
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams):
        document = server.workspace.get_text_document(params.text_document.uri)
        found = hover_rule(document.source, params.position.line, params.position.character)
        if found is None:
            return None
        code, (start, end) = found
        line = params.position.line
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"```text\n{explain_text(RULES[code])}```\n\n[{code} documentation]({rule_page(code)})"),
            range=types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end)),
        )

    return server

