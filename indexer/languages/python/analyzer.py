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
from indexer.facts import FileFacts, SymbolFact, UnresolvedFact
from indexer.languages.change_units import read_file_units
from indexer.languages.npm_tool import NpmTool, cause, tail
from indexer.languages.python.modules import package_for
from indexer.languages.python.units import FileUnits, units_of
from indexer.languages.spec import AnalyzerCrashed, AnalyzerFailed
from indexer.languages.syntax import repair
from indexer.scip.decode import Document, Index, Relationship, decode_index
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
from indexer.scip.route import (
    EXTERNAL,
    Binding,
    BoundTarget,
    Foreign,
    ScipDefinition,
    ScipFacts,
    ScipLanguage,
    ScipUse,
    Target,
    UseSite,
    column_unit,
    document_relations,
    document_uses,
    first_definitions,
    kept_definitions,
    local,
    source_reader,
    stated_of,
)
from snapshot_format.vocab import EXTERNAL_OVERRIDE, EdgeKind, Provenance

LANGUAGE = "python"
ANALYZER = "scip-python"
NPM_PACKAGE = "@sourcegraph/scip-python"
PINNED_VERSION = "0.6.6"
ADAPTER_VERSION = "scip-python-join-10"  # part of the cache key: bump on any change to the joined output
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


def _field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def _is(a: Node | None, b: Node) -> bool:
    return a is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte and a.type == b.type


def _classify(ident: Node) -> UseSite | None:
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
            return UseSite("import", row + 1, col, _is(parent.named_children[-1], ident))
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
        return UseSite("reference", row + 1, col, final)
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
    return UseSite(use, row + 1, col, final)


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


# The joined output of one run (the route's facts, with Python's top-level statements as its units).
RepositoryScipFacts = ScipFacts[FileUnits]
PyDefinition = ScipDefinition


def _indentation(src: bytes, line0: int) -> int:
    text = src.split(b"\n")[line0]
    return len(text) - len(text.lstrip())


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
    source_of = source_reader(Path(repo.root))
    docs = sorted((d for d in index.documents if d.relative_path in files), key=lambda d: d.relative_path)
    own = {d.relative_path: _file_definitions(d, files[d.relative_path], source_of(d.relative_path)) for d in docs}
    declared = known_declarations or {}

    def symbols_of(path: str) -> tuple[SymbolFact, ...]:
        ff = files.get(path)
        return (*(ff.symbols if ff is not None else ()), *declared.get(path, ()))

    known = list(known)
    kept: dict[str, list[tuple[str, SymbolFact, bool]]] = {}
    for t, decl in kept_definitions(known, symbols_of, lambda t: t.path in own):
        kept.setdefault(t.path, []).append((t.symbol, decl, t.synthesized))
    order = sorted(own.keys() | kept.keys())
    stated = {t.symbol: t.stated for t in known if t.path not in own}
    stated.update({info.symbol: stated_of(info) for d in docs for info in d.symbols})
    defined: dict[str, tuple[str, SymbolFact]] = {}
    synthesized = first_definitions(((p, own[p] if p in own else kept[p]) for p in order), defined)
    decls = {
        d.relative_path: FileDeclarations(
            (*files[d.relative_path].symbols, *synthesized.get(d.relative_path, ())), SOURCE_KINDS
        )
        for d in docs
    }
    uses: list[ScipUse] = []
    external: list[CoveredSite] = []
    counts: list[tuple[str, int]] = []
    hooks = PythonHooks(frozenset(ff.package.split(".")[0] for ff in repo.files))
    for doc in docs:
        path = doc.relative_path
        counts.append((path, document_uses(hooks, path, doc, source_of(path), decls[path], defined, uses, external)))
        uses += document_relations(hooks, path, doc, defined)
    return RepositoryScipFacts(
        analyzer_version=f"{index.metadata.tool_name} {index.metadata.tool_version}".strip(),
        uses=tuple(uses),
        external=tuple(external),
        documents=len(docs),
        occurrences=sum(n for _p, n in counts),
        declarations=tuple((p, d) for p, ds in sorted(synthesized.items()) for d in ds),
        definitions=tuple(
            ScipDefinition(
                symbol, path, d.qualified_name, d.kind, d.start_line, d.start_col, made, stated=stated.get(symbol, "")
            )
            for path in order
            for symbol, d, made in sorted(own[path] if path in own else kept[path], key=lambda t: t[0])
        ),
        document_occurrences=tuple(counts),
    )


# Pyright counts UTF-16 code units; newer indexes say so in position_encoding.
_DEFAULT_UNIT = "utf-16"


def _file_definitions(doc: Document, ff: FileFacts, src: bytes) -> list[tuple[str, SymbolFact, bool]]:
    """Each SCIP symbol one document defines -> our declaration (by position and name; its first definition
    that has one), and whether the declaration is the analyzer's own: where tree-sitter could not parse
    the line, the analyzer's definition stands in."""
    cmap = ColumnMap(src, column_unit(doc.position_encoding, _DEFAULT_UNIT))
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


def _object_method(u: ScipUse) -> bool:
    """An override of ``object``'s own methods (``__init__``, ``__eq__``): special methods, whose implicit calls
    their ``IMPLICIT_CALL`` row already names."""
    return u.package in ("builtins", "__builtins__") and u.member.split(".")[0] == "object"


