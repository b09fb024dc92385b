"""find_references: one hop, incoming or outgoing, with declared default filters."""

from __future__ import annotations

from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.declarations import FindReferences
from server.envelope import Coverage
from server.errors import invalid
from server.pending import waiting_consumers
from server.queries import counterparts
from server.queries.references import (
    ALL_KINDS,
    DEFAULT_EXCLUDED,
    DEFAULT_KINDS,
    REFERENCE_VOCABULARY,
    Reference,
    References,
)
from server.queries.references import find_references as query
from server.queries.repositories import analyses
from server.selector import check_repository, parse_selector, resolve
from server.testfiles import tests_note
from server.tools.common import (
    merged_with,
    provenance_name,
    read_in_language,
    read_paging,
    read_view,
    split_tests,
    subject_full,
    truncation_guidance,
    wrap,
)
from server.tools.hierarchy import find_relation
from server.tools.unbound import unbound_groups
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import Confidence, EdgeKind

NARROW_WITH = "edge_kinds, confidence, in_repository or in_language"
CONFIDENCES = tuple(c.name for c in Confidence)
# Compact rows carry no provenance (which analyzer saw the edge: view full states it per row); confidence,
# what an agent acts on, stays.
_TAIL = ("edge_kind", "kind", "confidence", "via", "bound_to")
_HOISTABLE = ("kind", "edge_kind", "confidence", "via", "bound_to")
_GROUP_KEY = ("kind", "edge_kind", "confidence", "via", "bound_to")
_DEFAULTS = ("kind", "edge_kind", "confidence")  # every row has them: the header states the most common


def read_edge_kinds(args: Args) -> tuple[frozenset[int], list[str], bool]:
    """The kinds asked for, their identity form, and whether the default (no forwarding bindings) applies."""
    raw = args.string_list("edge_kinds")
    if not raw:
        return DEFAULT_KINDS, sorted(EdgeKind(k).name for k in DEFAULT_KINDS), True
    if "*" in raw:
        if len(set(raw)) != 1:
            raise invalid('edge_kinds ["*"] means every kind and must stand alone')
        return ALL_KINDS, ["*"], False
    unknown = [k for k in raw if k not in REFERENCE_VOCABULARY]
    if unknown:
        raise invalid(
            f'edge_kinds: {unknown[0]!r} is not a reference kind; accepted: {", ".join(REFERENCE_VOCABULARY)} or ["*"]'
        )
    names = sorted(set(raw))
    return frozenset(EdgeKind[k] for k in names), names, False


def find_references(gen: Generation, arguments: object) -> dict[str, Any]:
    """Who references the symbol (incoming) or what it references (outgoing)."""
    args = Args(arguments, FindReferences)
    if args.raw("relation") not in (None, ""):
        return find_relation(gen, args)
    repo = args.string("in_repository")
    selector = parse_selector(args, repo_filter=repo)
    direction = args.enum("direction") or ""
    language = read_in_language(args, gen)
    kinds, kinds_identity, defaulted = read_edge_kinds(args)
    confidence_name = args.enum("confidence")
    include_derived = args.boolean("include_derived")
    include_tests = args.boolean("include_tests")
    view = read_view(args, files_allowed=True)
    paging = read_paging(args, gen, files_view=view == "files")
    check_repository(gen, repo)
    subject = resolve(gen, selector)
    outgoing = direction == "outgoing"
    found = query(
        gen,
        subject,
        outgoing=outgoing,
        kinds=kinds,
        repo=repo,
        language=language,
        confidence=Confidence[confidence_name] if confidence_name else None,
        include_derived=include_derived,
    )
    split = split_tests(gen, found.rows, lambda r: (r.other.repository, r.other.path, r.other.language), include_tests)
    rows: list[Reference] = split.kept
    cursor_scope = scope(
        "find_references",
        "references-v1",
        subject=subject.key,
        direction=direction,
        repo=repo,
        language=language,
        edge_kinds=kinds_identity,
        confidence=confidence_name,
        include_tests=include_tests,
        include_derived=include_derived,
    )
    total = len(rows)
    extras: dict[str, Any] = {}
    if defaulted and view == "full":  # the compact view leaves the declared default to the schema
        extras["edge_kinds_default_excluded"] = list(DEFAULT_EXCLUDED)
    if found.dispatch_through:
        extras["dispatch_through"] = found.dispatch_through
    if found.merged_with:
        extras["merged_with"] = merged_with(gen, found.merged_with, full=view == "full")
    if found.implements_outside:
        extras["implements_outside"] = found.implements_outside

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = rows[start:end]
        if view == "files":
            results: Any = _files(subject, direction, page, extras, selector.qualified_name)
        elif view == "full":
            results = _full(subject, direction, page, extras)
        else:
            results = _compact(subject, direction, page, extras, selector.qualified_name)
        hoisted = results.get("repository", subject.repository) if view == "compact" else None
        unbound = unbound_groups(gen, found.unbound, include_tests=include_tests, repository=hoisted)
        results.update(unbound.fields(compact=view != "full"))
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=_coverage(found, rows),
            results=results,
            guidance=_guidance(gen, subject, found, total, len(page), outgoing, split.test_rows),
            tests=tests_note(split.test_rows, split.test_files, unbound.in_tests)
            if split.test_rows or unbound.in_tests
            else None,
        )

    return paging.fit(gen, total, cursor_scope, answer, tool="find_references", narrow_with=NARROW_WITH)


def _coverage(found: References, rows: list[Reference]) -> Coverage:
    """The confidences of the rows listed (test rows left out are not in the answer), plus the unresolved."""
    coverage = Coverage(unresolved_related=len(found.unbound))
    for r in rows:
        coverage.count_confidence(r.confidence)
    return coverage


