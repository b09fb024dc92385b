"""find_cross_repo_consumers: consumers of a symbol outside its own repository, by category."""

from __future__ import annotations

from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.declarations import FindCrossRepoConsumers
from server.queries import counterparts
from server.queries.consumers import Consumer, consumer_file, coverage_of, find_consumers, package_key
from server.selector import check_repository, parse_selector, resolve
from server.tools.common import (
    merged_with,
    provenance_name,
    read_in_language,
    read_paging,
    read_view,
    split_tests,
    truncation_guidance,
    wrap,
)
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import Confidence, EdgeKind

# Compact entries leave provenance and evidence_kind (which the category implies) to view full.
# What a compact entry's category already says, left unwritten (docs/surface.md §6.3 item 5): a package row is
# a package dependency, mapped exactly; an unresolved row is an ask nothing answered. The full view spells both.
IMPLIED_BY_CATEGORY: dict[str, dict[str, str]] = {
    "package": {"edge_kind": "PACKAGE_DEPENDS_ON", "confidence": "EXACT_PACKAGE_MAPPED"},
    "unresolved": {"confidence": "UNRESOLVED"},
}
_HOISTABLE = ("category", "edge_kind", "confidence", "reason", "requested_package", "requested_symbol", "bound_to")
_GROUP_KEY = ("category", "edge_kind", "confidence", "reason", "bound_to")
# Also tried (the smallest page wins): edge_kind left on the rows, so that one category is one group.
_COARSE_GROUP_KEY = ("category", "confidence", "reason", "bound_to")
_ENTRY_ORDER = (
    "category",
    "repo",
    "pkg",
    "at",
    "end_line",
    "qualified_name",
    "name",
    "kind",
    "edge_kind",
    "confidence",
    "requested_package",
    "requested_symbol",
    "reason",
    "detail",
    "line",
    "bound_to",
)


def _row(c: Consumer) -> dict[str, Any]:
    """The full row of one consumer fact (absent fields omitted)."""
    row: dict[str, Any] = {"category": c.category}
    if c.bound_to is not None:
        b = c.bound_to
        row["bound_to"] = {"qualified_name": b.qualified_name, "repository": b.repository, "file_path": b.path}
    if c.symbol is not None:
        s = c.symbol
        row.update(
            {
                "name": s.name,
                "qualified_name": s.qualified_name,
                "kind": s.kind,
                "edge_kind": EdgeKind(c.edge_kind).name,
                "repository": s.repository,
                "package_name": s.package,
                "file_path": s.path,
                "start_line": s.start_line,
                "end_line": s.end_line,
                "confidence": Confidence(c.confidence).name,
                "provenance": provenance_name(c.provenance),
                "evidence_kind": "reference",
                "evidence_line": c.evidence_line,
                "stable_key": s.key,
            }
        )
        if c.evidence_col:
            row["start_column"] = c.evidence_col
    elif c.dependency is not None:
        d = c.dependency
        row.update(
            {
                "edge_kind": EdgeKind.PACKAGE_DEPENDS_ON.name,
                "repository": d.consumer_repository,
                "package_name": d.consumer_package,
                "confidence": Confidence(c.confidence).name,
                "evidence_kind": "import",
                "requested_package": d.provider_package,
                "detail": f"first import at {d.path}:{d.line}" + (f", {d.count} imports" if d.count > 1 else ""),
            }
        )
    elif c.unresolved is not None:
        u = c.unresolved
        row.update({"repository": u.repository})
        if u.path:
            row.update({"file_path": u.path, "start_line": u.line})
        row.update(
            {
                "confidence": Confidence.UNRESOLVED.name,
                "evidence_kind": "unresolved_reference",
                "requested_package": u.package,
                "requested_symbol": u.name,
                "reason": u.reason,
            }
        )
        if u.detail:
            row["detail"] = u.detail
        if u.col:
            row["start_column"] = u.col
    return row


def _subject_full(s: Symbol) -> dict[str, Any]:
    out: dict[str, Any] = {
        "qualified_name": s.qualified_name,
        "repository": s.repository,
        "package_name": s.package,
        "module_path": s.path,
        "file_path": s.path,
        "start_line": s.start_line,
        "end_line": s.end_line,
    }
    out["stable_key"] = s.key
    out["package_key"] = package_key(s)
    return out


def _subject_compact(s: Symbol, asked: str | None) -> dict[str, Any]:
    """``subject`` (``repo:path:line``) and ``qn`` as find_references states them, and ``subject_pkg`` when the
    qualified name does not spell the package."""
    out = views.subject_head(s, asked)
    if not views.implied_package(s.package, [s.qualified_name]):
        out["subject_pkg"] = s.package
    return out


