"""A repository's interface: what a consumer can see of it (issue 24: an edit costs its own repository).

A consumer's analyzer run reads its providers' code, yet what its facts depend on is what those providers
declare and what the analyzer states of each declaration, not their bodies. The interface digest of a
repository (per language) is made of

- its declarations as extracted (path, qualified name, kind, name, signature, exported) and its import and
  export sites (what it re-exports), without positions: what the CANDIDATE resolver binds against;
- what its own analyzer run states of every symbol it defines (``ExactAdapter.interface``: for scip-python
  and scip-typescript each definition's SCIP symbol with a digest of its hover documentation, the signature
  with the types the checker inferred, and its relationships; go/types' declarations are the extracted ones,
  whose signatures spell their types); an adapter that cannot tell adds the repository's file hashes.

A consumer's analyzer facts are cached on its providers' interface digests instead of their bytes
(``KeyedHashes``): the providers, from the CANDIDATE resolution's package dependencies, transitively, are
analysed first, and each provider's file hashes are replaced by its interface digest in the consumer's key.
A body-only edit in a provider leaves every consumer's run cached; a changed signature, an inferred return
type that changed, a removed declaration change it.

The exact stage of a scoped run (indexer.incremental) runs the changed repository's analyzer alone and keeps
each consumer's layer when the interfaces it sees did not change (``Remembered``: each repository's interface as
the last exact publication left it, in the fact cache's bookkeeping).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from indexer.corpus import RepositoryFacts
from indexer.fact_cache import FactCache
from indexer.languages.spec import ExactAdapter

PREFIX = "interface:"  # a provider's file "hash" in a consumer's key: its interface digest


def supports(adapter: ExactAdapter[Any]) -> bool:
    """Whether the adapter states an interface (else a consumer's run stays cached on its providers' bytes)."""
    return type(adapter).interface is not ExactAdapter.interface


def _is_interface_site(kind: str) -> bool:
    return "import" in kind or "export" in kind or kind == "from"


Entry = tuple[str, str]  # (the simple name a consumer would write to use it, "" = every consumer; a digest)


def _h(*parts: object) -> str:
    h = hashlib.blake2b(digest_size=10)
    for part in parts:
        h.update(str(part).encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def _last(name: str) -> str:
    return name.replace("/", ".").rsplit(".", 1)[-1]


def declared_entries(repo: RepositoryFacts) -> list[Entry]:
    """The declarations and import/export sites of a repository's files, without positions (see the module doc)."""
    out: list[Entry] = []
    for ff in repo.files:
        out.append((_last(ff.package), _h("file", ff.path, ff.package, ff.status)))
        for s in ff.symbols:
            out.append((s.name, _h(s.qualified_name, s.kind, s.name, s.signature, s.exported, s.container, ff.path)))
        for x in ff.sites:
            if _is_interface_site(x.kind):
                out.append((_last(x.name), _h(x.kind, x.name, *x.extra, ff.path)))
    return out


def entries(
    adapter: ExactAdapter[Any] | None,
    facts: Any,
    repo: RepositoryFacts,
    own_hashes: Mapping[str, str],
    *,
    available: bool = True,
) -> list[Entry]:
    """The interface of ``repo`` (one language), entry by entry: its declared part and what its analyzer run states.

    No analyzer for the language (none, or not installed: ``available`` false): the declarations alone, what a
    consumer's CANDIDATE resolver reads. An analyzer whose run states nothing (it failed, or its adapter cannot
    tell): the file hashes too, seen by every consumer."""
    out = declared_entries(repo)
    if adapter is None or not available:
        return sorted(out)
    stated = adapter.interface(facts) if facts is not None else None
    if stated is not None:
        out += stated
    else:
        out += [("", _h("bytes", path, value)) for path, value in own_hashes.items()]
    return sorted(out)


def names_of(repo: RepositoryFacts) -> tuple[frozenset[str], bool]:
    """Every name a repository's files write (its uses, their chains, its own declarations): what its analysis can
    use of another repository's interface; and whether it imports or re-exports a module whole (``*``), so that a
    declaration added there is one more name it exports (its layer is bound again, its analysis is the same)."""
    out: set[str] = set()
    star = False
    for ff in repo.files:
        for x in ff.sites:
            if x.name == "*" or x.kind == "star":
                star = True
            for text in (x.name, *x.extra):
                out.update(p for p in text.replace("/", ".").split(".") if p)
        out.update(s.name for s in ff.symbols)
    return frozenset(out), star


