"""The catalog: a local record of published dataset releases and grader versions.

    datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}
    graders:  {tau-retail-db-state: {versions: ["1.4.1", "1.4.2"]}}

Lists are oldest first, so the last entry is the newest published one (what
`--fix` pins a floating reference to). Graders are keyed by their published
`name`, not by a plan's grader `id`. A section that is absent means the catalog
does not track that kind of artifact, and nothing is checked against it; a
name missing from a section that is present is "unknown to the catalog".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from planlint.core.loader import load_file, load_text
from planlint.core.messages import show
from planlint.core.yaml_values import YamlFloat, YamlInt, scalar_text

# section -> the key each entry lists its published values under
SECTIONS = {"datasets": "releases", "graders": "versions"}


class CatalogError(Exception):
    """A catalog that cannot be used; the CLI exits 2 with this message."""


@dataclass(frozen=True)
class Catalog:
    display: str  # the path as messages name it
    datasets: dict[str, tuple[str, ...]] | None = None  # None: not tracked
    graders: dict[str, tuple[str, ...]] | None = None

    def published(self, kind: str, name: str) -> tuple[str, ...] | None:
        """The published values of `name` ("datasets" or "graders"), oldest first; None if unknown or untracked."""
        section = self.datasets if kind == "datasets" else self.graders
        return None if section is None else section.get(name)

    def tracks(self, kind: str) -> bool:
        return (self.datasets if kind == "datasets" else self.graders) is not None


def load_catalog(path: str | Path, display: str | None = None) -> Catalog:
    path = Path(path)
    display = display or str(path)
    if not path.is_file():
        raise CatalogError(f"catalog {display}: file not found (set by `catalog:` in the config)")
    return _parse(load_file(path), display)


def catalog_from_text(text: str, display: str) -> Catalog:
    """A catalog from its content (a base revision's), named `display` in messages."""
    return _parse(load_text(text), display)


def _parse(loaded, display: str) -> Catalog:
    if loaded.problems:
        first = loaded.problems[0]
        raise CatalogError(f"catalog {display}:{first.span.line}:{first.span.column}: {first.message}")
    data = loaded.data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CatalogError(f"catalog {display}: the top level must be a mapping with datasets and/or graders")
    unknown = sorted(k for k in data if k not in SECTIONS and not k.startswith("x-"))
    if unknown:
        raise CatalogError(f"catalog {display}: unknown section {show(unknown[0])} (known: datasets, graders)")
    sections: dict[str, dict[str, tuple[str, ...]] | None] = {}
    for section, list_key in SECTIONS.items():
        if section not in data:
            sections[section] = None
            continue
        sections[section] = _section(display, section, list_key, data[section])
    return Catalog(display, sections["datasets"], sections["graders"])


def _section(display: str, section: str, list_key: str, entries) -> dict[str, tuple[str, ...]]:
    if entries is None:
        return {}
    example = f'{section}: {{NAME: {{{list_key}: ["..."]}}}}'
    if not isinstance(entries, dict):
        raise CatalogError(f"catalog {display}: {section} must be a mapping of names, e.g. {example}")
    out: dict[str, tuple[str, ...]] = {}
    for name, entry in entries.items():
        where = f"catalog {display}: {section}.{show(name)}"
        if not isinstance(entry, dict) or list_key not in entry:
            raise CatalogError(f"{where} must be a mapping with {list_key}, e.g. {example}")
        extra = sorted(k for k in entry if k != list_key and k != "description" and not k.startswith("x-"))
        if extra:
            raise CatalogError(f"{where}: unknown key {show(extra[0])} (an entry has {list_key}, and optionally description)")
        values = entry[list_key]
        if values is None:
            values = []
        if not isinstance(values, list):
            raise CatalogError(f"{where}.{list_key} must be a list")
        items = []
        for value in values:
            if isinstance(value, bool) or not isinstance(value, (str, YamlInt, YamlFloat)):
                raise CatalogError(f"{where}.{list_key}: {show(value)} is not a version (quote it as a string)")
            items.append(scalar_text(value))
        out[name] = tuple(items)
    return out