def _compact_entry(c: Consumer, subject: Symbol) -> dict[str, Any]:
    full = _row(c)
    entry: dict[str, Any] = {"category": c.category, "repo": full["repository"]}
    if c.bound_to is not None:
        entry["bound_to"] = counterparts.label(c.bound_to, subject)
    if "package_name" in full:
        entry["pkg"] = full["package_name"]
    if "file_path" in full:
        entry["at"] = f"{full['file_path']}:{full['start_line']}"
    if c.symbol is not None:
        s = c.symbol
        if s.end_line > s.start_line:
            entry["end_line"] = s.end_line
        entry["qualified_name"] = s.qualified_name
        if not views.name_is_implied(s.name, s.qualified_name):
            entry["name"] = s.name
        entry["kind"] = s.kind
        if c.evidence_line and c.evidence_line != s.start_line:
            entry["line"] = c.evidence_line
    implied = IMPLIED_BY_CATEGORY.get(c.category, {})
    for column in ("edge_kind", "confidence", "requested_package", "requested_symbol", "reason", "detail"):
        if column in full and implied.get(column) != full[column]:
            entry[column] = full[column]
    return entry


def _merge_packages(pairs: list[tuple[Consumer, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Package rows of one repository become one entry; ``pkg`` becomes a list when several packages carry it."""
    out: list[dict[str, Any]] = []
    index: dict[tuple[Any, ...], dict[str, Any]] = {}
    for consumer, entry in pairs:
        if consumer.category != "package":
            out.append(entry)
            continue
        key = tuple((k, v) for k, v in entry.items() if k not in ("pkg", "detail"))
        merged = index.get(key)
        if merged is None:
            index[key] = dict(entry)
            out.append(index[key])
            continue
        pkgs = merged["pkg"] if isinstance(merged["pkg"], list) else [merged["pkg"]]
        if entry["pkg"] not in pkgs:
            pkgs.append(entry["pkg"])
        merged["pkg"] = pkgs
        if merged.get("detail") != entry.get("detail"):
            merged.pop("detail", None)
    return out


def _strip(entry: dict[str, Any], skip: tuple[str, ...]) -> dict[str, Any]:
    return {k: entry[k] for k in _ENTRY_ORDER if k in entry and k not in skip}


_SYMBOL_TAIL = ("category", "edge_kind", "kind", "confidence", "bound_to")


def _symbol_row(c: Consumer, entry: dict[str, Any]) -> dict[str, Any]:
    """A consuming declaration as a label row: ``qn@start[-end]``, the evidence as ``line:col``."""
    s = c.symbol
    assert s is not None
    return {
        **entry,
        "repository": s.repository,
        "file_path": s.path,
        "package": s.package,
        "qualified_name": s.qualified_name,
        "label": views.module_label(s),
    }


def _merge_uses(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per consuming declaration: its several uses of the subject become one ``KIND+KIND`` edge_kind."""
    out: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        key = (
            row["repository"],
            row["file_path"],
            row["label"],
            row.get("category"),
            row.get("confidence"),
            row.get("kind"),
            row.get("bound_to"),
        )
        kept = seen.get(key)
        if kept is None:
            seen[key] = dict(row)
            out.append(seen[key])
        elif row.get("edge_kind") and row["edge_kind"] not in str(kept.get("edge_kind", "")).split("+"):
            kept["edge_kind"] = f"{kept['edge_kind']}+{row['edge_kind']}"
    return out


def _spells(package: str, requested: str) -> bool:
    """Whether ``package`` is the requested package or inside it (``click.core`` in ``click``, a Go package in
    its module)."""
    return bool(requested) and (package == requested or package.startswith((requested + ".", requested + "/")))


def _compact(subject: Symbol, page: list[Consumer], asked: str | None) -> dict[str, Any]:
    """Consumers with a declaration grouped by file as labels; package and unresolved rows as entries.

    A deviation from the reference system's per-consumer objects (docs/surface.md §6.3 item 5): a consuming
    declaration is the label ``qn@start[-end]`` in ``files: {path: [entry, …]}`` with a positional tail
    (category, edge_kind, kind, confidence; the uses of one declaration merged), the
    columns every row shares hoisted (edge kind and kind: the most common, a row stating its own), the
    repository most rows share stated once in the header (``repository``), and ``pkg: {path: package}`` only
    for a file whose qualified names do not spell it (``pkg: package`` when that is every file's). Package and unresolved rows keep the reference
    system's entries (``repo`` only when it differs from the header's).
    """
    entries = [_compact_entry(c, subject) for c in page]
    for e in entries:  # a dependency on the package the subject's own package name spells says nothing more
        asked_for = e.get("requested_package")
        if e["category"] == "package" and isinstance(asked_for, str) and _spells(subject.package, asked_for):
            del e["requested_package"]
    owner = {id(e): c for e, c in zip(entries, page, strict=True)}
    header = views.hoist(entries, (*_HOISTABLE, "kind"))
    repository = views.default_repository(entries, "repo")
    head: dict[str, Any] = {**_subject_compact(subject, asked), **header}
    if repository is not None:
        head["repository"] = repository

    def body(members: list[dict[str, Any]], skip: tuple[str, ...]) -> dict[str, Any]:
        hidden = (*header, *skip)
        symbol_rows = _merge_uses([_symbol_row(owner[id(m)], m) for m in members if owner[id(m)].symbol is not None])
        others = [
            (owner[id(m)], _strip(m, (*hidden, *(("repo",) if m["repo"] == repository else ()))))
            for m in members
            if owner[id(m)].symbol is None
        ]
        out: dict[str, Any] = {}
        if symbol_rows:
            local = {
                k: v
                for k, v in views.hoist(symbol_rows, ("edge_kind", "kind"), defaults=("edge_kind", "kind")).items()
                if k not in hidden
            }
            out.update(local)
            groups = views.file_groups(
                symbol_rows,
                [views.tail_entry(r["label"], r, _SYMBOL_TAIL, hidden, local) for r in symbol_rows],
                repository,
            )
            packages: dict[str, tuple[str, list[str]]] = {}
            for r in symbol_rows:
                key = views.group_key(r["repository"], r["file_path"], repository)
                packages.setdefault(key, (r["package"], []))[1].append(r["qualified_name"])
            unspelled = {
                key: package
                for key, (package, names) in packages.items()
                if package and not views.implied_package(package, names)
            }
            if unspelled and len(unspelled) == len(groups) and len(set(unspelled.values())) == 1:
                out["pkg"] = next(iter(unspelled.values()))  # every file's package, stated once
            elif unspelled:
                out["pkg"] = unspelled
            out["files"] = groups
        if others or not symbol_rows:
            out["consumers"] = _merge_packages(others)
        return out

    shapes = [{**head, **body(entries, ())}]
    for key_columns in (_GROUP_KEY, _COARSE_GROUP_KEY):
        loose = tuple(c for c in key_columns if c not in header)
        split = views.buckets(entries, loose) if loose else []
        if len(split) <= 1:
            continue
        groups = []
        for key, members in split:
            shared = views.hoist(members, ("detail", "kind"))
            groups.append({**key, **shared, **body(members, (*loose, *shared))})
        shapes.append({**head, "groups": groups})
    return views.finish(views.smallest(*shapes))


def find_cross_repo_consumers(gen: Generation, arguments: object) -> dict[str, Any]:
    """Consumers of the symbol in other repositories: exact symbols, packages, candidates, unresolved asks."""
    args = Args(arguments, FindCrossRepoConsumers)
    repo = args.string("in_repository")
    selector = parse_selector(args, repo_filter=repo)
    language = read_in_language(args, gen)
    view = read_view(args, files_allowed=False)
    paging = read_paging(args, gen)
    check_repository(gen, repo)
    subject = resolve(gen, selector)
    include_tests = args.boolean("include_tests")
    found = find_consumers(gen, subject, repo=repo, language=language)
    # Rows in test files are counted apart unless asked for, as find_references does (a package row by the
    # first file that imports it).
    split = split_tests(gen, found.rows, consumer_file, include_tests)
    rows: list[Consumer] = split.kept
    cursor_scope = scope(
        "find_cross_repo_consumers",
        "consumers-v1",
        subject=subject.key,
        repo=repo,
        language=language,
        include_tests=include_tests,
    )
    total = len(rows)

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = rows[start:end]
        if view == "full":
            results: dict[str, Any] = {
                "subject": _subject_full(subject),
                "consumers": [_row(c) for c in page] if page else None,
            }
        else:
            results = _compact(subject, page, selector.qualified_name)
        if found.merged_with:
            results["merged_with"] = merged_with(gen, found.merged_with, full=view == "full")
        guidance = None
        if total == 0 and not split.test_rows:  # with test rows, the tests note says where the consumers are
            guidance = (
                "no other repository consumes this symbol; check graph_status in case a consumer was never "
                "indexed, and use find_references for uses in its own repository"
            )
        elif len(page) < total:
            guidance = truncation_guidance(len(page), total, "in_repository or in_language")
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=coverage_of(rows),
            results=results,
            guidance=guidance,
            tests=split.note(),
        )

    return paging.fit(
        gen, total, cursor_scope, answer, tool="find_cross_repo_consumers", narrow_with="in_repository or in_language"
    )
