"""get_file_outline: what is declared under a file or directory."""

from __future__ import annotations

from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.declarations import GetFileOutline
from server.envelope import Coverage
from server.queries.outline import outline
from server.queries.symbols import concise_signature
from server.tools.common import read_paging, read_symbol_kinds, read_view, wrap
from snapshot_format.reader import Generation
from snapshot_format.records import File, Symbol


def get_file_outline(gen: Generation, arguments: object) -> dict[str, Any]:
    """Declarations under a file or directory, in file and source order."""
    args = Args(arguments, GetFileOutline)
    repository = args.string("repository") or ""
    path = args.path("path") or ""
    kinds, kinds_echo = read_symbol_kinds(args)
    include_members = args.boolean("include_members")
    view = read_view(args, files_allowed=True)
    detailed = view == "full"
    paging = read_paging(args, gen)
    found = outline(
        gen,
        repository,
        path,
        kinds=kinds if kinds_echo != ["*"] else None,
        include_members=include_members or kinds_echo == ["*"],
    )
    cursor_scope = scope(
        "get_file_outline",
        "file-order-v1",
        repository=repository,
        path=path,
        kind=kinds_echo,
        include_members=include_members,
    )
    total = len(found.symbols)

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = found.symbols[start:end]
        display_path = path or "."
        if view == "files":
            counts: dict[str, int] = {}
            for s in page:
                counts[s.path] = counts.get(s.path, 0) + 1
            results: Any = {
                "repository": repository,
                "path": display_path,
                "files": [{"file": p, "declarations": n} for p, n in counts.items()],
            }
        elif view == "full":
            results = _full(repository, display_path, found.files, page, detailed)
        else:
            results = _compact(repository, display_path, found.files, page, detailed)
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=Coverage(),
            results=results,
        )

    return paging.fit(
        gen, total, cursor_scope, answer, tool="get_file_outline", narrow_with="symbol_kinds or a deeper path"
    )


def _packages(files: list[File], page: list[Symbol]) -> list[str]:
    on_page = {s.path for s in page}
    return sorted({f.package for f in files if f.package and (f.path in on_page or not page)})


def _full(repository: str, path: str, files: list[File], page: list[Symbol], detailed: bool) -> dict[str, Any]:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for s in page:
        row: dict[str, Any] = {
            "name": s.name,
            "kind": s.kind,
            "signature": s.signature if detailed else concise_signature(s),
            "exported": s.exported,
            "start_line": s.start_line,
            "end_line": s.end_line,
        }
        if s.qualified_name != s.name:
            row["qualified_name"] = s.qualified_name
        if detailed:
            row["stable_key"] = s.key
        by_file.setdefault(s.path, []).append(row)
    on_page = set(by_file)
    return {
        "repository": repository,
        "path": path,
        "packages": _packages(files, page),
        "languages": sorted({f.language for f in files if f.path in on_page or not page}),
        "files": [{"path": p, "symbols": rows} for p, rows in by_file.items()],
    }


_TAIL = ("name", "kind", "exported", "signature", "stable_key")


def _compact(repository: str, path: str, files: list[File], page: list[Symbol], detailed: bool) -> dict[str, Any]:
    rows = [
        {
            "symbol": s,
            "label": views.module_label(s),
            "name": "" if views.name_is_implied(s.name, s.qualified_name) else s.name,
            "kind": s.kind,
            "exported": views.export_state(s),  # left off where the name says it
            "signature": s.signature if detailed and s.signature else "",
            "stable_key": s.key if detailed else "",
        }
        for s in page
    ]
    # the most common kind and export state are stated once; a row that differs says its own
    hoisted = views.hoist(rows, ("kind", "exported"), defaults=("kind", "exported"))
    head: dict[str, Any] = {"repository": repository, "path": path}
    packages = _packages(files, page)
    if len(packages) == 1:
        head["package"] = packages[0]
    elif packages:
        head["packages"] = packages
    head.update(views.readable(hoisted))

    def entry(row: dict[str, Any], skip: tuple[str, ...]) -> Any:
        return views.tail_entry(row["label"], row, _TAIL, skip, hoisted)

    # One file outlined: its path is the header's, so the labels go straight under ``at`` (a deviation from
    # the reference system's ``files: [{file, at}]``, which would repeat the header's path in every group;
    # docs/surface.md §6.3 item 6).
    single_file = bool(page) and all(s.path == path for s in page)

    def groups_by_file(members: list[dict[str, Any]], skip: tuple[str, ...]) -> dict[str, Any]:
        if single_file:
            return {"at": [entry(r, skip) for r in members]}
        file_rows = [{"repository": repository, "file_path": r["symbol"].path} for r in members]
        return {"files": views.file_groups(file_rows, [entry(r, skip) for r in members], repository)}

    flat = {**head, **groups_by_file(rows, ())}
    loose = tuple(c for c in ("kind", "exported") if c not in hoisted)
    split = views.buckets(rows, loose) if loose else []
    if len(split) <= 1:
        return views.finish(flat)
    grouped = {**head, "groups": [{**views.readable(key), **groups_by_file(members, loose)} for key, members in split]}
    return views.finish(views.smaller(flat, grouped))