def _outside_override(u: ScipUse, repo: str, source: str) -> UnresolvedFact:
    """An ``EXTERNAL_OVERRIDE`` row: the method at ``u`` overrides a base method outside the graph, whose code
    (the base's own methods, or anything handed the object as that base) may call it unseen."""
    base = f"{u.package}.{u.member}"
    return UnresolvedFact(
        name=u.source_qn.rsplit(".", 1)[-1],
        reason=EXTERNAL_OVERRIDE,
        repository=repo,
        path=u.path,
        line=u.line,
        col=u.col,
        language=LANGUAGE,
        source=source,
        package=u.package,
        detail=(
            f"overrides {base}, outside the graph: code there ({u.member.split('.')[0]}'s own methods, or code "
            "handed this object as one) may call it, and those calls are not in the graph"
        ),
    )


class PythonHooks(ScipLanguage):
    """Python's hooks into the SCIP route: tree-sitter says how each occurrence is used; ``own`` (the
    repository's top-level module names) says which standard-library names are its own."""

    language = LANGUAGE
    analyzer = ANALYZER
    default_unit = _DEFAULT_UNIT

    def __init__(self, own: frozenset[str] = frozenset()) -> None:
        self.own = own

    def sites(self, path: str, source: bytes) -> Callable[[int, int], UseSite | None]:
        idents, blanked = _identifiers(source)

        def site_at(line0: int, col: int) -> UseSite | None:
            node = idents.get((line0, col))
            if node is not None:
                return _classify(node)
            if line0 + 1 in blanked:
                # a line that does not parse: the analyzer still resolved it, but no syntax says how it is used;
                # only the indentation's ``pass`` is left there to look the enclosing declaration up at
                return UseSite("reference", line0 + 1, col, True, source_col=_indentation(source, line0))
            return None  # inside a string annotation or a docstring: no syntax to classify it with

        return site_at

    def target(self, symbol: str, site: UseSite, found: tuple[str, SymbolFact] | None) -> Target | None:
        if found is not None:
            return local(found)
        parsed = parse_symbol(symbol)
        parts = descriptor_path(parsed) if parsed is not None else None
        if parsed is None or parts is None:
            return None  # a parameter, a type parameter: nothing we declare
        if _standard(parsed.package, parts[0], self.own):
            return EXTERNAL
        return Foreign(parts[0], member=parts[1])

    def relation(
        self, child: tuple[str, SymbolFact], rel: Relationship, parent: tuple[str, SymbolFact] | None, symbol: str
    ) -> tuple[str, bool, Target] | None:
        """A method overriding a base method: this repository's, or one defined outside it (another registered
        repository's, bound by module as a use is, or outside the graph: the standard library's
        ``MutableMapping.popitem``, an ``EXTERNAL_OVERRIDE`` row through ``unprovided``)."""
        if child[1].kind != "method" or not (rel.is_implementation or rel.is_reference):
            return None
        if parent is None:
            parsed = parse_symbol(symbol)
            parts = descriptor_path(parsed) if parsed is not None else None
            if parsed is None or parts is None or "." not in parts[1]:
                return None
            return "override", False, Foreign(parts[0], "", parts[1])
        if parent[1].kind != "method":
            return None
        return "override", False, local(parent)

    def unprovided(self, use: ScipUse, source: str, bound: Binding) -> None:
        if use.use == "override":
            if not _object_method(use):
                bound.out.unresolved.append(_outside_override(use, bound.repo, source))
            return
        super().unprovided(use, source, bound)

    def package_of(self, path: str) -> str:
        return package_for(path, frozenset())

    def providers(self, use: ScipUse, modules: ModuleTable) -> list[tuple[str, str]]:
        return [(r, "") for r in sorted(modules.providers.get(use.package.split(".")[0], ()))]

    def declaration(self, use: ScipUse, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
        modules: ModuleTable = bound.modules
        target_repo = provider[0]
        for prov_repo, ff in modules.by_module.get(use.package, []):
            if prov_repo != target_repo:
                continue
            qn = f"{use.package}.{use.member}" if use.member else use.package
            decl = (
                ff.symbols[0]
                if not use.member and ff.symbols and ff.symbols[0].kind == "module"
                else modules.declaration(prov_repo, ff, qn)
            )
            if decl is not None:
                return BoundTarget(
                    target_repo, bound.corpus.key_of(prov_repo, ff.path, decl.qualified_name, decl.kind), decl.kind
                )
        return None

    def edge_kind(self, use: ScipUse, target_kind: str) -> EdgeKind:
        return _edge_kind(use.use, target_kind)

    def provenance(self, use: ScipUse) -> Provenance:
        return Provenance.PYTHON_INDEXER_DEF if use.use == "override" else Provenance.PYTHON_INDEXER_USE


def _standard(package: str, namespace: str, own: Collection[str]) -> bool:
    """Whether a symbol is the standard library's: scip-python says so, or its module is one of the standard
    library's and none of the repository's. The second case: a name scip-python reaches through a stub's
    ``from m import *`` (``os.path``'s members) is named after whichever name it met there first, so
    differently from run to run, and not always as the standard library's."""
    top = namespace.split(".")[0]
    return package in _STDLIB_PACKAGES or (top in sys.stdlib_module_names and top not in own)


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