def _implicit(name: str) -> bool:
    """A member code uses without writing its name: a Python special method (``Square(1)`` calls ``__init__``,
    ``a + b`` ``__add__``), a TypeScript ``constructor``: every consumer sees it."""
    return (name.startswith("__") and name.endswith("__")) or name == "constructor"


def seen_by(interface: Iterable[Entry], names: frozenset[str] | None) -> str:  # None: every entry
    """The digest of the part of an interface a consumer writing ``names`` can see: the entries of the names it
    writes (a declaration added that it does not name, a body edited, change nothing it sees)."""
    h = hashlib.blake2b(digest_size=20)
    for name, value in sorted(interface):
        if not name or names is None or name in names or _implicit(name):
            h.update(f"{name}\0{value}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass
class KeyedHashes:
    """The hashes a consumer's cache key is computed from: its own files', and each provider's interface digest
    in place of each of its files' hashes (see the module doc).

    ``providers``: repository -> the registered repositories it depends on (package dependencies). Only for an
    adapter that states interfaces; else every repository's bytes, as before.
    """

    hashes: Mapping[str, Mapping[str, str]]
    providers: Mapping[str, set[str]] | None
    names: Mapping[str, frozenset[str]] = field(default_factory=dict)  # repository -> ``names_of``
    known: dict[str, list[Entry]] = field(default_factory=dict)  # repository -> its interface, in this pass

    def reach(self, name: str) -> set[str]:
        """The providers of ``name``, transitively (a provider's provider's types come through its types)."""
        assert self.providers is not None
        seen: set[str] = set()
        todo = [name]
        while todo:
            for p in self.providers.get(todo.pop(), ()):
                if p not in seen and p != name:
                    seen.add(p)
                    todo.append(p)
        return seen

    def order(self, repos: Iterable[RepositoryFacts]) -> list[RepositoryFacts]:
        """Providers before their consumers (registry order otherwise; a cycle in registry order)."""
        listed = list(repos)
        if self.providers is None:
            return listed
        by_name = {r.name: r for r in listed}
        out: list[RepositoryFacts] = []
        placed: set[str] = set()
        visiting: set[str] = set()

        rank = {r.name: i for i, r in enumerate(listed)}

        def place(name: str) -> None:
            if name in placed or name in visiting or name not in by_name:
                return
            visiting.add(name)
            for p in sorted(self.providers.get(name, ()) if self.providers else (), key=lambda n: rank.get(n, -1)):
                place(p)
            visiting.discard(name)
            placed.add(name)
            out.append(by_name[name])

        for r in listed:
            place(r.name)
        return out

    def of(self, name: str) -> Mapping[str, Mapping[str, str]]:
        """The hashes ``name``'s cache key reads."""
        if self.providers is None:
            return self.hashes
        out: dict[str, Mapping[str, str]] = {name: self.hashes.get(name, {})}
        for p in sorted(self.reach(name)):
            files = self.hashes.get(p, {})
            known = self.known.get(p)
            seen = seen_by(known, self.names.get(name)) if known is not None else None
            out[p] = {path: PREFIX + seen for path in files} if seen is not None else files
        return out


def providers_of(dependencies: Iterable[Any]) -> dict[str, set[str]]:
    """consumer -> registered providers, from package dependency facts (``consumer_repository``/``provider_repository``)."""
    out: dict[str, set[str]] = {}
    for d in dependencies:
        if d.provider_repository and d.provider_repository != d.consumer_repository:
            out.setdefault(d.consumer_repository, set()).add(d.provider_repository)
    return out


# --- what the last exact publication left: each repository's interface ---------------------------------


def _record_key(language: str, repository: str, root: str) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for part in ("kivgraph:interface", language, repository, root):
        h.update(part.encode() + b"\0")
    return h.digest()


class Remembered(msgspec.Struct, frozen=True):
    """A repository's interface for one language as the last exact publication left it, the names its files
    write (``names_of``; ``everything``: it imports or re-exports a module whole), the key of the analyzer facts that publication bound,
    and its analyzer's key over its own files alone (``relink.own_keys``)."""

    entries: list[tuple[str, str]]
    names: list[str] = []
    everything: bool = False
    facts: bytes = b""
    own: bytes = b""

    @property
    def seen(self) -> frozenset[str]:
        return frozenset(self.names)


def recall(cache: FactCache, language: str, repository: str, root: str) -> Remembered | None:
    raw = cache.peek(_record_key(language, repository, root))
    if raw is None:
        return None
    try:
        return msgspec.msgpack.decode(raw, type=Remembered)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def remember(cache: FactCache, language: str, repository: str, root: str, record: Remembered) -> None:
    cache.keep(_record_key(language, repository, root), msgspec.msgpack.encode(record))