def _guidance(
    gen: Generation, subject: Symbol, found: References, total: int, returned: int, outgoing: bool, test_rows: int
) -> str | None:
    if total and returned < total:
        return truncation_guidance(returned, total, NARROW_WITH)
    if total:
        return None
    if test_rows:
        return None  # the tests note says where the uses are
    if outgoing:
        return "the symbol reaches nothing with these edge kinds; ask direction=incoming for its users"
    repo = gen.repository(subject.repository)
    modes = {a["mode"] for a in analyses(repo) if a["language"] == subject.language} if repo else set()
    blind = found.coverage.unresolved_related
    if blind:
        return (
            f"no edge reaches this symbol, but {blind} reference(s) to its name could not be resolved (a "
            "file that does not parse, a dynamic use, a failed analyzer run, a type relation the checker "
            "could not decide, a value handed to code outside the graph, a call the language makes without "
            "naming it, or a base method outside the graph it overrides), so this is not proof of absence; "
            "results.unbound says where they are"
        )
    waiting = waiting_consumers(gen).get(subject.repository)
    if waiting:
        return (
            f"no edge reaches this symbol in this snapshot, but {subject.repository}'s files are pending exact "
            f"analysis and {', '.join(waiting)} keep their edges into it from before the edit "
            "(pending_exact.consumers), so this is not proof of absence until the next snapshot, which this server "
            "follows"
        )
    if modes == {"exact"}:
        outside = (
            f"; it implements {', '.join(found.implements_outside)}, an interface outside the graph, so code there "
            "may still call it (results.implements_outside)"
            if found.implements_outside
            else ""
        )
        return (
            "nothing references this symbol: the edges are type-checked, so this is an absence rather than "
            f"a miss{outside}; check graph_status for repositories that were never indexed"
        )
    return (
        "nothing references this symbol in the graph, but its language was analysed without a type "
        "checker here, so this is not proof of absence; confirm with grep or check graph_status"
    )


def _full(subject: Symbol, direction: str, page: list[Reference], extras: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for r in page:
        o = r.other
        row: dict[str, Any] = {
            "name": o.name,
            "qualified_name": o.qualified_name,
            "kind": o.kind,
            "repository": o.repository,
            "file_path": o.path,
            "start_line": o.start_line,
            "end_line": o.end_line,
            "language": o.language,
            "edge_kind": EdgeKind(r.kind).name,
            "confidence": Confidence(r.confidence).name,
            "provenance": provenance_name(r.provenance),
        }
        if r.via:
            row["via"] = r.via
        if r.bound_to is not None:
            row["bound_to"] = {"qualified_name": r.bound_to.qualified_name, "file_path": r.bound_to.path}
            if r.bound_to.repository != subject.repository:
                row["bound_to"]["repository"] = r.bound_to.repository
        row["stable_key"] = o.key
        row["evidence_line"] = r.line
        row["evidence_col"] = r.col
        row["occurrences"] = r.count
        rows.append(row)
    return {"subject": subject_full(subject), "direction": direction, "references": rows, **extras}


def _subject_compact(subject: Symbol, direction: str, asked: str | None) -> dict[str, Any]:
    head = views.subject_head(subject, asked)
    if direction != "incoming":  # the default direction is the schema's
        head["direction"] = direction
    return head


def _files(
    subject: Symbol, direction: str, page: list[Reference], extras: dict[str, Any], asked: str | None
) -> dict[str, Any]:
    """``files: {repository: {path: count}}`` with each repository's paths as a directory tree
    (``views.path_tree``; docs/surface.md §6.3 item 2).

    The reference system writes ``[{file: "<repo>/<path>", count}]``; the same pairs keyed by repository then
    by directory state the repository and each shared directory once and drop two field names per file.
    """
    counts: dict[str, dict[str, int]] = {}
    for r in page:
        paths = counts.setdefault(r.other.repository, {})
        paths[r.other.path] = paths.get(r.other.path, 0) + 1
    tree = {repository: views.path_tree(paths) for repository, paths in counts.items()}
    return {**_subject_compact(subject, direction, asked), **extras, "files": tree}


def _compact(
    subject: Symbol, direction: str, page: list[Reference], extras: dict[str, Any], asked: str | None
) -> dict[str, Any]:
    rows = [
        {
            "repository": r.other.repository,
            "file_path": r.other.path,
            "kind": r.other.kind,
            "edge_kind": EdgeKind(r.kind).name,
            "confidence": Confidence(r.confidence).name,
            "via": r.via,
            "bound_to": counterparts.label(r.bound_to, subject) if r.bound_to is not None else "",
            "label": views.module_label(r.other),
        }
        for r in page
    ]
    header = views.hoist(rows, _HOISTABLE, defaults=_DEFAULTS)
    repository, named = views.page_repository(views.default_repository(rows), subject.repository)
    header = {**named, **header}
    head = {**_subject_compact(subject, direction, asked), **header, **extras}
    tail_columns = _TAIL

    def at(members: list[dict[str, Any]], skip: tuple[str, ...]) -> dict[str, list[Any]]:
        entries = [views.tail_entry(m["label"], m, tail_columns, skip, header) for m in members]
        return views.file_groups(members, entries, repository)

    flat = {**head, "files": at(rows, ())}
    loose = tuple(c for c in _GROUP_KEY if c not in header)
    split = views.buckets(rows, loose) if loose else []
    if len(split) <= 1:
        return views.finish(flat)
    grouped = {**head, "groups": [{**key, "files": at(members, loose)} for key, members in split]}
    return views.finish(views.smaller(flat, grouped))
