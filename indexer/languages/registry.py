"""Every language folder kivgraph has, one ``LanguageSpec`` each; modules are imported only when a repository needs them.

A folder under ``indexer/languages/`` is a language when it holds a ``language.toml`` (read here, strictly: an
unknown key or a language id the table lacks is an error naming the file). The language's own properties are
its row in the language table (``snapshot_format/languages.py``); adding a language is its folder plus that row.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import msgspec

from indexer.corpus import LanguageModule
from indexer.languages.spec import ExactAdapter, LanguageSpec, Probe
from snapshot_format import languages as table

_FOLDERS = Path(__file__).parent
DECLARATION = "language.toml"


class _Probe(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    source: str
    qualified_name: str


class _Declaration(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    languages: list[str]
    tests: list[str]
    probe: _Probe | None = None
    exact: bool = False
    adapter: str = "analyzer"
    build_outputs: bool = False
    fallback_note: str = "tree-sitter, CANDIDATE"
    # The language's section of kivgraph.toml (``[<first language>]``): each key with its default (a bool, an int,
    # a float or a string); indexer/config.py builds the section's schema from it
    settings: dict[str, bool | int | float | str] = {}


def _test_patterns(dirs_and_names: list[str]) -> tuple[str, ...]:
    """fnmatch patterns for test directories (``tests/`` anywhere) and test file names (anywhere)."""
    out: list[str] = []
    for item in dirs_and_names:
        out += [f"{item}*", f"*/{item}*"] if item.endswith("/") else [item, f"*/{item}"]
    return tuple(out)


def read_declaration(folder: Path) -> LanguageSpec:
    """The spec a language folder declares in its ``language.toml``; ValueError naming the file and the key."""
    path = folder / DECLARATION
    try:
        found = msgspec.convert(tomllib.loads(path.read_text("utf-8")), _Declaration)
    except (tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    rows = [table.language(lang) for lang in found.languages]
    missing = [lang for lang, row in zip(found.languages, rows, strict=True) if row is None]
    if missing or not rows:
        raise ValueError(f"{path}: key 'languages': {missing or 'none'} not in the language table")
    probe = found.probe
    return LanguageSpec(
        name=folder.name,
        extensions={row.id: row.extensions for row in rows if row is not None},
        test_patterns=_test_patterns(found.tests),
        probe=Probe(probe.path, probe.source.encode("utf-8"), probe.qualified_name) if probe else None,
        exact=found.exact,
        adapter_module=found.adapter,
        build_outputs=found.build_outputs,
        fallback_note=found.fallback_note,
        settings=dict(found.settings),
    )


def _discover() -> tuple[LanguageSpec, ...]:
    specs = [read_declaration(d) for d in sorted(_FOLDERS.iterdir()) if (d / DECLARATION).is_file()]
    # In the table's order (setup and doctor list languages so)
    return tuple(sorted(specs, key=lambda s: table.IDS.index(s.ids[0])))


LANGUAGES: tuple[LanguageSpec, ...] = _discover()

_BY_ID: dict[str, LanguageSpec] = {lang: spec for spec in LANGUAGES for lang in spec.ids}

# language id -> extensions, for every language (files of a language without an extractor are reported skipped)
EXTENSIONS: dict[str, tuple[str, ...]] = {lang: exts for spec in LANGUAGES for lang, exts in spec.extensions.items()}


def spec_for(language: str) -> LanguageSpec | None:
    """The spec serving a language id (one folder may serve several: JavaScript is served by TypeScript's)."""
    return _BY_ID.get(language)


def module_for(language: str) -> LanguageModule | None:
    """The language module, or None when this build has no extractor for the language."""
    spec = _BY_ID.get(language)
    return spec.module() if spec is not None else None


def adapter_for(language: str) -> ExactAdapter[Any] | None:
    """The language's exact analyzer adapter, or None when it has none."""
    spec = _BY_ID.get(language)
    return spec.adapter() if spec is not None else None


def is_test_path(language: str, path: str) -> bool:
    spec = _BY_ID.get(language)
    return spec.is_test(path) if spec is not None else False
