"""TypeScript's incremental exact pass: scip-typescript over the files an edit can reach, the rest kept.

What an edit can reach (``reach``): the checker's answers in a file depend on its own text and on the
declarations behind the module-level names it writes (imported by name, or read as members of a namespace
or a type reached from them). So the edit's *dirty names* are the names bound by the top-level statements
it added, removed or changed (``units``: a statement only moved is unchanged); every file that writes a
dirty name (any word of its text) is checked again, and each of its statements that writes one makes the
names it binds dirty in turn, until nothing new is dirty. An added or removed file also dirties its module's
name (the words of an import specifier). Anything the units cannot say (``ANY``: a script's globals,
``declare global``, ``export *``, a file that does not parse), a changed declaration file, or a reach that
covers every file, and the whole repository is analysed instead.

The run (``update``): the same projects as a whole run, each on a generated tsconfig that lists only its
files in the reach (plus the scripts, whose globals every file sees, and the project's own declaration
files), with the project's compilerOptions, so the checker still reads every other file it needs for
types. The join ties symbols of files outside the run to the declarations the last run tied them to (its
``definitions``); their uses, sites and counts are kept from the last run; every part stays in path order.
The result equals a whole run over the same inputs (``fact_cache = "verify"`` checks it).
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection
from pathlib import Path

from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import SymbolFact
from indexer.languages.change_units import SourceFiles, changed_units
from indexer.languages.typescript.analyzer import RepositoryTsFacts, file_units, join_repository, plan, run_index
from indexer.languages.typescript.modules import strip_extension
from indexer.languages.typescript.projects import Plan
from indexer.languages.typescript.units import ANY, FileUnits, Statement, Unit, is_script, statements, words
from indexer.scip.route import StaleDefinition, merged

# A reach at least this share of the files is analysed whole: the checker's fixed cost (its start, the
# standard library, every file the reached ones import) makes a subset that large no cheaper.
WHOLE_SHARE = 0.9
_DECLARATION_FILES = (".d.ts", ".d.mts", ".d.cts")


def _module_needle(path: str) -> str:
    """What an import specifier naming ``path`` must contain: its stem, or its directory's name for an index."""
    stem = posixpath.basename(strip_extension(path))
    return (posixpath.basename(posixpath.dirname(path)) or stem) if stem == "index" else stem


def source_files(root: Path) -> SourceFiles[Statement]:
    """The repository's sources as this language's statements, read when an edit's names need them."""
    return SourceFiles(root, words, statements)


def reach(
    previous: dict[str, tuple[Unit, ...]],
    changed: Collection[str],
    files: list[str],
    sources: SourceFiles[Statement],
    declaration_files: Collection[str] = (),
) -> set[str] | None:
    """The files whose answers the change of ``changed`` can alter (see the module docstring); None when the
    whole repository must be analysed. ``previous`` are the last run's statements per file; an ambient
    declaration file that writes a dirty name could change what every file sees."""
    present = set(files)
    if any(p.endswith(_DECLARATION_FILES) for p in changed):
        return None
    exported: set[str] = set()  # dirty names other modules can import
    own: dict[str, set[str]] = {}  # dirty names of one file's own
    needles: set[str] = set()
    for path in changed:
        now = tuple(s.unit for s in sources.statements(path)) if path in present else ()
        for unit in changed_units(previous.get(path, ()), now):
            (own.setdefault(path, set()) if unit.local else exported).update(unit.names)
        if (path in present) != (path in previous):
            needles.add(_module_needle(path))  # imports of it resolve elsewhere now, or to it
    reached = {p for p in changed if p in present}
    for path in files:
        hits = [n for n in needles if n.encode() in sources.source(path)]
        if hits:
            reached.add(path)
            for s in sources.statements(path):
                if any(h in s.text for h in hits):
                    (own.setdefault(path, set()) if s.unit.local else exported).update(s.unit.names)
    frontier, frontier_own = set(exported), {p: set(n) for p, n in own.items()}
    while frontier or frontier_own:
        if ANY in frontier or any(ANY in n for n in frontier_own.values()):
            return None
        if any(not frontier.isdisjoint(sources.words(p)) for p in declaration_files):
            return None
        found: set[str] = set()
        found_own: dict[str, set[str]] = {}
        for path in files:
            look = frontier | frontier_own.get(path, set())
            if look.isdisjoint(sources.words(path)):
                continue
            reached.add(path)
            for s in sources.statements(path):
                if not look.isdisjoint(s.words):
                    (found_own.setdefault(path, set()) if s.unit.local else found).update(s.unit.names)
        frontier = found - exported
        exported |= found
        frontier_own = {p: n - own.get(p, set()) for p, n in found_own.items() if n - own.get(p, set())}
        for p, n in frontier_own.items():
            own.setdefault(p, set()).update(n)
    return reached


