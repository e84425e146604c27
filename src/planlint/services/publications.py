"""What has been published: the catalog, and the registry when online.

PL105/PL106 ask `Publications` whether a pinned dataset release or grader
version is published; `--fix` asks it for the newest published one. Online,
the registry is the authority and the catalog answers only what the registry
could not (it was unreachable, or a name cannot be put in a URL). The CLI
builds one `Publications` per run and hands it to the rules through
`PlanContext.services.publications`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from planlint.core.floating import floating_reason
from planlint.core.registry_settings import URL_VARIABLE, parse_settings, resolve, trusted
from planlint.core.yaml_values import scalar_text
from planlint.services.catalog import Catalog, CatalogError, catalog_from_text, load_catalog

PUBLISHED = "published"
NOT_PUBLISHED = "not-published"
UNKNOWN = "unknown"  # the catalog tracks this kind of artifact but not this name


class PublicationsError(Exception):
    """Catalog or registry problems that stop the run (exit 2)."""


@dataclass(frozen=True)
class Verdict:
    state: str
    source: str  # "catalog.yaml" or "the registry at https://host"
    known: tuple[str, ...] = ()  # published values, oldest first, as `source` lists them (only that source)


class Publications:
    def __init__(self, catalog: Catalog | None = None, registry=None) -> None:
        self.catalog = catalog
        self.registry = registry  # planlint.services.registry.Registry when online

    def check(self, kind: str, name: str, value: str) -> Verdict | None:
        """Is `value` a published release/version of `name`? None when nothing can tell."""
        if self.registry is not None:
            published = self.registry.published((kind, name, value))
            if published is not None:
                source = f"the registry at {self.registry.settings.host}"
                # The registry answers yes or no; it lists nothing here. Never list
                # the catalog's values under the registry's verdict: they may disagree
                # (the catalog listed the very release the registry refused).
                return Verdict(PUBLISHED if published else NOT_PUBLISHED, source)
        if self.catalog is None or not self.catalog.tracks(kind):
            return None
        values = self.catalog.published(kind, name)
        if values is None:
            return Verdict(UNKNOWN, self.catalog.display)
        return Verdict(PUBLISHED if value in values else NOT_PUBLISHED, self.catalog.display, values)

    def newest(self, kind: str, name: str) -> tuple[str | None, str]:
        """(the newest published value of `name`, where that came from); (None, "") if unknown."""
        if self.registry is not None:
            values = self.registry.newest(kind, name)
            if values:
                return values[-1], f"the registry at {self.registry.settings.host}"
        if self.catalog is not None:
            values = self.catalog.published(kind, name)
            if values:
                return values[-1], self.catalog.display
        return None, ""

    def published_values(self, kind: str, name: str) -> tuple[tuple[str, ...], str]:
        """Every published value of `name`, oldest first, and the source; ((), "") if unknown."""
        if self.registry is not None:
            values = self.registry.newest(kind, name)
            if values:
                return values, f"the registry at {self.registry.settings.host}"
        if self.catalog is not None:
            values = self.catalog.published(kind, name)
            if values:
                return values, self.catalog.display
        return (), ""

    # a run -------------------------------------------------------------

    def notes(self) -> list[str]:
        """Warnings for standard error, once per run (an unreachable registry, an unwritable cache)."""
        out = []
        registry = self.registry
        if registry is not None:
            if registry.failure:
                fallback = f"pins were checked against {self.catalog.display} only" if self.catalog else "pins were not checked for publication"
                out.append(f"registry {registry.settings.host} is unavailable: {registry.failure}; {fallback} (registry.on_error: warn)")
            if registry.token_withheld:
                out.append(registry.token_withheld)
            if registry.cache is not None and registry.cache.broken:
                out.append(registry.cache.broken)
        return out

    def fatal(self) -> str | None:
        """The message to exit 2 with when the registry failed and on_error is fail."""
        registry = self.registry
        if registry is not None and registry.failure and registry.settings.on_error == "fail":
            return f"registry {registry.settings.host} is unavailable: {registry.failure} (registry.on_error: fail; set on_error: warn to lint without it)"
        return None

    def close(self) -> None:
        if self.registry is not None:
            self.registry.close()


def references(data: Any) -> Iterable[tuple[str, str, str]]:
    """The (kind, name, value) pins a plan makes that PL105/PL106 check."""
    if not isinstance(data, dict):
        return
    dataset = data.get("dataset")
    if isinstance(dataset, dict):
        ref = pinned_ref(dataset.get("name"), dataset.get("release", None), "release" in dataset)
        if ref:
            yield ("datasets",) + ref
    graders = data.get("graders")
    if isinstance(graders, list):
        for grader in graders:
            if isinstance(grader, dict):
                ref = pinned_ref(grader.get("name"), grader.get("version", None), "version" in grader)
                if ref:
                    yield ("graders",) + ref


def pinned_ref(name: Any, value: Any, present: bool) -> tuple[str, str] | None:
    """(name, value as written) when both are usable and the value is pinned; else None."""
    if not present or not isinstance(name, str) or not name.strip():
        return None
    if value is None or isinstance(value, (bool, dict, list)) or floating_reason(value):
        return None
    return name, scalar_text(value)


def build(config, *, online: bool = False, cache_dir: str | None = None, use_cache: bool = True, environ=None) -> Publications | None:
    """The run's Publications from the config, or None when neither a catalog nor a registry is in use."""
    catalog = None
    if config.catalog:
        path = Path(config.catalog)
        try:
            display = os.path.relpath(path)
        except ValueError:  # another drive on Windows
            display = str(path)
        if display.startswith(".." + os.sep) or display == "..":
            display = str(path)
        try:
            if getattr(config, "catalog_text", None) is not None:  # diff mode: the base revision's catalog, and messages say so
                catalog = catalog_from_text(config.catalog_text, f"{display.replace(os.sep, '/')} at the base revision")
            else:
                catalog = load_catalog(path, display.replace(os.sep, "/"))
        except CatalogError as exc:
            raise PublicationsError(str(exc)) from None
    registry = None
    environ = os.environ if environ is None else environ
    raw = config.registry
    if raw is None and online and (environ.get(URL_VARIABLE) or "").strip():
        raw = {}  # the environment names the registry; the config need not
    if raw is not None:
        # Deliberately lazy: the registry client and its HTTP stack load only when a registry is configured.
        from planlint.services.registry import Cache, Registry, RegistryError

        try:
            settings = parse_settings(raw, url_optional=True)
            trust = trusted(environ)
        except ValueError as exc:
            raise PublicationsError(f"registry: {exc}") from None
        if online or settings.online:
            try:
                settings = resolve(settings, trust)
            except RegistryError as exc:
                raise PublicationsError(f"registry: {exc}") from None
            import importlib.util

            if importlib.util.find_spec("requests") is None:
                raise PublicationsError(
                    "--online (checking against the registry) needs the requests package, which is not installed: "
                    "pip install requests, or install planlint with its http extra (pip install 'planlint[http]'; from a checkout: pip install '.[http]')"
                )
            cache = None
            if use_cache:
                directory = Path(cache_dir) if cache_dir else Path(config.cache_dir) if config.cache_dir else Path(config.root) / ".planlint_cache"
                cache = Cache(directory, settings.cache_ttl, Path(config.root))
            try:
                registry = Registry(settings, cache, environ)
            except RegistryError as exc:
                raise PublicationsError(f"registry {settings.host}: {exc}") from None
    elif online:
        raise PublicationsError(f"--online needs a registry: set ${URL_VARIABLE}, or add `registry: {{url: https://...}}` to the config (spec section 4)")
    if catalog is None and registry is None:
        return None
    return Publications(catalog, registry)


def prefetch(publications: Publications, plans: Iterable[Any]) -> None:
    """Ask the registry about every pin of every plan at once (de-duplicated, concurrent)."""
    if publications.registry is None:
        return
    keys = {ref for data in plans for ref in references(data)}
    publications.registry.prefetch(keys)
