"""The exact Python adapter: scip-python (Pyright's checker) in batch, joined with tree-sitter.

One ``scip-python index`` per repository, cwd = the repository, the index
written to a private temporary directory, ``--environment`` pointing at an
empty package list (so it never shells out to pip), ``--project-version`` set
(it crashes outside a git repository otherwise), bounded by the configured
timeout.

Cross-repository: the analyzer of a consumer sees the sources of the
registered repositories that provide the top-level packages it imports
(``providers``). Their import roots go first on ``PYTHONPATH`` (Pyright takes
its search paths from ``sys.path`` of the interpreter, so they win over a
same-named package installed in site-packages), and the per-run environment
file lists each provided package with its files: without that entry
scip-python drops every occurrence of an imported member (``from shapes
import Circle`` yields no occurrence at all). The consumer's occurrences then
carry the provider's descriptors (``shapes.circle/Circle#``); ``bind`` turns
them into edges to the provider's declarations only when exactly one
registered repository provides the package (else AMBIGUOUS_PACKAGE_PROVIDER).

The run is joined in two steps:

``join_repository``  repository-local and cacheable: every use occurrence
    with its edge source (enclosing declaration), its syntactic use (call,
    import, type, base, callback, decorator, reference), its site position
    (the start of the expression, where the tree-sitter sites are) and its
    target: one of our declarations of this repository (mapped by the
    definition occurrence's position) or a namespace + member path for a
    symbol defined elsewhere.
``bind``  per index: target identities become stable keys, a foreign
    namespace binding only when exactly one registered repository provides
    it. Symbols of nobody's (stdlib, unregistered third party) are no edge.

Analyzer absent, failing or timing out → ``AnalyzerFailed`` with a reason; the
pipeline keeps the CANDIDATE answers and reports the fallback.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec
import tree_sitter_python
from tree_sitter import Language, Node, Query, QueryCursor

from indexer import children
from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import EdgeFact, FileFacts, SymbolFact, UnresolvedFact
from indexer.languages.change_units import read_file_units
from indexer.languages.npm_tool import NpmTool, cause, tail
from indexer.languages.python.modules import package_for
from indexer.languages.python.units import FileUnits, units_of
from indexer.languages.spec import AnalyzerCrashed, AnalyzerFailed, ExactAdapter, ExactOutcome
from indexer.languages.syntax import repair
from indexer.scip.decode import Document, Index, decode_index
from indexer.scip.join import (
    ColumnMap,
    CoveredSite,
    FileDeclarations,
    analyzer_declaration,
    descriptor_path,
    line_of,
    names_at,
    parse_symbol,
)
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

LANGUAGE = "python"
ANALYZER = "scip-python"
NPM_PACKAGE = "@sourcegraph/scip-python"
PINNED_VERSION = "0.6.6"
ADAPTER_VERSION = "scip-python-join-8"  # part of the cache key: bump on any change to the joined output
EXECUTABLE_ENV = "KIVGRAPH_SCIP_PYTHON"

SOURCE_KINDS = frozenset({"module", "class", "function", "method"})
_CALLABLE = frozenset({"function", "method"})
_STDLIB_PACKAGES = frozenset({"python-stdlib"})

_TS_LANGUAGE = Language(tree_sitter_python.language())
_IDENTIFIERS = Query(_TS_LANGUAGE, "(identifier) @id")
_TYPE_STOP = frozenset(
    {
        "block",
        "module",
        "function_definition",
        "class_definition",
        "lambda",
        "call",
        "expression_statement",
        "argument_list",
    }
)


TOOL = NpmTool(ANALYZER, NPM_PACKAGE, PINNED_VERSION, EXECUTABLE_ENV, "Python stays on the CANDIDATE fallback")
install_dir = TOOL.install_dir
executable = TOOL.executable
install = TOOL.install
identity = TOOL.identity
version = TOOL.run_version
_tail = tail


@dataclass(frozen=True)
class ProvidedPackage:
    """A top-level package another registered repository provides, as the analyzer is shown it."""

    repository: str
    name: str  # top-level package or module name
    root: Path  # the import root it lives under
    files: tuple[str, ...]  # root-relative .py/.pyi paths
    version: str = ""  # an installed distribution's version (a registered provider has none)


def imported_top_levels(repo: RepositoryFacts) -> set[str]:
    """Top-level names a repository imports (absolute imports only, wherever they are)."""
    out: set[str] = set()
    for ff in repo.files:
        for site in ff.sites:
            if site.kind == "import":
                out.add(site.name.split(".")[0])
            elif site.kind == "from" and site.extra and not site.extra[0].startswith("."):
                out.add(site.extra[0].split(".")[0])
    return out


def _top_levels(paths: list[str] | set[str] | frozenset[str]) -> dict[str, list[str]]:
    """Top-level package -> the paths under it, by the same module naming the extractor uses."""
    everything = frozenset(paths)
    out: dict[str, list[str]] = {}
    for path in sorted(everything):
        if path.endswith((".py", ".pyi")):
            out.setdefault(package_for(path, everything).split(".")[0], []).append(path)
    return out


def providers(repo: RepositoryFacts, corpus: Corpus) -> list[ProvidedPackage]:
    """Packages this repository imports that other registered repositories provide (registry order)."""
    wanted = imported_top_levels(repo)
    own = {ff.package.split(".")[0] for ff in repo.files}
    out: list[ProvidedPackage] = []
    for other in corpus.repositories:
        if other.name == repo.name:
            continue
        by_top: dict[str, list[FileFacts]] = {}
        for ff in other.files:
            top = ff.package.split(".")[0]
            if top in wanted and top not in own:
                by_top.setdefault(top, []).append(ff)
        for top, files in sorted(by_top.items()):
            for root in import_roots(RepositoryFacts(other.name, other.root, files)):
                rel_root = root.relative_to(other.root).as_posix() if root != Path(other.root) else ""
                rel = tuple(
                    sorted(
                        ff.path[len(rel_root) + 1 :] if rel_root else ff.path
                        for ff in files
                        if not rel_root or ff.path.startswith(rel_root + "/")
                    )
                )
                if rel:
                    out.append(ProvidedPackage(other.name, top, root, rel))
                break  # one import root per package: the one most of its files live under
    return out


def installed_providers(
    repo: RepositoryFacts, corpus: Corpus, provided: list[ProvidedPackage]
) -> list[ProvidedPackage]:
    """With ``corpus.installed`` (a bundle build): the imported packages no registered repository provides, as the
    active virtualenv installs them (``indexer.languages.python.installed``); else none."""
    if not corpus.installed:
        return []
    from indexer.languages.python.installed import installed_packages

    own = {ff.package.split(".")[0] for ff in repo.files}
    wanted = imported_top_levels(repo) - own - {p.name for p in provided}
    return [
        ProvidedPackage(f"installed:{p.distribution}", p.name, p.site, p.files, p.version)
        for p in installed_packages(wanted)
    ]


def _environment(provided: list[ProvidedPackage]) -> list[dict[str, object]]:
    """scip-python's environment format: name, version, files relative to a search-path entry."""
    seen: set[str] = set()
    out: list[dict[str, object]] = []
    for p in provided:
        if p.name in seen:
            continue  # a second provider: Pyright reads the first; bind reports the ambiguity
        seen.add(p.name)
        out.append({"name": p.name, "version": p.version or f"kivgraph-{p.repository}", "files": list(p.files)})
    return out


