"""Go's incremental exact pass: the changed packages and every package importing them, transitively.

go/types checks a package from its own files and the declarations of what it imports, never the bodies
of other packages: an edit can change the uses of its own package and of its importers only. Those are
type-checked with their bodies and printed again (the helper's ``-emit``); every other package of the
module is checked without bodies, so IMPLEMENTS (which pairs types and interfaces across the whole
module) is recomputed over all of it. The other packages keep their previous uses. Uses are kept in one
canonical order (``use_order``), so the merge is the very facts a whole run prints.

Only a repository that is one module at its root takes this route (a nested module is analysed whole).
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection
from pathlib import Path

import msgspec

from indexer.corpus import Corpus, RepositoryFacts
from indexer.languages.go import sites as S
from indexer.languages.go.analyzer import (
    RepositoryGoFacts,
    _workspace,
    facts_from_output,
    module_roots,
    provider_roots,
    run_helper,
    use_order,
)
from indexer.languages.go.modules import package_for_root
from indexer.languages.go.resolve import ModuleRegistry

# Uses the helper computes over the whole module on every run (type relations): never kept from a previous run.
_MODULE_WIDE = frozenset({"implements", "undecided"})


def affected_packages(changed: Collection[str], repo: RepositoryFacts) -> set[str]:
    """Import paths of the packages of ``changed`` files and of every package importing one, transitively."""
    root = Path(repo.root)
    paths = frozenset(ff.path for ff in repo.files)
    importers: dict[str, set[str]] = {}
    for ff in repo.files:
        for site in ff.sites:
            if site.kind == S.IMPORT:
                importers.setdefault(site.name, set()).add(ff.package)
    affected = {package_for_root(root, path, paths | {path}) for path in changed}
    frontier = list(affected)
    while frontier:
        for importer in importers.get(frontier.pop(), ()):
            if importer not in affected:
                affected.add(importer)
                frontier.append(importer)
    return affected


def update(
    previous: RepositoryGoFacts, changed: Collection[str], repo: RepositoryFacts, corpus: Corpus, *, timeout: float
) -> RepositoryGoFacts | None:
    """The repository's facts after ``changed``: see the module docstring; None when it must run whole."""
    root = Path(repo.root).resolve()
    if module_roots(repo) != [root]:
        return None
    affected = affected_packages(changed, repo)
    directories = sorted({posixpath.dirname(ff.path) for ff in repo.files if ff.package in affected})
    gowork = _workspace(repo, corpus, ModuleRegistry(corpus))
    raw = run_helper(
        root, timeout=timeout, gowork=gowork, emit=[root / d for d in directories], allow_network=corpus.allow_network
    )
    fresh = facts_from_output(
        raw, root, str(gowork) if gowork else "", providers=provider_roots(repo, corpus), network=corpus.allow_network
    )
    printed = set(directories)
    present = {ff.path for ff in repo.files}
    kept = [
        u
        for u in previous.uses
        if u.use not in _MODULE_WIDE and u.path in present and posixpath.dirname(u.path) not in printed
    ]
    checked = {name for name, _n in fresh.package_errors}
    errors = sorted(
        [e for e in previous.package_errors if e[0] not in checked and _listed(e[0], raw)] + list(fresh.package_errors)
    )
    return msgspec.structs.replace(
        fresh,
        uses=tuple(sorted([*kept, *fresh.uses], key=use_order)),
        package_errors=tuple(errors),
        type_errors=sum(n for _name, n in errors),
    )


def _listed(package: str, raw: dict[str, object]) -> bool:
    """Whether the helper still lists ``package`` as a target (a package whose files are gone is not)."""
    return any(p.get("path") == package and p.get("target") for p in raw.get("packages", []))  # type: ignore[union-attr]
