"""Python's incremental exact pass: scip-python over the files an edit can reach, the rest kept.

What an edit can reach (``reach``): the checker's answers in a file depend on its own text and on the
declarations behind the module-level names it writes (imported by name, read as a module's attributes, or
reached through the types those names give). So the edit's *dirty names* are the names bound by the
top-level statements it added, removed or changed (``units``: a statement only moved, or changed only
inside the body of a function that declares its return type, is unchanged), each with the file binding it;
every file that can see that file (it spells its module's name, as any import of it does) and writes a
dirty name of it (any word of its text) is checked again, and each of its statements whose interface
writes one makes the names it binds dirty in turn, until nothing new is dirty. An added or removed file
dirties its module's name (the last part of the dotted name an import spells): its own names reach other
files only through imports of it. Anything the units cannot say (``ANY``: a reached file that does not parse), a
``from m import *`` anywhere in the repository (scip-python names what it reaches through one after the
first name it met there: not the same in runs over different files), an added or removed ``__init__``,
settings the shadow cannot reproduce (an ``include`` or ``exclude`` of the repository's own, a config file
above it), the last run's salvage, or a reach of most files, and the whole repository is analysed
instead.

The run (``update``): scip-python over the reached files only, in a shadow of the repository (every other
file stays importable: see ``analyzer._shadow``). The join ties symbols of files outside the run to the
declarations the last run tied them to (its ``definitions``); their uses, overrides, sites and counts are
kept from the last run; every part stays in path order. A symbol whose declaration changed while a file
outside the run still names it (an edit the words missed) makes the run whole too. The result equals a
whole run over the same inputs (``fact_cache = "verify"`` checks it).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Iterable
from pathlib import Path

from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import SymbolFact
from indexer.languages.change_units import SourceFiles, changed_units
from indexer.languages.python.analyzer import (
    PyDefinition,
    RepositoryScipFacts,
    file_units,
    import_roots,
    installed_providers,
    join_repository,
    own_settings,
    providers,
    run_index,
)
from indexer.languages.python.modules import is_package_init
from indexer.languages.python.units import ANY, FileUnits, Statement, Unit, statements, words
from indexer.languages.spec import AnalyzerCrashed
from indexer.scip.decode import Index, Metadata
from indexer.scip.join import descriptor_path, parse_symbol
from indexer.scip.route import StaleDefinition, merged

# A reach at least this share of the files is analysed whole: the checker's fixed cost (its start, the
# standard library, every file the reached ones import) makes a subset that large no cheaper.
WHOLE_SHARE = 0.9
_WILDCARD = re.compile(rb"import\s*\*")


def _module_needle(path: str) -> str:
    """What an import naming ``path`` must spell: its module's last name (its directory's for a package)."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    return posixpath.basename(posixpath.dirname(path)) if stem == "__init__" else stem


def source_files(root: Path) -> SourceFiles[Statement]:
    """The repository's sources as this language's statements, read when an edit's names need them."""
    return SourceFiles(root, words, lambda _path, source: statements(source))


def _imports_every_name(files: list[str], sources: SourceFiles[Statement]) -> bool:
    """Whether a file imports every name of a module (``from m import *``): which names it binds then is in
    no statement's text, and scip-python names whatever is reached through it after the first name it met
    there, so differently in runs over different files."""
    return any(_WILDCARD.search(sources.source(p)) and any(s.wildcard for s in sources.statements(p)) for p in files)


def _sees(path: str, origin: str, spelled: frozenset[str]) -> bool:
    """Whether ``path`` can name what ``origin`` binds: it is that file, it spells its module's name (every
    import of a module does), or it lies in the package whose ``__init__`` it is (``from . import x``)."""
    if path == origin or _module_needle(origin) in spelled:
        return True
    return is_package_init(origin) and path.startswith(posixpath.dirname(origin) + "/")


def _statement_dirties(
    path: str, frontier: dict[str, set[str]], sources: SourceFiles[Statement]
) -> tuple[bool, set[str]] | None:
    """(whether ``path`` writes a name of ``frontier`` it can see, the names its statements bind anew), for
    ``frontier`` the dirty names by the file binding them; None when a statement binds names no one can say.
    A ``from m import *`` of a file with dirty names binds them all."""
    spelled = sources.words(path)
    look: set[str] = set()
    via: dict[str, set[str]] = {}  # module name spelled -> dirty names of that module
    for origin, names in frontier.items():
        if _sees(path, origin, spelled):
            look |= names
            via.setdefault(_module_needle(origin), set()).update(names)
    if not look:
        return False, set()
    found: set[str] = set()
    for s in sources.statements(path):
        if s.wildcard:
            for needle in via.keys() & s.words:
                found |= via[needle]
        elif not look.isdisjoint(s.words):
            if ANY in s.unit.names:
                return None
            found.update(s.unit.names)
    return not look.isdisjoint(spelled), found


