"""`kivgraph doctor`: what is installed, which analyzers work, what is stale."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from dataclasses import dataclass

from indexer.config import ConfigError, load
from indexer.languages import registry
from indexer.scip.exact import adapter_for
from snapshot_format import errors as snap_errors
from snapshot_format.layout import StateLayout, list_generations, read_pointer
from snapshot_format.reader import open_newest_intact, open_newest_readable
from snapshot_format.versions import FORMAT_VERSION

REQUIRED_PACKAGES = ("mcp", "msgspec", "lmdb", "click", "watchfiles", "tree-sitter", "tree-sitter-python")


@dataclass
class Check:
    name: str
    status: str  # PASS | WARN | FAIL
    detail: str = ""


def _package_checks() -> list[Check]:
    out = []
    for pkg in REQUIRED_PACKAGES:
        try:
            out.append(Check(f"package.{pkg}", "PASS", importlib.metadata.version(pkg)))
        except importlib.metadata.PackageNotFoundError:
            out.append(Check(f"package.{pkg}", "FAIL", "not installed; run `make setup`"))
    return out


def _state_check(layout: StateLayout) -> Check:
    d = layout.state_dir
    probe = d
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        return Check("state.directory", "FAIL", f"{d} is not writable")
    return Check("state.directory", "PASS", str(d) + ("" if d.exists() else " (created on first index)"))


def _language_checks(languages: set[str]) -> list[Check]:
    out = []
    for lang in sorted(languages):
        module = registry.module_for(lang)
        if module is None:
            out.append(Check(f"analyzer.{lang}", "WARN", f"no {lang} extractor in this version: files are skipped"))
            continue
        try:
            module.extract("doctor_probe" + module.EXTENSIONS[0], b"def probe():\n    return 1\n", "doctor_probe")
            out.append(Check(f"analyzer.{lang}", "WARN",
                             f"tree-sitter {module.EXTRACTOR_VERSION}: edges are CANDIDATE where no exact analyzer resolves them"))
        except Exception as exc:  # report, never crash doctor
            out.append(Check(f"analyzer.{lang}", "FAIL", f"tree-sitter probe failed: {exc}"))
    return out


def _exact_analyzer_checks(languages: set[str]) -> list[Check]:
    """Each exact analyzer's version and whether it resolves a tiny probe project."""
    out = []
    for lang in sorted(languages):
        adapter = adapter_for(lang)
        if adapter is None:
            continue
        name = f"analyzer.{lang}.exact"
        try:
            ver = adapter.version()
            detail = adapter.probe()
            out.append(Check(name, "PASS", f"{adapter.ANALYZER} {ver} at {adapter.executable()}: probe: {detail}"))
        except adapter.AnalyzerFailed as exc:
            out.append(Check(name, "WARN", f"{exc}: {lang} falls back to tree-sitter CANDIDATE edges"))
    return out


def run_checks(layout: StateLayout, *, deep: bool = False) -> list[Check]:
    """Every doctor check, in display order."""
    checks = [Check("python", "PASS" if sys.version_info >= (3, 11) else "FAIL", sys.version.split()[0])]
    checks += _package_checks()
    checks.append(_state_check(layout))
    languages: set[str] = set()
    try:
        loaded = load(layout.config_path)
        checks.append(Check("config", "PASS", f"{layout.config_path}: {len(loaded.repositories)} repositories"))
        for repo in loaded.repositories:
            languages.update(repo.languages)
    except ConfigError as exc:
        # Nothing registered yet is a fresh install, not a fault; a config that does not parse is.
        missing = not layout.config_path.exists()
        checks.append(Check("config", "WARN" if missing else "FAIL", str(exc)))
    checks += _language_checks(languages)
    checks += _exact_analyzer_checks(languages)
    checks += _generation_checks(layout, deep=deep)
    return checks


def _generation_checks(layout: StateLayout, *, deep: bool) -> list[Check]:
    """The CURRENT pointer, then the generation a server would serve (its digest too with ``deep``)."""
    pointer = read_pointer(layout)
    on_disk = len(list_generations(layout))
    checks = []
    if pointer.problem:
        checks.append(Check("generation.pointer", "FAIL",
                            f"{pointer.problem}; {on_disk} generations on disk: servers fall back to the newest "
                            "readable one and the next `kivgraph index` rewrites CURRENT"))
    elif pointer.name is None and on_disk:
        checks.append(Check("generation.pointer", "WARN",
                            f"{layout.current_pointer} is missing but {on_disk} generations are on disk: servers "
                            "use the newest readable one and the next `kivgraph index` rewrites CURRENT"))
    elif pointer.name is None:
        checks.append(Check("generation", "PASS", "no published generation yet"))
        return checks
    opener = open_newest_intact if deep else open_newest_readable
    try:
        gen, refused = opener(layout)
    except snap_errors.NoGenerationError as exc:
        checks.append(Check("generation", "FAIL", f"{exc}; run `kivgraph index` to publish a good generation"))
        return checks
    with gen:
        detail = f"{gen.name}: {gen.manifest.counts.symbols} symbols, built {gen.manifest.built_at}"
        if deep:
            detail += ", digest verified"
        refused = [r for r in refused if r != pointer.problem]
        if pointer.name is not None and (gen.name != pointer.name or refused):
            newer_format = any("reader of format" in r for r in refused)
            checks.append(Check(
                "generation", "WARN" if newer_format else "FAIL",
                f"CURRENT names {pointer.name}, which is unusable: {'; '.join(refused)}; servers answer from {detail}"
                + (f" (reader format {FORMAT_VERSION}; re-index to upgrade)" if newer_format else ""),
            ))
        else:
            checks.append(Check("generation", "PASS", detail))
    return checks