# Files the analyser reads to resolve an import (the rest of a repository is never read by it).
_IMPORTABLE = (".py", ".pyi", ".so", ".pyd")
# Directories a shadow links whole instead of mirroring (Pyright's own default excludes, and git's store).
_LINKED_WHOLE = frozenset({"node_modules", "__pycache__"})
CONFIG_FILES = ("scip-pyrightconfig.json", "pyrightconfig.json")


def own_settings(root: Path) -> dict[str, object] | None:
    """The analyser's settings a whole run over ``root`` reads there: its config file (the one scip-python
    looks for first), else ``[tool.scip]`` or ``[tool.pyright]`` of its pyproject.toml; None without any."""
    for name in CONFIG_FILES:
        own = root / name
        if own.is_file():
            try:
                loaded = json.loads(own.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return {}
            return loaded if isinstance(loaded, dict) else {}
    tool: object = {}
    try:
        with (root / "pyproject.toml").open("rb") as fh:
            tool = tomllib.load(fh).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        pass
    for section in ("scip", "pyright"):
        found = tool.get(section) if isinstance(tool, dict) else None
        if found:
            return dict(found) if isinstance(found, dict) else {}
    return None


def _settings(root: Path) -> dict[str, object]:
    """The settings a shadow's config file must hold to analyse as a whole run over ``root`` does. Without
    settings of its own, the whole run assumes no platform (code under ``sys.platform`` or ``os.name`` tests
    is checked on every branch), and a config file must say so: Pyright would assume the host's."""
    own = own_settings(root)
    return dict(own) if own is not None else {"pythonPlatform": "All"}


def _link(source: Path, target: Path) -> None:
    """``target`` as the same file as ``source``: a hard link, or a copy across file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _shadow(root: Path, shadow: Path, include: list[str]) -> Path:
    """A directory standing in for ``root`` whose analysed files are ``include`` only.

    Why a mirror and not symbolic links: Pyright resolves an imported file to its real path, and
    scip-python names a declaration as the project's only when that path lies under its working
    directory; through a link to the repository every imported declaration would be outside it, and its
    uses would be dropped. So every directory is mirrored and every file an import can resolve to is a
    hard link (a copy across file systems); a link inside the repository points at its mirror. A
    generated pyrightconfig.json lists the files to analyse, with the repository's own settings
    (``_settings``, excludes included: they apply to listed files too).
    """
    real = root.resolve()
    shadow.mkdir()

    def mirrored(entry: Path) -> Path:
        """Where a link inside the repository points in the shadow (outside it: where it points)."""
        target = entry.resolve()
        return shadow / target.relative_to(real) if target.is_relative_to(real) else target

    for dirpath, dirnames, filenames in os.walk(real):
        here = Path(dirpath)
        into = shadow / here.relative_to(real)
        keep = []
        for d in sorted(dirnames):
            entry = here / d
            if d == ".git" and here == real:
                continue
            if entry.is_symlink() or d in _LINKED_WHOLE or d.startswith("."):
                (into / d).symlink_to(mirrored(entry), target_is_directory=True)
            else:
                (into / d).mkdir()
                keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            entry = here / f
            if here == real and f in CONFIG_FILES:
                continue
            if entry.is_symlink():
                (into / f).symlink_to(mirrored(entry))
            elif f.endswith(_IMPORTABLE) or f == "py.typed":
                _link(entry, into / f)
    config = _settings(real)
    config["include"] = include
    (shadow / "pyrightconfig.json").write_text(json.dumps(config))
    return shadow


def run_index(
    root: Path,
    project: str,
    *,
    provided: list[ProvidedPackage] | None = None,
    own_roots: list[Path] | None = None,
    timeout: float,
    exe: Path | None = None,
    include: list[str] | None = None,
) -> Index:
    """Run scip-python over ``root`` and decode its index (written outside the repository).

    With ``include``, only those repository-relative files are analysed (see ``_shadow``), and only their
    documents kept: scip-python also writes one for each file they import, checked as a library (fewer
    answers than when the file is analysed itself).
    """
    exe = exe or executable()
    identity(exe)
    provided = provided or []
    with tempfile.TemporaryDirectory(prefix="kivgraph-scip-") as tmp:
        if include is not None:
            real = root.resolve()
            root = _shadow(root, Path(tmp) / "shadow", include)
            # the repository's own import roots in the shadow: a file imported through one stays under it
            own_roots = [
                root / r.resolve().relative_to(real) for r in own_roots or () if r.resolve().is_relative_to(real)
            ]
        out = Path(tmp) / "index.scip"
        env_file = Path(tmp) / "environment.json"
        # no pip queries: the packages shown to the analyzer are the registered providers, nothing else
        env_file.write_text(json.dumps(_environment(provided)))
        env = dict(os.environ)
        # the repository's own import roots below its top (a src/ layout) first, so its own imports read
        # its own files; then the providers'
        paths: list[str] = [str(r.resolve()) for r in own_roots or [] if r.resolve() != root.resolve()]
        for p in provided:
            where = str(p.root.resolve())
            if where not in paths:
                paths.append(where)
        env["PYTHONPATH"] = os.pathsep.join(paths)  # never the caller's own PYTHONPATH
        env.pop(EXECUTABLE_ENV, None)
        cmd = [
            str(exe),
            "index",
            "--quiet",
            "--project-name",
            project or "project",
            "--project-version",
            "0",
            "--environment",
            str(env_file),
            "--output",
            str(out),
            "--cwd",
            str(root.resolve()),
        ]
        try:
            returncode, stdout, stderr = children.run(cmd, timeout=timeout, cwd=root, env=env)
        except OSError as exc:
            raise AnalyzerFailed(f"{ANALYZER} could not start: {exc}") from None
        except subprocess.TimeoutExpired:
            raise AnalyzerCrashed(f"{ANALYZER} timed out after {timeout:g}s") from None
        if returncode != 0:
            raise AnalyzerCrashed(
                f"{ANALYZER} exited {returncode}: "
                f"{cause(stderr.decode(errors='replace') or stdout.decode(errors='replace'))}"
            )
        if not out.exists():
            raise AnalyzerFailed(f"{ANALYZER} wrote no index")
        try:
            index = decode_index(out.read_bytes())
        except ValueError as exc:
            raise AnalyzerFailed(f"{ANALYZER} wrote an unreadable index: {exc}") from None
    if include is None:
        return index
    wanted = set(include)
    return dataclasses.replace(index, documents=tuple(d for d in index.documents if d.relative_path in wanted))


def probe(timeout: float = 120) -> str:
    """Run the analyzer on a two-file project; returns a detail line, raises AnalyzerFailed."""
    with tempfile.TemporaryDirectory(prefix="kivgraph-probe-") as tmp:
        root = Path(tmp)
        (root / "probe_a.py").write_text("def target():\n    return 1\n")
        (root / "probe_b.py").write_text("from probe_a import target\n\n\ndef caller():\n    return target()\n")
        index = run_index(root, "probe", timeout=timeout)
        for doc in index.documents:
            if doc.relative_path == "probe_b.py":
                for occ in doc.occurrences:
                    if occ.range[:2] == (4, 11) and occ.symbol.replace("`", "").endswith("probe_a/target()."):
                        return f"{index.metadata.tool_name} {index.metadata.tool_version} resolved a cross-module call"
        raise AnalyzerFailed(f"{ANALYZER} ran but did not resolve the probe's cross-module call")


# -- syntax: what each occurrence is --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Syntax:
    use: str  # call | decorator | import | type | base | callback | reference
    line: int  # site position (1-based line, byte column): the start of the expression
    col: int
    final: bool  # the last segment of its chain: the one a tree-sitter site resolves


def _field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def _is(a: Node | None, b: Node) -> bool:
    return a is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte and a.type == b.type


def _classify(ident: Node) -> _Syntax | None:
    parent = ident.parent
    if parent is None:
        return None
    if parent.type in ("function_definition", "class_definition") and _is(_field(parent, "name"), ident):
        return None  # a declaration's own name (an @overload stub's, say) is never a use
    if parent.type == "dotted_name":
        holder = parent.parent
        if holder is None or holder.type == "relative_import":
            return None  # module part of a relative import: scip-python names it wrongly
        stmt = holder.parent if holder.type == "aliased_import" else holder
        if stmt is not None and stmt.type in ("import_statement", "import_from_statement"):
            row, col = parent.start_point
            return _Syntax("import", row + 1, col, _is(parent.named_children[-1], ident))
        return None
    if parent.type == "aliased_import" or (parent.type == "keyword_argument" and _is(_field(parent, "name"), ident)):
        return None
    expr = ident
    if parent.type == "attribute" and _is(_field(parent, "attribute"), ident):
        expr = parent
    # The chain continues when this expression (or its call/subscript) is an attribute's object.
    cur = expr
    while cur.parent is not None and (
        (cur.parent.type == "call" and _is(_field(cur.parent, "function"), cur))
        or (cur.parent.type == "subscript" and _is(_field(cur.parent, "value"), cur))
    ):
        cur = cur.parent
    final = not (cur.parent is not None and cur.parent.type == "attribute" and _is(_field(cur.parent, "object"), cur))
    row, col = expr.start_point
    up = expr.parent
    if up is None:
        return _Syntax("reference", row + 1, col, final)
    if up.type == "call" and _is(_field(up, "function"), expr):
        use = "decorator" if up.parent is not None and up.parent.type == "decorator" else "call"
    elif up.type == "decorator":
        use = "decorator"
    elif not final:
        use = "reference"
    elif _in_annotation(expr):
        use = "type"
    elif up.type == "argument_list" and up.parent is not None and up.parent.type == "class_definition":
        use = "base"
    elif up.type == "argument_list" or (
        up.type == "keyword_argument"
        and up.parent is not None
        and up.parent.type == "argument_list"
        and up.parent.parent is not None
        and up.parent.parent.type == "call"
    ):
        use = "callback"
    else:
        use = "reference"
    return _Syntax(use, row + 1, col, final)


def _in_annotation(node: Node) -> bool:
    cur = node.parent
    while cur is not None:
        if cur.type == "type":
            return True
        if cur.type in _TYPE_STOP:
            return False
        cur = cur.parent
    return False


def _identifiers(source: bytes) -> tuple[dict[tuple[int, int], Node], frozenset[int]]:
    """Identifier nodes by position, from the same repaired parse extraction used, and the blanked lines."""
    fixed = repair(_TS_LANGUAGE, source, python=True)
    out: dict[tuple[int, int], Node] = {}
    for node in QueryCursor(_IDENTIFIERS).captures(fixed.root).get("id", []):
        out[node.start_point] = node
    return out, frozenset(fixed.blanked)


# -- join: repository-local, cacheable --------------------------------------------------------------


class ScipUse(msgspec.Struct, array_like=True, frozen=True):
    """One resolved use: where, from which declaration, how, and to what."""

    path: str
    line: int  # site position (expression start)
    col: int
    source_qn: str
    source_kind: str
    use: str
    final: bool
    target_path: str = ""  # "" = defined outside this repository: see namespace/member
    target_qn: str = ""
    target_kind: str = ""
    namespace: str = ""
    member: str = ""


class PyDefinition(msgspec.Struct, array_like=True, frozen=True):
    """A definition the analyzer made in one file, tied to our declaration (its qualified name, kind and
    start); ``synthesized``: the declaration is the analyzer's (a line tree-sitter could not parse)."""

    symbol: str
    path: str
    qualified_name: str
    kind: str
    line: int
    col: int
    synthesized: bool = False


class RepositoryScipFacts(msgspec.Struct, frozen=True):
    """The joined analyzer output of one repository, every part in path order (what the fact cache stores)."""

    analyzer_version: str
    uses: tuple[ScipUse, ...] = ()
    external: tuple[CoveredSite, ...] = ()
    overrides: tuple[ScipUse, ...] = ()
    documents: int = 0
    occurrences: int = 0
    # Files left out after the analyzer crashed on them: (path, the analyzer's message). Their uses stay
    # on the CANDIDATE resolver.
    excluded: tuple[tuple[str, str], ...] = ()
    # The analyzer failed on the whole repository: cached too, so an unchanged re-index does not pay it again.
    failure: str = ""
    salvage_runs: int = 0
    # Declarations the analyzer defines on lines tree-sitter could not parse: (path, declaration).
    declarations: tuple[tuple[str, SymbolFact], ...] = ()
    # What the incremental exact pass (``indexer.languages.python.incremental``) needs of the last run: each
    # file's definitions, each file's top-level statements, and each document's occurrence count.
    definitions: tuple[PyDefinition, ...] = ()
    units: tuple[FileUnits, ...] = ()
    document_occurrences: tuple[tuple[str, int], ...] = ()


def _indentation(src: bytes, line0: int) -> int:
    text = src.split(b"\n")[line0]
    return len(text) - len(text.lstrip())


def _overrides(doc: Document, path: str, defined: Mapping[str, tuple[str, SymbolFact]]) -> list[ScipUse]:
    """Methods overriding a base method: the relationships on the definitions of one document."""
    out: list[ScipUse] = []
    for info in doc.symbols:
        child = defined.get(info.symbol)
        if child is None or child[1].kind != "method":
            continue
        decl = child[1]
        for rel in info.relationships:
            parent = defined.get(rel.symbol)
            if parent is None or parent[1].kind != "method" or not (rel.is_implementation or rel.is_reference):
                continue
            site = (path, decl.start_line, decl.start_col, decl.qualified_name, decl.kind, "override", False)
            out.append(ScipUse(*site, parent[0], parent[1].qualified_name, parent[1].kind))
    return out


class StaleDefinition(Exception):
    """A definition kept from the last run names a declaration its file no longer has."""


def join_repository(
    index: Index,
    repo: RepositoryFacts,
    known: Iterable[PyDefinition] = (),
    known_declarations: Mapping[str, Collection[SymbolFact]] | None = None,
) -> RepositoryScipFacts:
    """Tie the index's occurrences to the repository's declarations and classify each use.

    Documents are joined in path order, and a symbol two files define is the first file's, so the facts of
    a file do not depend on which other files the run checked. ``known`` are the definitions of files the
    run did not check (an incremental run keeps them from the last one; the analyzer's declarations of
    their partial lines are ``known_declarations``): their symbols resolve as they did then
    (``StaleDefinition`` when a declaration is gone).
    """
    files = {ff.path: ff for ff in repo.files if ff.parsed}
    root = Path(repo.root)
    sources: dict[str, bytes] = {}

    def source_of(path: str) -> bytes:
        if path not in sources:
            try:
                sources[path] = (root / path).read_bytes()
            except OSError:
                sources[path] = b""
        return sources[path]

    docs = sorted((d for d in index.documents if d.relative_path in files), key=lambda d: d.relative_path)
    own = {d.relative_path: _file_definitions(d, files[d.relative_path], source_of(d.relative_path)) for d in docs}
    kept = _known_definitions(known, known_declarations or {}, files, set(own))
    defined: dict[str, tuple[str, SymbolFact]] = {}
    synthesized: dict[str, list[SymbolFact]] = {}
    order = sorted(own.keys() | kept.keys())
    for path in order:
        for symbol, decl, made in own[path] if path in own else kept[path]:
            if symbol not in defined:
                defined[symbol] = (path, decl)
                if made:
                    synthesized.setdefault(path, []).append(decl)
    decls = {
        d.relative_path: FileDeclarations(
            (*files[d.relative_path].symbols, *synthesized.get(d.relative_path, ())), SOURCE_KINDS
        )
        for d in docs
    }
    uses: list[ScipUse] = []
    external: list[CoveredSite] = []
    overrides: list[ScipUse] = []
    counts: list[tuple[str, int]] = []
    tops = frozenset(ff.package.split(".")[0] for ff in repo.files)
    for doc in docs:
        path = doc.relative_path
        counts.append((path, _document_uses(doc, source_of(path), decls[path], defined, uses, external, tops)))
        overrides += _overrides(doc, path, defined)
    return RepositoryScipFacts(
        analyzer_version=f"{index.metadata.tool_name} {index.metadata.tool_version}".strip(),
        uses=tuple(uses),
        external=tuple(external),
        overrides=tuple(overrides),
        documents=len(docs),
        occurrences=sum(n for _p, n in counts),
        declarations=tuple((p, d) for p, ds in sorted(synthesized.items()) for d in ds),
        definitions=tuple(
            PyDefinition(symbol, path, d.qualified_name, d.kind, d.start_line, d.start_col, made)
            for path in order
            for symbol, d, made in sorted(own[path] if path in own else kept[path], key=lambda t: t[0])
        ),
        document_occurrences=tuple(counts),
    )


def _known_definitions(
    known: Iterable[PyDefinition],
    known_declarations: Mapping[str, Collection[SymbolFact]],
    files: Mapping[str, FileFacts],
    checked: Collection[str],
) -> dict[str, list[tuple[str, SymbolFact, bool]]]:
    """The definitions of files this run did not check, tied to the same declarations as in the run that did
    (path -> (symbol, declaration, whether the analyzer's own), in the order they were kept)."""
    tables: dict[str, dict[tuple[str, str, int, int], SymbolFact]] = {}
    out: dict[str, list[tuple[str, SymbolFact, bool]]] = {}
    for t in known:
        if t.path in checked:
            continue
        if t.path not in tables:
            ff = files.get(t.path)
            symbols = (*(ff.symbols if ff is not None else ()), *known_declarations.get(t.path, ()))
            tables[t.path] = {(s.qualified_name, s.kind, s.start_line, s.start_col): s for s in reversed(symbols)}
        decl = tables[t.path].get((t.qualified_name, t.kind, t.line, t.col))
        if decl is None:
            raise StaleDefinition(f"{t.path} no longer declares {t.qualified_name} ({t.kind}) at {t.line}:{t.col}")
        out.setdefault(t.path, []).append((t.symbol, decl, t.synthesized))
    return out


# Pyright counts UTF-16 code units; newer indexes say so in position_encoding.
_DEFAULT_UNIT = "utf-16"


def _file_definitions(doc: Document, ff: FileFacts, src: bytes) -> list[tuple[str, SymbolFact, bool]]:
    """Each SCIP symbol one document defines -> our declaration (by position and name; its first definition
    that has one), and whether the declaration is the analyzer's own: where tree-sitter could not parse
    the line, the analyzer's definition stands in."""
    cmap = ColumnMap(src, _unit_of(doc.position_encoding, _DEFAULT_UNIT))
    fd = FileDeclarations(ff.symbols, SOURCE_KINDS)
    seen: set[str] = set()
    out: list[tuple[str, SymbolFact, bool]] = []
    for occ in doc.occurrences:
        if not occ.is_definition or occ.symbol in seen:
            continue
        parsed = parse_symbol(occ.symbol)
        path_parts = descriptor_path(parsed) if parsed is not None else None
        if parsed is None or path_parts is None:
            continue
        made = False
        if path_parts[1] == "":
            target = fd.module
        else:
            line0, col = occ.range[0], cmap.byte_col(occ.range[0], occ.range[1])
            name = parsed.descriptors[-1].name
            target = fd.declared_at(line0 + 1, col, name)
            line = line_of(src, line0)
            if (
                target is None
                and ff.status == "partial"
                and path_parts[0] == ff.package
                and names_at(line, occ, cmap, name)
            ):
                span = occ.enclosing_range or occ.range
                start, end = (
                    (span[0] + 1, cmap.byte_col(span[0], span[1])),
                    (span[2] + 1, cmap.byte_col(span[2], span[3])),
                )
                suffix = parsed.descriptors[-1].suffix
                target = analyzer_declaration(ff.package, path_parts[1], suffix, line, start, end, python=True)
                made = True
        if target is not None:
            seen.add(occ.symbol)
            out.append((occ.symbol, target, made))
    return out


def _document_uses(
    doc: Document,
    src: bytes,
    fd: FileDeclarations,
    defined: Mapping[str, tuple[str, SymbolFact]],
    uses: list[ScipUse],
    external: list[CoveredSite],
    own: Collection[str],
) -> int:
    """The uses of one document's occurrences (into ``uses`` and ``external``); how many occurrences it has.
    ``own`` are the repository's top-level module names."""
    path = doc.relative_path
    cmap = ColumnMap(src, _unit_of(doc.position_encoding, _DEFAULT_UNIT))
    idents, blanked = _identifiers(src)
    n_occ = 0
    for occ in doc.occurrences:
        n_occ += 1
        if occ.is_definition or not occ.symbol or occ.symbol.startswith("local "):
            continue
        line0 = occ.range[0]
        col = cmap.byte_col(line0, occ.range[1])
        node = idents.get((line0, col))
        if node is None and line0 + 1 in blanked:
            # a line that does not parse: the analyzer still resolved it, but no syntax says how it is used
            syntax: _Syntax | None = _Syntax("reference", line0 + 1, col, True)
        elif node is None:
            continue  # inside a string annotation or a docstring: no syntax to classify it with
        else:
            syntax = _classify(node)
        if syntax is None:
            continue
        # On a blanked line only the indentation's ``pass`` is left: look the enclosing declaration up there.
        at_col = syntax.col if node is not None else _indentation(src, line0)
        source = fd.enclosing(syntax.line, at_col)
        if source is None:
            continue
        site = (path, syntax.line, syntax.col, source.qualified_name, source.kind, syntax.use, syntax.final)
        found = defined.get(occ.symbol)
        if found is not None:
            uses.append(ScipUse(*site, found[0], found[1].qualified_name, found[1].kind))
            continue
        parsed = parse_symbol(occ.symbol)
        parts = descriptor_path(parsed) if parsed is not None else None
        if parsed is None or parts is None:
            continue  # a parameter, a type parameter: nothing we declare
        if _standard(parsed.package, parts[0], own):
            if syntax.final:
                external.append(CoveredSite(path, syntax.line, syntax.col, source.qualified_name, source.kind))
            continue
        uses.append(ScipUse(*site, namespace=parts[0], member=parts[1]))
    return n_occ


def _standard(package: str, namespace: str, own: Collection[str]) -> bool:
    """Whether a symbol is the standard library's: scip-python says so, or its module is one of the standard
    library's and none of the repository's. The second case: a name scip-python reaches through a stub's
    ``from m import *`` (``os.path``'s members) is named after whichever name it met there first, so
    differently from run to run, and not always as the standard library's."""
    top = namespace.split(".")[0]
    return package in _STDLIB_PACKAGES or (top in sys.stdlib_module_names and top not in own)


def _unit_of(position_encoding: int, default: str) -> str:
    return {1: "utf-8", 2: "utf-16", 3: "utf-32"}.get(position_encoding, default)


# -- bind: stable keys, cross-repository providers --------------------------------------------------


class ModuleTable:
    """Every registered repository's Python modules: namespace -> (repository, file) and declarations."""

    def __init__(self, corpus: Corpus) -> None:
        self.by_module: dict[str, list[tuple[str, FileFacts]]] = {}
        self.providers: dict[str, set[str]] = {}  # top-level package -> repositories providing it
        for repo in corpus.repositories:
            for ff in repo.files:
                self.by_module.setdefault(ff.package, []).append((repo.name, ff))
                self.providers.setdefault(ff.package.split(".")[0], set()).add(repo.name)
        self._qn: dict[tuple[str, str], dict[str, SymbolFact]] = {}

    def declaration(self, repo: str, ff: FileFacts, qn: str) -> SymbolFact | None:
        table = self._qn.get((repo, ff.path))
        if table is None:
            table = {}
            for s in ff.symbols:
                table.setdefault(s.qualified_name, s)
            self._qn[(repo, ff.path)] = table
        return table.get(qn)


def import_roots(repo: RepositoryFacts) -> list[Path]:
    """The directories a repository's modules are importable from (``src/`` layouts included)."""
    roots: dict[str, int] = {}
    for ff in repo.files:
        parts = ff.path.replace("\\", "/").split("/")
        stem = parts[-1].rsplit(".", 1)[0]
        parts = parts[:-1] if stem == "__init__" else [*parts[:-1], stem]
        depth = len(ff.package.split("."))
        if depth > len(parts) or parts[-depth:] != ff.package.split("."):
            continue
        root = "/".join(parts[: len(parts) - depth])
        roots[root] = roots.get(root, 0) + 1
    return [Path(repo.root) / r if r else Path(repo.root) for r in sorted(roots, key=lambda r: (-roots[r], r))]


_EDGE_OF_USE = {
    "call": EdgeKind.CALLS_DIRECT,
    "decorator": EdgeKind.CALLS_DIRECT,
    "import": EdgeKind.IMPORTS_SYMBOL,
    "type": EdgeKind.TYPE_USES,
    "override": EdgeKind.OVERRIDES,
}


def _edge_kind(use: str, target_kind: str) -> EdgeKind:
    if use == "base":
        return EdgeKind.EXTENDS if target_kind == "class" else EdgeKind.REFERENCES
    if use == "callback":
        return EdgeKind.PASSES_AS_CALLBACK if target_kind in _CALLABLE else EdgeKind.REFERENCES
    if use in ("call", "decorator") and target_kind not in _CALLABLE and target_kind != "class":
        return EdgeKind.REFERENCES
    return _EDGE_OF_USE.get(use, EdgeKind.REFERENCES)


def bind(facts: RepositoryScipFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> ExactOutcome:
    """Turn joined uses into EXACT_TYPECHECKED edges; foreign targets need exactly one provider."""
    out = ExactOutcome(repository=repo, excluded=dict(facts.excluded))
    for path, why in facts.excluded:
        out.unresolved.append(
            UnresolvedFact(
                name="",
                reason="ANALYZER_FAILED",
                repository=repo,
                path=path,
                language=LANGUAGE,
                package=package_for(path, frozenset()),
                detail=f"{ANALYZER} crashed on this file, so it was analysed without it ({why}); its uses are CANDIDATE",
            )
        )
    for c in facts.external:
        source = corpus.key_of(repo, c.path, c.source_qn, c.source_kind)
        if source is not None:
            out.covered.add((source, c.line, c.col))
            out.covered_positions.add((c.path, c.line, c.col))
    for u in (*facts.uses, *facts.overrides):
        source = corpus.key_of(repo, u.path, u.source_qn, u.source_kind)
        if source is None:
            continue
        target_repo = repo
        if u.target_path:
            target = corpus.key_of(repo, u.target_path, u.target_qn, u.target_kind)
            target_kind = u.target_kind
        else:
            providers = modules.providers.get(u.namespace.split(".")[0], set())
            if repo in providers:
                # the repository's own package: Pyright reads it before any search path; a member we
                # do not declare (a module variable) is no edge, never an ambiguity with another provider
                providers = {repo}
            if not providers:
                if u.final:  # resolved to a package nobody registered: no edge, but the site is settled
                    out.covered.add((source, u.line, u.col))
                    out.covered_positions.add((u.path, u.line, u.col))
                continue
            if len(providers) > 1:
                if u.final:
                    out.unresolved.append(
                        UnresolvedFact(
                            name=u.member or u.namespace,
                            reason="AMBIGUOUS_PACKAGE_PROVIDER",
                            repository=repo,
                            path=u.path,
                            line=u.line,
                            col=u.col,
                            language=LANGUAGE,
                            source=source,
                            package=u.namespace,
                            detail="provided by " + ", ".join(sorted(providers)),
                        )
                    )
                    out.covered.add((source, u.line, u.col))
                    out.covered_positions.add((u.path, u.line, u.col))
                continue
            (target_repo,) = providers
            target, target_kind = None, ""
            for prov_repo, ff in modules.by_module.get(u.namespace, []):
                if prov_repo != target_repo:
                    continue
                decl = (
                    ff.symbols[0]
                    if not u.member and ff.symbols and ff.symbols[0].kind == "module"
                    else modules.declaration(prov_repo, ff, f"{u.namespace}.{u.member}" if u.member else u.namespace)
                )
                if decl is not None:
                    target = corpus.key_of(prov_repo, ff.path, decl.qualified_name, decl.kind)
                    target_kind = decl.kind
                    break
        if target is None:
            continue  # an attribute, a local class member: the analyzer knows it, we declare no such node
        if u.final:
            out.covered.add((source, u.line, u.col))
            out.covered_positions.add((u.path, u.line, u.col))
        if target_repo != repo:
            out.cross_repository += 1
        provenance = Provenance.PYTHON_INDEXER_DEF if u.use == "override" else Provenance.PYTHON_INDEXER_USE
        out.edges.append(
            EdgeFact(
                int(_edge_kind(u.use, target_kind)),
                source,
                target,
                int(Confidence.EXACT_TYPECHECKED),
                int(provenance),
                u.line,
                u.col,
            )
        )
    return out


# -- the pass over a corpus ---------------------------------------------------------------------------


def cache_key(repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], analyzer_identity: str) -> bytes:
    """Adapter and analyzer identity + this repository's Python files + those of its providers.

    A provider is another repository with a top-level package this one imports:
    editing a file elsewhere leaves this repository's analyzer run cached.
    """
    wanted = imported_top_levels(repo)
    own = {ff.package.split(".")[0] for ff in repo.files}
    h = hashlib.blake2b(digest_size=20)
    for part in ("scip", ADAPTER_VERSION, analyzer_identity, repo.name, repo.root):
        h.update(part.encode())
        h.update(b"\0")
    for name in sorted(hashes):
        files = hashes[name]
        if name == repo.name:
            chosen = sorted(files)
        else:
            tops = _top_levels(set(files))
            chosen = sorted(p for top in sorted(wanted - own) for p in tops.get(top, ()))
            if not chosen:
                continue
        h.update(f"repository\0{name}\n".encode())
        for path in chosen:
            h.update(f"{path}\0{files[path]}\n".encode())
    return h.digest()


def analyze_repository(repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryScipFacts:
    """Run scip-python on one repository (its providers' sources visible to it) and join its output.

    When the run crashes, the files that crash it are found by halving and left out (see ``salvage``); the
    rest keeps its exact edges. A failure nothing could salvage is returned as ``failure`` so the fact cache
    keeps it for unchanged inputs.
    """
    provided, roots = providers(repo, corpus), import_roots(repo)
    provided += installed_providers(repo, corpus, provided)

    def run(include: list[str] | None) -> Index:
        return run_index(
            Path(repo.root), repo.name, provided=provided, own_roots=roots, timeout=timeout, include=include
        )

    try:
        facts = join_repository(run(None), repo)
        return msgspec.structs.replace(
            facts, units=file_units(Path(repo.root), (ff.path for ff in repo.files if ff.parsed))
        )
    except AnalyzerCrashed as exc:
        files = sorted(ff.path for ff in repo.files if ff.parsed)
        salvaged = salvage(files, run, str(exc), Path(repo.root))
        if salvaged.index is None:
            return RepositoryScipFacts(analyzer_version="", failure=str(exc), salvage_runs=salvaged.runs)
        facts = join_repository(salvaged.index, repo)
        return msgspec.structs.replace(facts, excluded=tuple(salvaged.excluded), salvage_runs=salvaged.runs)


def file_units(root: Path, files: Iterable[str]) -> tuple[FileUnits, ...]:
    """The top-level statements of ``files`` (what the next incremental run compares an edit with)."""
    return read_file_units(root, files, lambda _path, source: units_of(source), FileUnits)


MAX_SALVAGE_RUNS = 64


@dataclass
class Salvaged:
    index: Index | None
    excluded: list[tuple[str, str]]
    runs: int


def salvage(files: list[str], run: Callable[[list[str] | None], Index], message: str, root: Path) -> Salvaged:
    """Find the files a crash comes from and keep the analyzer's output for all the others.

    A file the crash message names is tried first (one more run). Otherwise the file list (sorted, so a
    half is mostly whole directories) is halved: a half that passes is kept, a half that crashes is halved
    again, down to single files, which are excluded with the analyzer's message. At most MAX_SALVAGE_RUNS
    runs; files not reached by then are excluded as unanalysed.
    """
    kept: list[Index] = []
    excluded: list[tuple[str, str]] = []
    runs = 0

    def attempt(subset: list[str]) -> str:
        """ "" when the analyzer passed on ``subset`` (its index is kept), else its message."""
        nonlocal runs
        runs += 1
        try:
            kept.append(run(subset))
            return ""
        except AnalyzerCrashed as exc:
            return str(exc)

    named = [f for f in files if f in message or str(root / f) in message]
    if len(named) == 1 and len(files) > 1:
        rest = [f for f in files if f != named[0]]
        if not attempt(rest):
            return Salvaged(_merge(kept), [(named[0], message)], runs)

    def solve(subset: list[str], why: str) -> None:
        if len(subset) == 1:
            excluded.append((subset[0], why))
            return
        mid = len(subset) // 2
        for half in (subset[:mid], subset[mid:]):
            if runs >= MAX_SALVAGE_RUNS:
                excluded.extend((f, f"not analysed: {ANALYZER} crashed and the salvage budget ran out") for f in half)
                continue
            failed = attempt(half)
            if failed:
                solve(half, failed)

    solve(files, message)
    return Salvaged(_merge(kept) if kept else None, sorted(excluded), runs)


def _merge(indexes: list[Index]) -> Index:
    """One index from runs over disjoint file sets (a document seen twice counts once)."""
    seen: set[str] = set()
    documents = []
    for index in indexes:
        for doc in index.documents:
            if doc.relative_path not in seen:
                seen.add(doc.relative_path)
                documents.append(doc)
    external = {s.symbol: s for index in indexes for s in index.external_symbols}
    return Index(metadata=indexes[0].metadata, documents=tuple(documents), external_symbols=tuple(external.values()))


def now() -> float:
    return time.perf_counter()


class ScipPythonAdapter(ExactAdapter[RepositoryScipFacts]):
    """scip-python behind the language seam."""

    analyzer = ANALYZER
    facts_type = RepositoryScipFacts

    def install(self) -> str:
        return TOOL.install()

    def executable(self) -> Path:
        return TOOL.executable()

    def version(self) -> str:
        return TOOL.run_version()

    def identity(self) -> str:
        return TOOL.identity()

    def probe(self) -> str:
        return probe()

    def modules(self, corpus: Corpus) -> ModuleTable:
        return ModuleTable(corpus)

    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        key = cache_key(repo, hashes, identity)
        installed = installed_providers(repo, corpus, providers(repo, corpus))
        if not installed:
            return key
        from indexer.languages.python.installed import InstalledPackage, fingerprint

        seen = [InstalledPackage(p.repository, p.version, p.name, p.root, p.files) for p in installed]
        return hashlib.blake2b(key + fingerprint(seen), digest_size=20).digest()

    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryScipFacts:
        return analyze_repository(repo, corpus, timeout=timeout)

    def bind(self, facts: RepositoryScipFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> ExactOutcome:
        return bind(facts, repo, corpus, modules)

    def update(
        self,
        previous: RepositoryScipFacts,
        changed: Collection[str],
        repo: RepositoryFacts,
        corpus: Corpus,
        *,
        timeout: float,
    ) -> RepositoryScipFacts | None:
        from indexer.languages.python.incremental import update  # it builds on this module

        return update(previous, changed, repo, corpus, timeout=timeout)


ADAPTER = ScipPythonAdapter()