def reach(
    previous: dict[str, tuple[Unit, ...]], changed: Collection[str], files: list[str], sources: SourceFiles[Statement]
) -> set[str] | None:
    """The files whose answers the change of ``changed`` can alter (see the module docstring); None when the
    whole repository must be analysed. ``previous`` are the last run's statements per file."""
    present = set(files)
    if any(is_package_init(p) and (p in present) != (p in previous) for p in changed):
        return None  # a package appears or goes: the modules under it are named anew
    if _imports_every_name(files, sources):
        return None
    frontier: dict[str, set[str]] = {}  # file -> the dirty names it binds
    needles: set[str] = set()
    for path in changed:
        if (path in present) != (path in previous):
            # its names reach other files only through imports of it, which spell its name: they resolve
            # elsewhere now, or to it
            needles.add(_module_needle(path))
            continue
        now = tuple(s.unit for s in sources.statements(path))
        for unit in changed_units(previous[path], now):
            frontier.setdefault(path, set()).update(unit.names)
    reached = {p for p in changed if p in present}
    for path in files:
        hits = needles & sources.words(path)
        if hits:
            reached.add(path)
            for s in sources.statements(path):
                if not hits.isdisjoint(s.words):
                    frontier.setdefault(path, set()).update(s.unit.names)
    seen = {p: set(n) for p, n in frontier.items()}
    while frontier:
        if any(ANY in names for names in frontier.values()):
            return None
        found: dict[str, set[str]] = {}
        for path in files:
            step = _statement_dirties(path, frontier, sources)
            if step is None:
                return None
            writes, bound = step
            if writes:
                reached.add(path)
            if bound - seen.get(path, set()):
                found[path] = bound - seen.get(path, set())
                seen.setdefault(path, set()).update(bound)
        frontier = found
    return reached


def _reproducible(root: Path) -> bool:
    """Whether a shadow of ``root`` analyses files as a whole run does: the repository's settings name no
    files of their own, and no settings above the repository apply to it."""
    own = own_settings(root)
    if own is not None:
        return "include" not in own and "exclude" not in own
    return not any(own_settings(parent) is not None for parent in root.resolve().parents)


def update(
    previous: RepositoryScipFacts, changed: Collection[str], repo: RepositoryFacts, corpus: Corpus, *, timeout: float
) -> RepositoryScipFacts | None:
    """The repository's facts after ``changed``: see the module docstring; None when it must run whole."""
    if previous.failure or previous.excluded or previous.salvage_runs:
        return None
    files = sorted(ff.path for ff in repo.files if ff.parsed)
    before = {fu.path: fu.units for fu in previous.units}
    root = Path(repo.root)
    if not files or not before or not _reproducible(root):
        return None
    sources = source_files(root)
    reached = reach(before, changed, files, sources)
    if reached is None or len(reached) >= WHOLE_SHARE * len(files):
        return None
    replaced = reached | set(changed)
    if reached:
        try:
            index = run_index(
                root,
                repo.name,
                provided=[*providers(repo, corpus), *installed_providers(repo, corpus, providers(repo, corpus))],
                own_roots=import_roots(repo),
                timeout=timeout,
                include=sorted(reached),
            )
        except AnalyzerCrashed:
            return None  # the whole run finds out which files crash it
    else:  # only files gone, which nothing else names: nothing to check again
        name, _, version = previous.analyzer_version.partition(" ")
        index = Index(metadata=Metadata(tool_name=name, tool_version=version))
    if not _same_documents(index, previous, reached, set(changed)):
        return None
    declared: dict[str, list[SymbolFact]] = {}
    for path, decl in previous.declarations:
        if path not in replaced:
            declared.setdefault(path, []).append(decl)
    try:
        fresh = join_repository(
            index, repo, [d for d in previous.definitions if d.path not in replaced], known_declarations=declared
        )
    except StaleDefinition:
        return None
    if _names_moved_declaration(previous, fresh, replaced):
        return None
    return merged(
        previous, fresh, replaced, set(files), _units(previous, root, files, changed), kept_declarations=False
    )


def _same_documents(index: Index, previous: RepositoryScipFacts, reached: set[str], changed: set[str]) -> bool:
    """Whether the run wrote a document for each unchanged reached file exactly when the last run did (the
    analyser leaves out a file it excludes, or one with no occurrence)."""
    counted = {p for p, _n in previous.document_occurrences}
    written = {d.relative_path for d in index.documents}
    return all((p in written) == (p in counted) for p in reached - changed)


def _winners(definitions: Iterable[PyDefinition]) -> dict[str, tuple[str, str, str]]:
    """SCIP symbol -> the declaration it is tied to (path, qualified name, kind): the first file's."""
    out: dict[str, tuple[str, str, str]] = {}
    for d in sorted(definitions, key=lambda d: d.path):
        out.setdefault(d.symbol, (d.path, d.qualified_name, d.kind))
    return out


def _names_moved_declaration(previous: RepositoryScipFacts, fresh: RepositoryScipFacts, replaced: set[str]) -> bool:
    """Whether a file outside the run uses a symbol whose declaration is another one now (or none, or one
    where there was none): its kept uses would name the old one."""
    old, new = _winners(previous.definitions), _winners(fresh.definitions)
    moved = {s for s in old.keys() | new.keys() if old.get(s) != new.get(s)}
    if not moved:
        return False
    gone = {old[s] for s in moved if s in old}
    named: set[tuple[str, str]] = set()
    for s in moved:
        parsed = parse_symbol(s)
        parts = descriptor_path(parsed) if parsed is not None else None
        if parts is not None:
            named.add(parts)
    for u in previous.uses:
        if u.path in replaced:
            continue
        if (u.target_path, u.target_qn, u.target_kind) in gone or (
            not u.target_path and (u.package, u.member) in named
        ):
            return True
    return False


def _units(
    previous: RepositoryScipFacts, root: Path, files: list[str], changed: Collection[str]
) -> tuple[FileUnits, ...]:
    """Every file's statements: the last run's where the file has not changed."""
    units = {fu.path: fu for fu in previous.units if fu.path not in changed}
    units.update((fu.path, fu) for fu in file_units(root, [p for p in files if p not in units]))
    return tuple(units[p] for p in files if p in units)
