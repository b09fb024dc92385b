"""Symbol lookups: find_symbol's matching set and get_symbol's detail."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from server.queries.repositories import is_derived
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol

MODES = ("exact", "qualified_exact", "prefix", "substring")
SIGNATURE_KINDS = frozenset({"function", "func", "method", "class"})


def _index_hits(gen: Generation, name: str, mode: str) -> Iterator[tuple[str, str, bytes]]:
    """(repository, path, raw key) of every name-index entry matching ``name`` in ``mode``."""
    if mode == "prefix":
        for entry_name, repo, path, key16 in gen.name_index(name):
            if entry_name.startswith(name):
                yield repo, path, key16
    else:  # substring: a scan of the whole name index
        for entry_name, repo, path, key16 in gen.name_index(""):
            if name in entry_name:
                yield repo, path, key16


def find_symbols(
    gen: Generation,
    name: str,
    *,
    mode: str = "exact",
    kind: str | None = None,
    repo: str | None = None,
    path_prefix: str | None = None,
    include_derived: bool = False,
) -> list[Symbol]:
    """Declarations matching ``name`` in ``mode``, filtered, in ascending stable-key order."""
    if mode == "exact":
        found = gen.symbols_by_name(name, repo)
    elif mode == "qualified_exact":
        found = gen.symbols_by_qualified_name(name, repo)
    else:
        raws = [
            key16
            for r, p, key16 in _index_hits(gen, name, mode)
            if (repo is None or r == repo) and (not path_prefix or p.startswith(path_prefix))
            and (include_derived or not is_derived(r))
        ]
        found = list(gen.symbols_by_raw(raws))
    out = [
        s for s in found
        if (kind is None or s.kind == kind)
        and (repo is None or s.repository == repo)
        and (not path_prefix or s.path.startswith(path_prefix))
        and (include_derived or repo is not None or not is_derived(s.repository))
    ]
    out.sort(key=lambda s: s.key)
    return out


def count_unresolved_named(gen: Generation, name: str) -> int:
    """How many unresolved references request exactly this name."""
    return sum(1 for _ in gen.unresolved_by_name(name))


def concise_signature(sym: Symbol) -> str:
    """The signature without the symbol's own package path."""
    sig = sym.signature
    if sym.package and sig:
        sig = sig.replace(sym.package + ".", "")
    return sig


def symbol_detail(gen: Generation, sym: Symbol, *, detailed: bool = False) -> dict[str, Any]:
    """Every stored fact about one declaration, with its repository's absolute path."""
    repo = gen.repository(sym.repository)
    out: dict[str, Any] = {
        "stable_key": sym.key,
        "repository": sym.repository,
        "repository_path": repo.root if repo else None,
        "package_name": sym.package,
        "file_path": sym.path,
        "language": sym.language,
        "name": sym.name,
        "qualified_name": sym.qualified_name,
        "kind": sym.kind,
        "signature": sym.signature if detailed else concise_signature(sym),
        "exported": sym.exported,
        "start_line": sym.start_line,
        "end_line": sym.end_line,
    }
    if sym.container:
        container = gen.symbol(sym.container)
        if container is not None:
            out["container"] = container.qualified_name
    if detailed:
        out["start_col"] = sym.start_col
        out["end_col"] = sym.end_col
        if sym.doc:
            out["doc"] = sym.doc
    return out
