"""graph_status: identity, counts, breakdowns and freshness of the published generation."""

from __future__ import annotations

from typing import Any

from server.envelope import snapshot_age_ms
from server.queries.repositories import freshness_row, is_derived
from snapshot_format.reader import Generation
from snapshot_format.records import CountEntry
from snapshot_format.versions import FEATURE_VERSION


def _entries(entries: tuple[CountEntry, ...]) -> list[dict[str, Any]]:
    return [{"key": e.key, "count": e.count} for e in sorted(entries, key=lambda e: e.key)]


def graph_status(gen: Generation) -> dict[str, Any]:
    """What the server answers from: never reports a zero for something it did not measure."""
    m = gen.manifest
    counts = gen.counts()
    breakdown = gen.breakdown()
    repos = gen.repositories()
    freshness = [freshness_row(r) for r in repos]
    result: dict[str, Any] = {
        "status": "ready" if repos else "empty",
        "snapshot_id": m.id,
        "snapshot_built_at": m.built_at,
        "snapshot_age_ms": snapshot_age_ms(m.built_at_ns),
        "snapshot_row_format_version": m.format_version,
        "schema_version": m.feature_version,
        "schema_version_expected": FEATURE_VERSION,
        "schema_outdated": m.feature_version < FEATURE_VERSION,
        "resolver_version": m.indexer_version,
        "repositories": counts.repositories,
        "files": counts.files,
        "failed_files": counts.failed_files,
        "partial_files": counts.partial_files,
        "skipped_files": counts.skipped_files,
        "symbols": counts.symbols,
        "edges": counts.edges,
        "package_edges": counts.package_dependencies,
        "unresolved": counts.unresolved,
        "edges_by_kind": _entries(breakdown.edges_by_kind),
        "edges_by_confidence": _entries(breakdown.edges_by_confidence),
        "unresolved_by_reason": _entries(breakdown.unresolved_by_reason),
        "symbols_by_language": _entries(breakdown.symbols_by_language),
        "files_by_language": _entries(breakdown.files_by_language),
        "repository_freshness": freshness,
        "repositories_moved": sum(1 for row in freshness if row.get("moved")),
    }
    if m.analyzers:
        result["analyzers"] = dict(m.analyzers)
    derived = [r.name for r in repos if is_derived(r.name)]
    if derived:
        result["derived"] = {"repositories": derived}
    return result
