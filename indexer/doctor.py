"""`kivgraph doctor`: what is installed, which analyzers work, what is stale."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from dataclasses import dataclass

from indexer.children import leftover_analyzers
from indexer.config import ConfigError, load
from indexer.fact_cache import read_damage_note
from indexer.languages import registry
from indexer.languages.spec import AnalyzerFailed, LanguageSpec
from indexer.scratch import GROUPS
from snapshot_format import errors as snap_errors
from snapshot_format.layout import StateLayout, list_generations, read_pointer
from snapshot_format.reader import open_newest_intact, open_newest_readable
from snapshot_format.regular import irregular
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


def _state_file_checks(layout: StateLayout) -> list[Check]:
    """What stands in the state directory's own files: damage found and healed, damage the next index heals."""
    checks = []
    cache = layout.fact_cache_dir
    now_damaged = irregular(cache, directory=True) or next(
        (why for name in ("data.mdb", "lock.mdb") if (why := irregular(cache / name))), ""
    )
    note = read_damage_note(layout.state_dir)
    if now_damaged:
        checks.append(Check("state.fact_cache", "WARN", f"{now_damaged}: the next `kivgraph index` moves it aside"))
    elif note is not None and os.path.lexists(note.moved_to):
        checks.append(
            Check(
                "state.fact_cache",
                "WARN",
                f"found damaged at {note.found_at} ({note.reason}) and rebuilt from the sources; the damaged copy "
                f"is {note.moved_to} (delete it once inspected)",
            )
        )
    else:
        checks.append(
            Check("state.fact_cache", "PASS", str(cache) if cache.exists() else f"{cache} (created on first index)")
        )
    lock = irregular(layout.publish_lock)
    if lock:
        checks.append(Check("state.lock", "FAIL", f"{lock}; remove it (no indexer can hold it), then index"))
    left = leftover_analyzers(layout.scratch_dir / GROUPS)
    if left:
        pids = ", ".join(str(p) for p in left)
        checks.append(
            Check(
                "state.analyzers",
                "WARN",
                f"{len(left)} analyzer processes a killed run left (pids {pids}); the next `kivgraph index` ends them",
            )
        )
    return checks


def _language_checks(languages: set[str]) -> list[Check]:
    """Per registered language: does its grammar extract the probe's declaration, does its exact analyzer work."""
    out: list[Check] = []
    for spec in registry.LANGUAGES:
        for lang in sorted(languages & set(spec.ids)):
            out += [_grammar_check(spec, lang), *_exact_check(spec, lang)]
    return out


def _grammar_check(spec: LanguageSpec, lang: str) -> Check:
    module = spec.module()
    if module is None or spec.probe is None:
        return Check(f"analyzer.{lang}", "WARN", f"no {lang} extractor in this version: files are skipped")
    try:
        facts = module.extract(spec.probe.path, spec.probe.source, module.package_for(spec.probe.path, frozenset()))
    except Exception as exc:  # report, never crash doctor
        return Check(f"analyzer.{lang}", "FAIL", f"tree-sitter probe failed: {type(exc).__name__}: {exc}")
    found = {s.qualified_name for s in facts.symbols}
    if spec.probe.qualified_name not in found or facts.status != "indexed":
        return Check(
            f"analyzer.{lang}",
            "FAIL",
            f"tree-sitter {module.EXTRACTOR_VERSION} did not extract "
            f"{spec.probe.qualified_name} from its probe (status {facts.status}, found {sorted(found)})",
        )
    return Check(f"analyzer.{lang}", "PASS", f"tree-sitter extractor {module.EXTRACTOR_VERSION}")


def _exact_check(spec: LanguageSpec, lang: str) -> list[Check]:
    """The exact analyzer's version and whether it resolves a tiny probe project."""
    name = f"analyzer.{lang}.exact"
    adapter = spec.adapter()
    if adapter is None:
        return [Check(name, "WARN", f"no exact analyzer for {lang} in this version: answers are {spec.fallback_note}")]
    try:
        ver = adapter.version()
        detail = adapter.probe()
    except AnalyzerFailed as exc:
        return [Check(name, "WARN", f"{exc}: {lang} falls back to {spec.fallback_note}")]
    return [Check(name, "PASS", f"{adapter.analyzer} {ver} at {adapter.executable()}: probe: {detail}")]


def run_checks(layout: StateLayout, *, deep: bool = False) -> list[Check]:
    """Every doctor check, in display order."""
    checks = [Check("python", "PASS" if sys.version_info >= (3, 11) else "FAIL", sys.version.split()[0])]
    checks += _package_checks()
    checks.append(_state_check(layout))
    checks += _state_file_checks(layout)
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
    checks += _generation_checks(layout, deep=deep)
    return checks


def _generation_checks(layout: StateLayout, *, deep: bool) -> list[Check]:
    """The CURRENT pointer, then the generation a server would serve (its digest too with ``deep``)."""
    pointer = read_pointer(layout)
    on_disk = len(list_generations(layout))
    checks = []
    if pointer.problem:
        checks.append(
            Check(
                "generation.pointer",
                "FAIL",
                f"{pointer.problem}; {on_disk} generations on disk: servers fall back to the newest "
                "readable one and the next `kivgraph index` rewrites CURRENT",
            )
        )
    elif pointer.name is None and on_disk:
        checks.append(
            Check(
                "generation.pointer",
                "WARN",
                f"{layout.current_pointer} is missing but {on_disk} generations are on disk: servers "
                "use the newest readable one and the next `kivgraph index` rewrites CURRENT",
            )
        )
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
            checks.append(
                Check(
                    "generation",
                    "WARN" if newer_format else "FAIL",
                    f"CURRENT names {pointer.name}, which is unusable: {'; '.join(refused)}; servers answer from {detail}"
                    + (f" (reader format {FORMAT_VERSION}; re-index to upgrade)" if newer_format else ""),
                )
            )
        else:
            checks.append(Check("generation", "PASS", detail))
    return checks