def update(
    previous: RepositoryTsFacts, changed: Collection[str], repo: RepositoryFacts, corpus: Corpus, *, timeout: float
) -> RepositoryTsFacts | None:
    """The repository's facts after ``changed``: see the module docstring; None when it must run whole."""
    parsed = {ff.path for ff in repo.files if ff.parsed}
    files = sorted(p for p in parsed if not p.endswith(_DECLARATION_FILES))
    before = {fu.path: fu.units for fu in previous.units}
    if not files or (not before and previous.uses):
        return None  # nothing to check, or facts from before units were kept
    root = Path(repo.root)
    sources = source_files(root)
    reached = reach(before, changed, files, sources, sorted(parsed - set(files)))
    if reached is None:
        return None
    # scripts declare globals every file sees: they stay in the program (and are checked again)
    reached |= {
        p
        for p in files
        if is_script(tuple(s.unit for s in sources.statements(p)) if p in changed else before.get(p, ()))
    }
    if len(reached) >= WHOLE_SHARE * len(files):
        return None
    if not reached:  # only files gone, which nothing else names: nothing to check again
        return merged(
            previous,
            _nothing_checked(previous, set(changed)),
            set(changed),
            parsed,
            _units(previous, root, files, changed),
            kept_declarations=True,
        )
    whole = plan(root, files, timeout=timeout)
    subset = Plan(
        projects=whole.projects,
        assigned={c: [f for f in fs if f in reached] for c, fs in whole.assigned.items() if set(fs) & reached},
        inferred=[f for f in whole.inferred if f in reached],
        typescript=whole.typescript,
    )
    index = run_index(root, sorted(reached), timeout=timeout, projects=subset)
    checked = {doc.relative_path for doc in index.documents}
    replaced = checked | reached | set(changed)
    declared: dict[str, list[SymbolFact]] = {}
    for path, decl in previous.declarations:
        if path not in replaced:
            declared.setdefault(path, []).append(decl)
    try:
        fresh = join_repository(
            index,
            repo,
            whole.output_redirects(str(root)),
            whole.files(str(root)),
            known=[t for t in previous.definitions if t.path not in replaced],
            known_declarations=declared,
        )
    except StaleDefinition:
        return None
    return merged(previous, fresh, replaced, parsed, _units(previous, root, files, changed), kept_declarations=True)


def _units(
    previous: RepositoryTsFacts, root: Path, files: list[str], changed: Collection[str]
) -> tuple[FileUnits, ...]:
    """Every file's statements: the last run's where the file has not changed."""
    units = {fu.path: fu for fu in previous.units if fu.path not in changed}
    units.update((fu.path, fu) for fu in file_units(root, [p for p in files if p not in units]))
    return tuple(units[p] for p in files if p in units)


def _nothing_checked(previous: RepositoryTsFacts, gone: set[str]) -> RepositoryTsFacts:
    """The facts of a run that checked no file: the last run's definitions of the files still there."""
    return RepositoryTsFacts(
        analyzer_version=previous.analyzer_version,
        definitions=tuple(t for t in previous.definitions if t.path not in gone),
    )
