"""Symbol lookups: find_symbol's matching set and get_symbol's detail."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from server.queries.repositories import DERIVED_PREFIX, is_derived
from snapshot_format.keys import KEY_BYTES, SEP, key_to_bytes, text
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol

MODES = ("exact", "qualified_exact", "prefix", "substring")
SIGNATURE_KINDS = frozenset({"function", "func", "method", "class"})


SORTING_VERSION = "name-repository-path-key-v1"


FileFilter = Callable[[str, str], bool]


def _keys_named(
    gen: Generation,
    name: str,
    repo: str | None,
    path_prefix: str | None,
    include_derived: bool,
    keep_file: FileFilter | None = None,
) -> Iterator[bytes]:
    """Raw keys of the declarations named exactly ``name``, in index order, filtered on the key bytes alone."""
    entries = gen.name_keys(name, repo)
    if not path_prefix and keep_file is None and (include_derived or repo is not None or not has_derived(gen)):
        yield from (k[-KEY_BYTES:] for k in entries)
        return
    head = len(text(name)) + 1
    wanted_path = text(path_prefix or "")
    for k in entries:
        repository, _, path = k[head : -KEY_BYTES - 1].partition(SEP)
        if repo is None and not include_derived and repository.startswith(DERIVED_PREFIX.encode()):
            continue
        if not path.startswith(wanted_path):
            continue
        if keep_file is not None and not keep_file(repository.decode("utf-8"), path.decode("utf-8")):
            continue
        yield k[-KEY_BYTES:]


def first_named(
    gen: Generation,
    name: str,
    limit: int,
    *,
    kinds: frozenset[str] | None = None,
    repo: str | None = None,
    path_prefix: str | None = None,
    include_derived: bool = False,
    keep_file: FileFilter | None = None,
) -> list[Symbol]:
    """The first ``limit`` declarations named exactly ``name`` that pass the filters, in index order.

    Reads no more of the index than it needs, so a name with thousands of homonyms costs a few records.
    """
    out: list[Symbol] = []
    for raw in _keys_named(gen, name, repo, path_prefix, include_derived, keep_file):
        sym = gen.symbol_by_raw(raw)
        if sym is not None and (kinds is None or sym.kind in kinds):
            out.append(sym)
            if len(out) >= limit:
                break
    return out


def has_derived(gen: Generation) -> bool:
    """Whether the generation holds a derived provider (most hold none, and then nothing needs withholding)."""
    return any(is_derived(r.name) for r in gen.repositories())


def match_symbols(
    gen: Generation,
    name: str,
    *,
    mode: str = "exact",
    kinds: frozenset[str] | None = None,
    repo: str | None = None,
    path_prefix: str | None = None,
    include_derived: bool = False,
    keep_file: FileFilter | None = None,
) -> list[bytes]:
    """Raw keys of the declarations matching ``name`` in ``mode``, filtered, in index order.

    The order is the name index's: name, repository, path, stable key. It groups
    the rows of one file together and needs no sort, so a page decodes only its
    own records; only the kind filter needs every record. ``keep_file`` filters
    on (repository, path), read from the index keys.
    """
    if mode == "qualified_exact":
        # the module-prefixed form, else the form a developer writes (``QueryClient.getQueryCache``)
        found = gen.symbols_by_qualified_name(name, repo) or short_form_matches(gen, name, repo)
        found = [
            s
            for s in found
            if (not path_prefix or s.path.startswith(path_prefix))
            and (include_derived or repo is not None or not is_derived(s.repository))
            and (keep_file is None or keep_file(s.repository, s.path))
        ]
        return [key_to_bytes(s.key) for s in found if kinds is None or s.kind in kinds]
    if mode == "exact":
        names = [name]
    elif mode == "prefix":
        names = list(gen.distinct_names(name))
    else:
        names = [n for n in gen.distinct_names() if name in n]
    raws = [k for n in names for k in _keys_named(gen, n, repo, path_prefix, include_derived, keep_file)]
    if kinds is not None:
        keep = {key_to_bytes(s.key) for s in gen.symbols_by_raw(raws) if s.kind in kinds}
        raws = [k for k in raws if k in keep]
    return raws


_MODULE_KINDS = frozenset({"module", "package"})


def short_form_matches(
    gen: Generation, short: str, repository: str | None = None, path_prefix: str | None = None
) -> list[Symbol]:
    """Declarations whose qualified name is ``short`` once the module prefix is dropped: the form a developer
    writes (``QueryClient.getQueryCache`` for ``src.queryClient.QueryClient.getQueryCache``).

    The dropped prefix must be the declaration's own module (its package, or a module symbol of its file),
    never a class or a namespace: ``getQueryCache`` alone does not name ``QueryClient.getQueryCache``.
    """
    last = short.rsplit(".", 1)[-1]
    if not last:
        return []
    modules: dict[tuple[str, str], set[str]] = {}
    out: list[Symbol] = []
    for s in gen.symbols_by_name(last, repository, path_prefix):
        if not s.qualified_name.endswith("." + short):
            continue
        prefix = s.qualified_name[: -len(short) - 1]
        if prefix != s.package:
            where = (s.repository, s.path)
            if where not in modules:
                modules[where] = {d.qualified_name for d in gen.declarations(*where) if d.kind in _MODULE_KINDS}
            if prefix not in modules[where]:
                continue
        out.append(s)
    return out


def load(gen: Generation, raws: list[bytes]) -> list[Symbol]:
    """The records of ``raws``, in their order."""
    return list(gen.symbols_by_raw(raws))


def find_symbols(gen: Generation, name: str, **filters: Any) -> list[Symbol]:
    """Every matching declaration as a record (see match_symbols for the filters)."""
    return load(gen, match_symbols(gen, name, **filters))


def count_unresolved_named(gen: Generation, name: str) -> int:
    """How many unresolved references request exactly this name."""
    return gen.count_unresolved_by_name(name)


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
    if sym.callable:
        out["callable"] = True
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
