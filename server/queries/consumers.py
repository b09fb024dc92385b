"""find_cross_repo_consumers: who uses a symbol from another repository.

Four categories, in rank order: ``exact_symbol`` (an incoming reference edge
of exact confidence), ``package`` (a package dependency of another
repository's package on the subject's package: it proves the dependency, never
a use), ``candidate`` (an incoming CANDIDATE edge) and ``unresolved`` (a
recorded failure in another repository that asked for this symbol). Rows in
the subject's own repository are excluded by construction.

A stub and the implementation it stands for answer as one symbol
(``server/queries/counterparts.py``): the uses bound to a counterpart are rows
too, each with ``bound_to``; rows in a counterpart's own repository are no
consumers of it either.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from server.envelope import Coverage
from server.queries import counterparts, traverse
from server.queries.references import ALL_KINDS
from snapshot_format.keys import key_to_bytes
from snapshot_format.reader import Generation
from snapshot_format.records import PackageDependency, Symbol, Unresolved
from snapshot_format.vocab import Confidence

CATEGORIES = ("exact_symbol", "package", "candidate", "unresolved")
_RANK = {c: i for i, c in enumerate(CATEGORIES)}


@dataclass(frozen=True)
class Consumer:
    category: str
    repository: str
    language: str
    confidence: int
    symbol: Symbol | None = None  # the consuming declaration (symbol categories)
    edge_kind: int = 0
    provenance: int = 0
    evidence_line: int = 0
    evidence_col: int = 0
    dependency: PackageDependency | None = None
    unresolved: Unresolved | None = None
    bound_to: Symbol | None = None  # the subject's counterpart the use was bound to (None: the subject)

    def sort_key(self) -> tuple[object, ...]:
        if self.symbol is not None:
            s = self.symbol
            where: tuple[object, ...] = (s.path, s.start_line, s.start_col, s.qualified_name, s.key)
        elif self.dependency is not None:
            d = self.dependency
            where = (d.consumer_package, d.path, d.line)
        else:
            u = self.unresolved
            assert u is not None
            where = (u.path, u.line, u.col, u.name, u.reason)
        bound = self.bound_to.key if self.bound_to is not None else ""
        return (_RANK[self.category], self.repository, *where, self.edge_kind, self.provenance, bound)


@dataclass
class Consumers:
    rows: list[Consumer]
    coverage: Coverage
    merged_with: list[Symbol] = field(default_factory=list)


def package_key(subject: Symbol) -> str:
    return f"package:{subject.language}:{subject.repository}:{subject.package}"


def provides(provider_package: str, subject_package: str) -> bool:
    """Whether a dependency on ``provider_package`` covers the subject's package (itself or a sub-package)."""
    return bool(provider_package) and (
        subject_package == provider_package or subject_package.startswith(provider_package + ".")
    )


def asks_for(u: Unresolved, subject: Symbol) -> bool:
    """A failure that requested this symbol: its package names the subject's and its symbol names the subject.

    A name on a line that does not parse requested no package anyone could read: it counts when the name
    is the subject's and the language could call it.
    """
    if u.reason == "SYNTAX_ERROR":
        return u.name == subject.name and traverse.could_reach(u, subject)
    if u.package not in {package_key(subject), subject.package, subject.path} or not u.package:
        return False
    name = u.name
    return bool(name) and (
        name in {subject.key, subject.name, subject.qualified_name}
        or name.endswith("." + subject.name)
        or name.endswith("::" + subject.name)
    )


def find_consumers(
    gen: Generation, subject: Symbol, *, repo: str | None = None, language: str | None = None
) -> Consumers:
    """Every consumer row outside the subject's repository matching the filters, ranked, with coverage."""
    group = counterparts.counterparts(gen, subject)
    rows: list[Consumer] = []
    for target in (subject, *group):
        rows += _symbol_rows(gen, subject, target)
    packages: dict[tuple[str, str, str, str], None] = {}
    for target in (subject, *group):
        for d in gen.package_dependencies(target.repository):
            key = (d.consumer_repository, d.consumer_package, d.provider_repository, d.provider_package)
            if (
                d.consumer_repository not in (subject.repository, target.repository)
                and provides(d.provider_package, target.package)
                and key not in packages
            ):
                packages[key] = None
                rows.append(
                    Consumer(
                        "package",
                        d.consumer_repository,
                        subject.language,
                        Confidence.EXACT_PACKAGE_MAPPED,
                        dependency=d,
                    )
                )
    for other in gen.repositories():
        if other.name == subject.repository:
            continue
        for u in gen.unresolved_in(other.name):
            for target in (subject, *group):
                if other.name != target.repository and asks_for(u, target):
                    rows.append(
                        Consumer(
                            "unresolved",
                            u.repository,
                            u.language or subject.language,
                            Confidence.UNRESOLVED,
                            unresolved=u,
                            bound_to=target if target is not subject else None,
                        )
                    )
                    break  # one row per failure, the first declaration of the group it asked for
    rows = [r for r in rows if (repo is None or r.repository == repo) and (language is None or r.language == language)]
    rows.sort(key=Consumer.sort_key)
    return Consumers(rows, coverage_of(rows), group)


def _symbol_rows(gen: Generation, subject: Symbol, target: Symbol) -> list[Consumer]:
    """The exact and candidate uses of ``target`` (the subject or a counterpart) from other repositories."""
    edges = list(gen.edges_in(target.key, ALL_KINDS))
    sources = {s.key: s for s in gen.symbols_by_raw(dict.fromkeys(key_to_bytes(e.source) for e in edges))}
    rows: list[Consumer] = []
    for e in edges:
        source = sources.get(e.source)
        if source is None or source.repository in (subject.repository, target.repository):
            continue
        if e.confidence <= Confidence.STRUCTURAL_CERTAIN:
            category = "exact_symbol"
        elif e.confidence == Confidence.CANDIDATE:
            category = "candidate"
        else:
            continue
        rows.append(
            Consumer(
                category,
                source.repository,
                source.language,
                e.confidence,
                symbol=source,
                edge_kind=e.kind,
                provenance=e.provenance,
                evidence_line=e.line,
                evidence_col=e.col,
                bound_to=target if target is not subject else None,
            )
        )
    return rows


def coverage_of(rows: list[Consumer]) -> Coverage:
    """The four counters over ``rows``: exact, candidate, unresolved, package-level (never added to exact)."""
    coverage = Coverage()
    for r in rows:
        if r.category == "exact_symbol":
            coverage.exact += 1
        elif r.category == "candidate":
            coverage.candidate += 1
        elif r.category == "unresolved":
            coverage.unresolved_related += 1
        else:
            coverage.package_level += 1
    return coverage


def consumer_file(c: Consumer) -> tuple[str, str, str]:
    """(repository, path, language) of the file a consumer row is in ("" path for a package with none)."""
    if c.symbol is not None:
        return c.symbol.repository, c.symbol.path, c.symbol.language
    if c.unresolved is not None:
        return c.unresolved.repository, c.unresolved.path, c.unresolved.language or c.language
    if c.dependency is not None:
        return c.repository, c.dependency.path, c.language
    return c.repository, "", c.language
