"""The exact TypeScript/JavaScript adapter: scip-typescript (the TypeScript 5.9 checker) in batch, joined with tree-sitter.

One ``scip-typescript index`` process per repository and language, cwd =
the repository, bounded by the configured timeout, checking every project
that claims some of the corpus's files (``indexer.languages.typescript.projects``):
every ``tsconfig.json``/``jsconfig.json`` discovery keeps, and every config
their ``references`` name, listed by the TypeScript 5.9.3 compiler itself
(``files``/``include``/``exclude``/``extends`` as ``tsc`` reads them), each
file assigned to its default project the way tsserver picks it. Each project
runs on a generated tsconfig in a private temporary directory (never in the
repository) that ``extends`` the project's own config (its ``paths``,
``baseUrl`` and module settings), lists the project's files, turns on
``allowJs`` and turns off every emit. Files no tsconfig claims run in an
inferred project with default options and ``allowJs``. scip-typescript does
not give the program ``projectReferences``, so an import across projects
resolves as module resolution finds it (``paths`` or a relative path: the
referenced project's source); a symbol found in a referenced project's
``.d.ts`` output is mapped back to the source file under its ``rootDir``, as
the language service does. The index is written to the temporary directory.

Joining (``join_repository``, repository-local and cached): each occurrence
is classified by the tree-sitter node at its position (call, import, export,
re-export, type, extends, implements, callback, reference) and attributed to
its enclosing declaration; its target is one of the repository's
declarations (mapped by the definition occurrence's position) or an npm
package + file + member path for a symbol defined elsewhere. SCIP
relationships add IMPLEMENTS/OVERRIDES between methods.

Binding (``bind``): a foreign symbol binds to a registered repository only
when exactly one registered repository's ``package.json`` carries that
package name and the symbol's file is one of that repository's sources; a
symbol in the provider's published build (``node_modules/<name>/build/...d.ts``)
maps to its source declaration through the package's entries
(``indexer.languages.typescript.package_map``: EXACT_PACKAGE_MAPPED, or an
unresolved row saying why not). Exports and re-exports become
EXPORTS/REEXPORTS, never uses.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
from tree_sitter import Node

from indexer import children
from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import FileFacts, SymbolFact, UnresolvedFact
from indexer.languages.change_units import read_file_units
from indexer.languages.npm_tool import NpmTool
from indexer.languages.npm_tool import tail as _tail
from indexer.languages.spec import AnalyzerFailed, ExactOutcome
from indexer.languages.syntax import repair
from indexer.languages.typescript import projects as projects_mod
from indexer.languages.typescript.extract import extract, grammar_for
from indexer.languages.typescript.modules import EXTENSIONS, language_of, module_name, package_for, strip_extension
from indexer.languages.typescript.outputs import is_declaration
from indexer.languages.typescript.package_map import NotMapped, PublishedBuilds
from indexer.languages.typescript.packages import package_dirs
from indexer.languages.typescript.projects import Plan, Project, ProjectsFailed, plan_projects, type_roots_for
from indexer.languages.typescript.units import FileUnits, units_of
from indexer.languages.typescript.variance import prepare
from indexer.scip.decode import Document, Index, Occurrence, Relationship, decode_index
from indexer.scip.join import (
    PARAMETER,
    TYPE_PARAMETER,
    ColumnMap,
    CoveredSite,
    FileDeclarations,
    analyzer_declaration,
    line_of,
    names_at,
    parse_symbol,
)
from indexer.scip.route import (
    EXTERNAL,
    Binding,
    BoundTarget,
    Foreign,
    Local,
    ScipDefinition,
    ScipFacts,
    ScipLanguage,
    ScipUse,
    Target,
    UseSite,
    document_relations,
    document_uses,
    first_definitions,
    kept_definitions,
    local,
    source_reader,
    stated_of,
)
from indexer.scip.route import bind as route_bind
from snapshot_format.vocab import EXTERNAL_OVERRIDE, Confidence, EdgeKind, Provenance

LANGUAGE = "typescript"
ANALYZER = "scip-typescript"
NPM_PACKAGE = "@sourcegraph/scip-typescript"
PINNED_VERSION = "0.4.0"
TYPESCRIPT_VERSION = "5.9.3"  # npm `typescript` 7.x has no classic compiler API
ADAPTER_VERSION = "scip-typescript-join-11"  # part of the cache key: bump on any change to the joined output
EXECUTABLE_ENV = "KIVGRAPH_SCIP_TYPESCRIPT"

SOURCE_KINDS = frozenset(
    {"module", "class", "interface", "function", "method", "namespace", "enum", "type", "variable", "property"}
)
_CALLABLE = frozenset({"function", "method"})
_EXTERNAL_PACKAGES = frozenset({"typescript", "@types/node"})
_OCCURRENCE_NODES = frozenset(
    {
        "identifier",
        "property_identifier",
        "type_identifier",
        "private_property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "string",
        "this",
        "super",
    }
)
_TYPE_PARENTS = frozenset(
    {
        "nested_type_identifier",
        "generic_type",
        "type_query",
        "type_annotation",
        "type_arguments",
        "union_type",
        "intersection_type",
        "array_type",
        "tuple_type",
        "function_type",
        "constraint",
        "default_type",
        "lookup_type",
        "index_type_query",
        "readonly_type",
        "conditional_type",
        "infer_type",
        "type_predicate",
        "satisfies_expression",
        "as_expression",
    }
)


TOOL = NpmTool(
    ANALYZER,
    NPM_PACKAGE,
    PINNED_VERSION,
    EXECUTABLE_ENV,
    "TypeScript stays on the CANDIDATE fallback",
    companions=(f"typescript@{TYPESCRIPT_VERSION}",),
)
install_dir = TOOL.install_dir
executable = TOOL.executable
install = TOOL.install
identity = TOOL.identity
version = TOOL.run_version


def _typescript_module(exe: Path) -> str:
    """The ``typescript`` package scip-typescript itself loads (the pinned 5.9.3 next to it)."""
    try:
        here = exe.resolve(strict=True).parent
    except OSError as exc:
        raise AnalyzerFailed(f"{ANALYZER} not found at {exe} ({exc})") from None
    for d in (here, *here.parents):
        candidate = d / "node_modules" / "typescript"
        if (candidate / "package.json").is_file():
            return str(candidate)
    raise AnalyzerFailed(f"no typescript package next to {ANALYZER} at {exe}; run `make setup`")


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise AnalyzerFailed("node not found on PATH")
    return node


_NO_EMIT: dict[str, object] = {
    "noEmit": True,
    "allowJs": True,
    "skipLibCheck": True,
    "composite": False,
    "incremental": False,
    "declaration": False,
    "declarationMap": False,
    "emitDeclarationOnly": False,
}
INFERRED_OPTIONS: dict[str, object] = {
    "target": "es2022",
    "module": "esnext",
    "moduleResolution": "bundler",
    "jsx": "preserve",
    "strict": False,
    "esModuleInterop": True,
    "resolveJsonModule": True,
    "allowJs": True,
    "noEmit": True,
    "skipLibCheck": True,
}


def project_config(root: Path, files: list[str], project: Project | None = None) -> dict[str, object]:
    """A generated tsconfig checking ``files``: the repository's ``project`` extended (its options, paths and
    module settings; its own ``files``/``include``/``references`` replaced), or the inferred defaults."""
    listed = [str(root / f) for f in files]
    if project is None:
        inferred = Project(config=str(root / "tsconfig.json"), file_names=frozenset())
        return {
            "files": listed,
            "compilerOptions": {**INFERRED_OPTIONS, "typeRoots": type_roots_for(inferred, str(root))},
        }
    # ambient declarations the project claims (global .d.ts) stay in its program
    listed += sorted(f for f in project.file_names if f.endswith((".d.ts", ".d.mts", ".d.cts")) and f not in listed)
    options = dict(_NO_EMIT)
    options["typeRoots"] = type_roots_for(project, str(root))
    return {"extends": project.config, "files": listed, "include": [], "compilerOptions": options}


def plan(root: Path, files: list[str], *, timeout: float, exe: Path | None = None) -> Plan:
    """The repository's tsconfig projects as the compiler lists them, with ``files`` assigned to them."""
    exe = exe or executable()
    if not projects_mod.config_files(root):
        return projects_mod.assign(Plan(), str(root), files)
    try:
        return plan_projects(str(root), files, node=_node(), typescript_module=_typescript_module(exe), timeout=timeout)
    except ProjectsFailed as exc:
        raise AnalyzerFailed(str(exc)) from None


def run_index(
    root: Path, files: list[str], *, timeout: float, exe: Path | None = None, projects: Plan | None = None
) -> Index:
    """One scip-typescript process over every project of ``root`` that checks some of ``files`` (each file in
    its own project, the unclaimed ones in the inferred project); configs and index live outside the
    repository."""
    exe = exe or executable()
    identity(exe)
    started = time.monotonic()
    projects = projects if projects is not None else plan(root, files, timeout=timeout, exe=exe)
    with tempfile.TemporaryDirectory(prefix="kivgraph-scipts-") as tmp:
        out = Path(tmp) / "index.scip"
        configs: list[str] = []
        runs: list[tuple[Project | None, list[str]]] = [
            (projects.projects[c], fs) for c, fs in sorted(projects.assigned.items())
        ]
        if projects.inferred:
            runs.append((None, projects.inferred))
        for i, (project, members) in enumerate(runs):
            tsconfig = Path(tmp) / f"tsconfig.{i}.json"
            tsconfig.write_text(json.dumps(project_config(root, members, project)))
            configs.append(str(tsconfig))
        env = {k: v for k, v in os.environ.items() if k != EXECUTABLE_ENV}
        env.setdefault("NODE_OPTIONS", "--max-old-space-size=4096")
        cmd = [str(exe), "index", "--cwd", str(root), "--output", str(out), "--no-progress-bar", *configs]
        left = max(1.0, timeout - (time.monotonic() - started))
        try:
            returncode, stdout, stderr = children.run(cmd, timeout=left, cwd=tmp, env=env)
        except OSError as exc:
            raise AnalyzerFailed(f"{ANALYZER} could not start: {exc}") from None
        except subprocess.TimeoutExpired:
            raise AnalyzerFailed(f"{ANALYZER} timed out after {timeout:g}s") from None
        if returncode != 0 or not out.exists():
            detail = stderr.decode(errors="replace") or stdout.decode(errors="replace")
            raise AnalyzerFailed(f"{ANALYZER} exited {returncode}: {_tail(detail)}")
        # scip-typescript skips a project whose config does not parse (it prints the diagnostics, exit 0)
        printed = stdout.decode(errors="replace")
        skipped = [c for c in configs if f"+ {c} (" not in printed]
        if skipped:
            raise AnalyzerFailed(
                f"{ANALYZER} did not check {len(skipped)} of {len(configs)} projects: {_tail(printed)}"
            )
        try:
            return decode_index(out.read_bytes())
        except ValueError as exc:
            raise AnalyzerFailed(f"{ANALYZER} wrote an unreadable index: {exc}") from None


def probe(timeout: float = 120) -> str:
    """Run the analyzer on a two-file project; returns a detail line, raises AnalyzerFailed."""
    with tempfile.TemporaryDirectory(prefix="kivgraph-probe-") as tmp:
        root = Path(tmp)
        (root / "a.ts").write_text("export function target(): number { return 1 }\n")
        (root / "b.ts").write_text("import { target } from './a'\nexport const v = target()\n")
        index = run_index(root, ["a.ts", "b.ts"], timeout=timeout)
        for doc in index.documents:
            if doc.relative_path == "b.ts":
                for occ in doc.occurrences:
                    if occ.range[:2] == (1, 17) and occ.symbol.endswith("`a.ts`/target()."):
                        return f"{index.metadata.tool_name} {index.metadata.tool_version} resolved a cross-module call"
        raise AnalyzerFailed(f"{ANALYZER} ran but did not resolve the probe's cross-module call")


# -- syntax: what each occurrence is ---------------------------------------------------------------


def _is(a: Node | None, b: Node) -> bool:
    return a is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte and a.type == b.type


def classify(node: Node) -> str | None:
    """The use an occurrence at ``node`` makes: import, export, reexport, call, type, extends, implements,
    callback or reference; None when it is nothing we record."""
    parent = node.parent
    if parent is None:
        return None
    cur: Node | None = node
    while cur is not None and cur.type not in (
        "import_statement",
        "export_statement",
        "program",
        "statement_block",
        "class_body",
    ):
        cur = cur.parent
    if cur is not None and cur.type == "import_statement":
        return "import"
    if cur is not None and cur.type == "export_statement":
        if cur.child_by_field_name("source") is not None:
            return "reexport"
        if parent.type == "export_specifier" or _is(cur.child_by_field_name("value"), node):
            return "export"
    if node.type == "string":
        return None
    expr = parent if parent.type == "member_expression" and _is(parent.child_by_field_name("property"), node) else node
    up = expr.parent
    if up is None:
        return "reference"
    if (up.type == "call_expression" and _is(up.child_by_field_name("function"), expr)) or (
        up.type == "new_expression" and _is(up.child_by_field_name("constructor"), expr)
    ):
        return "call"
    if up.type == "extends_clause" or up.type == "extends_type_clause":
        return "extends"
    if up.type == "implements_clause":
        return "implements"
    if up.type in ("generic_type", "nested_type_identifier") and up.parent is not None:
        if up.parent.type in ("extends_type_clause", "extends_clause"):
            return "extends"
        if up.parent.type == "implements_clause":
            return "implements"
    if node.type == "type_identifier" or (up.type in _TYPE_PARENTS and node.type != "identifier"):
        return "type"
    if up.type == "nested_type_identifier":
        return "type"
    if up.type == "arguments":
        return "callback"
    return "reference"


def _occurrence_nodes(root: Node) -> dict[tuple[int, int], Node]:
    out: dict[tuple[int, int], Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _OCCURRENCE_NODES:
            out.setdefault(node.start_point, node)
            if node.type == "string":
                continue
        stack.extend(node.children)
    return out


# -- join: repository-local, cacheable --------------------------------------------------------------


# The joined output of one run (the route's facts, with TypeScript's top-level statements as its units).
RepositoryTsFacts = ScipFacts[FileUnits]
TsUse = ScipUse
TsDefinition = ScipDefinition


# scip-typescript numbers the type literals it meets with the counter of the document it is indexing when
# it first meets them, so one type literal's name depends on which files the run checked and in what order.
_TYPE_LITERAL = re.compile(r"typeLiteral\d+:")


def canonical_symbol(symbol: str) -> str:
    """``symbol`` with type-literal numbers dropped: the same declaration's name in every run."""
    return _TYPE_LITERAL.sub("typeLiteral:", symbol) if "typeLiteral" in symbol else symbol


_SOURCE_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", *EXTENSIONS)


def symbol_target(symbol: str) -> tuple[str, str, str] | None:
    """(npm package, file relative to its package.json, dotted member path) of a declaration symbol."""
    parsed = parse_symbol(symbol)
    if parsed is None:
        return None
    file_parts: list[str] = []
    members: list[str] = []
    in_file = False
    for d in parsed.descriptors:
        if d.suffix in (PARAMETER, TYPE_PARAMETER):
            return None
        if not in_file:
            file_parts.append(d.name)
            in_file = d.name.endswith(_SOURCE_SUFFIXES)
            continue
        members.append("constructor" if d.name == "<constructor>" else d.name)
    if not in_file:
        return None
    return parsed.package, "/".join(file_parts), ".".join(members)


def _first_of_each_path(documents: Iterable[Document]) -> list[Document]:
    """A document checked by two projects counts once: the first."""
    seen: set[str] = set()
    out = []
    for doc in documents:
        if doc.relative_path not in seen:
            seen.add(doc.relative_path)
            out.append(doc)
    return out


def _document_definitions(
    doc: Document,
    ff: FileFacts,
    files: Mapping[str, FileFacts],
    source_of: Callable[[str], bytes],
    defined: Mapping[str, tuple[str, SymbolFact]],
) -> Iterator[tuple[str, SymbolFact, bool]]:
    """Each SCIP symbol one document defines (and no document before it) -> our declaration, by position and
    name; in a partial file, a definition with no tree-sitter declaration becomes one (the checker's)."""
    fd = FileDeclarations(ff.symbols, SOURCE_KINDS)
    cmap = ColumnMap(source_of(doc.relative_path), "utf-16")
    for occ in doc.occurrences:
        symbol = canonical_symbol(occ.symbol)
        if not occ.is_definition or symbol in defined or symbol.startswith("local "):
            continue
        target = symbol_target(symbol)
        if target is None:
            continue
        made = False
        if target[2] == "":
            decl = fd.module
        else:
            name = target[2].rsplit(".", 1)[-1]
            decl = fd.declared_at(occ.range[0] + 1, cmap.byte_col(occ.range[0], occ.range[1]), name)
            if decl is None and ff.status == "partial" and doc.relative_path in files:
                decl = _lost_declaration(doc.relative_path, occ, target[2], cmap, source_of(doc.relative_path))
                made = decl is not None
        if decl is not None:
            yield symbol, decl, made


def _outside_override(u: ScipUse, repo: str, source: str) -> UnresolvedFact:
    """An ``EXTERNAL_OVERRIDE`` row: the member at ``u`` overrides or implements a member outside the graph
    (``Iterable``'s iterator, a base class of a package nobody registered), which code there (the base's own
    methods, the language's conversions and loops) may call unseen (docs/surface.md §4.8)."""
    base = u.member or u.file
    return UnresolvedFact(
        name=u.source_qn.rsplit(".", 1)[-1],
        reason=EXTERNAL_OVERRIDE,
        repository=repo,
        path=u.path,
        line=u.line,
        col=u.col,
        language=language_of(u.path),
        source=source,
        package=u.package,
        detail=(
            f"overrides {base} of {u.package}, outside the graph: code there (the base's own methods, the "
            "language's conversions and loops) may call it, and those calls are not in the graph"
        ),
    )


class TypescriptHooks(ScipLanguage):
    """TypeScript's hooks into the SCIP route. A join's instance knows the repository: ``local_target`` finds a
    symbol of it no document defined, ``decls`` its declarations (an interface member is implemented)."""

    language = LANGUAGE
    analyzer = ANALYZER
    prefer_own = False  # the repository's own packages are local targets already (``local_target``)

    def __init__(
        self,
        local_target: Callable[[str, str, str], tuple[str, SymbolFact] | None] = lambda *_: None,
        decls: Mapping[str, FileDeclarations] | None = None,
    ) -> None:
        self.local_target = local_target
        self.decls = decls or {}

    def unit(self, doc: Document) -> str:
        return "utf-16"  # what scip-typescript counts, whatever the document says

    def canonical(self, symbol: str) -> str:
        return canonical_symbol(symbol)

    def sites(self, path: str, source: bytes) -> Callable[[int, int], UseSite | None]:
        grammar = grammar_for(path)  # what the grammar lacks is parsed as extract parses it
        fixed = repair(grammar, prepare(grammar, source, jsx=not path.endswith((".ts", ".mts", ".cts")))[0])
        nodes = _occurrence_nodes(fixed.root)
        blanked = frozenset(fixed.blanked)

        def site_at(line0: int, col: int) -> UseSite | None:
            node = nodes.get((line0, col))
            if node is None:
                # resolved by the checker on a line tree-sitter could not parse
                return UseSite("reference", line0 + 1, col) if line0 + 1 in blanked else None
            use = classify(node)
            return UseSite(use, line0 + 1, col) if use is not None else None

        return site_at

    def target(self, symbol: str, site: UseSite, found: tuple[str, SymbolFact] | None) -> Target | None:
        if found is None:
            parts = symbol_target(symbol)
            found = self.local_target(*parts) if parts is not None else None
        if found is not None and site.use == "call" and found[1].kind == "method" and found[1].name == "constructor":
            # `new C()` names the class, like the candidate resolver and the language service do
            return Local(found[0], found[1].qualified_name.rsplit(".", 1)[0], "class")
        if found is not None:
            return local(found)
        parts = symbol_target(symbol)
        if parts is None:
            return None  # a parameter or type parameter: nothing we declare
        package, file, member = parts
        if package in _EXTERNAL_PACKAGES or package.startswith("@types/") or file.startswith("lib/lib."):
            return EXTERNAL
        return Foreign(package, file, member)

    def relation(
        self, child: tuple[str, SymbolFact], rel: Relationship, parent: tuple[str, SymbolFact] | None, symbol: str
    ) -> tuple[str, bool, Target] | None:
        """Methods (and classes) implementing or overriding others."""
        decl = child[1]
        if decl.kind not in ("method", "property", "class") or not rel.is_implementation:
            return None
        if parent is not None:
            use = "implements" if _is_interface_member(parent, self.decls) else "override"
            if decl.kind == "class":
                use = "implements" if parent[1].kind == "interface" else "extends"
            return use, True, local(parent)
        t = symbol_target(symbol)
        # the compiler's own declarations (lib.d.ts, @types/node) matter only for what a member overrides
        if t is None or (t[0] in _EXTERNAL_PACKAGES and decl.kind == "class"):
            return None
        return ("implements" if decl.kind == "class" else "override"), True, Foreign(*t)

    def unprovided(self, use: ScipUse, source: str, bound: Binding) -> None:
        """A member overriding or implementing one outside the graph: an ``EXTERNAL_OVERRIDE`` row on it."""
        if use.use == "override" and use.source_kind in ("method", "property"):
            bound.out.unresolved.append(_outside_override(use, bound.repo, source))
        super().unprovided(use, source, bound)

    def language_of(self, path: str) -> str:
        return language_of(path)

    def providers(self, use: ScipUse, modules: ModuleTable) -> list[tuple[str, str]]:
        return modules.providers.get(use.package, [])

    def declaration(self, use: ScipUse, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
        return _provided_declaration(use, source, provider, bound)

    def edge_kind(self, use: ScipUse, target_kind: str) -> EdgeKind:
        return edge_kind(use.use, target_kind)

    def provenance(self, use: ScipUse) -> Provenance:
        return Provenance.TYPESCRIPT_CHECKER

    def preamble(self, facts: ScipFacts[Any], bound: Binding, modules: Any) -> None:
        """Variables the checker's types show to hold a callable."""
        named = _callable_type_names(bound.corpus, bound.repo)
        for t in facts.definitions:
            if t.callable or named.get(t.type_name, False):
                held = bound.corpus.key_of(bound.repo, t.path, t.qualified_name, t.kind)
                if held is not None:
                    bound.out.callable.add(held)


def join_repository(
    index: Index,
    repo: RepositoryFacts,
    redirects: list[tuple[str, str]] | tuple[()] = (),
    project_files: list[str] | tuple[()] = (),
    known: Iterable[TsDefinition] = (),
    known_declarations: Mapping[str, Collection[SymbolFact]] | None = None,
) -> RepositoryTsFacts:
    """Tie the index's occurrences to the repository's declarations and classify each use.

    ``redirects`` are (output directory, source root) pairs of the repository's projects: a symbol declared
    in a ``.d.ts`` output of a referenced project is the declaration in that project's source file.
    A document checked by two projects counts once (the first). ``project_files`` (repository-relative
    files of every project, either language) widen the repository's own npm packages beyond this corpus's
    files: a ``.js`` file importing a TypeScript package of the same monorepo stays local. ``known`` are
    definitions of files the run did not check (an incremental run keeps them from the last one; the
    checker's declarations of their partial lines are ``known_declarations``): their symbols resolve as
    they did then (``StaleDefinition`` when a declaration is gone).
    """
    root = Path(repo.root)
    files = {ff.path: ff for ff in repo.files if ff.parsed}
    documents = sorted(_first_of_each_path(index.documents), key=lambda d: d.relative_path)
    extra: dict[str, FileFacts] = {}
    source_of = source_reader(root)

    def facts_of(path: str) -> FileFacts | None:
        if path in files:
            return files[path]
        if path not in extra and path.endswith(EXTENSIONS) and (root / path).is_file():
            extra[path] = extract(path, source_of(path), package_for(path, frozenset()))
        return extra.get(path)

    decls: dict[str, FileDeclarations] = {}
    defined: dict[str, tuple[str, SymbolFact]] = {}
    own = {name: d for d, name in package_dirs(repo.root, sorted({*files, *project_files})).items()}

    def source_of_output(rel: str) -> str:
        """A project's emitted declaration file → its source file (same path under the source root)."""
        if rel in files or not rel.endswith((".d.ts", ".d.mts", ".d.cts")):
            return rel
        for out_dir, src_dir in redirects:
            prefix = f"{out_dir}/" if out_dir else ""
            if not rel.startswith(prefix):
                continue
            stem = strip_extension(rel[len(prefix) :])
            for ext in EXTENSIONS:
                candidate = f"{src_dir}/{stem}{ext}" if src_dir else f"{stem}{ext}"
                if candidate in files or (root / candidate).is_file():
                    return candidate
        return rel

    def local_target(package: str, file: str, member: str) -> tuple[str, SymbolFact] | None:
        """A symbol of this repository no document defined (a file of the other language) by its path."""
        if package == ".":
            try:
                rel = Path("/", file).relative_to(root.resolve()).as_posix()
            except ValueError:
                return None
        elif package in own:
            rel = f"{own[package]}/{file}" if own[package] else file
        else:
            return None
        rel = source_of_output(rel)
        ff = facts_of(rel)
        qn = module_name(rel) + (f".{member}" if member else "")
        found = next((s for s in ff.symbols if s.qualified_name == qn), None) if ff is not None else None
        return (rel, found) if found is not None else None

    # 1. definitions: SCIP symbol -> our declaration, by position and name (any document of the project);
    # in a partial file, a definition with no tree-sitter declaration becomes one (the checker's).
    per_document: list[tuple[str, Iterator[tuple[str, SymbolFact, bool]]]] = []
    for doc in documents:
        ff = facts_of(doc.relative_path)
        if ff is not None:
            decls.setdefault(doc.relative_path, FileDeclarations(ff.symbols, SOURCE_KINDS))
            per_document.append((doc.relative_path, _document_definitions(doc, ff, files, source_of, defined)))
    synthesized = first_definitions(per_document, defined)
    for path, extra_decls in synthesized.items():  # enclosing lookups see them too
        decls[path] = FileDeclarations((*files[path].symbols, *extra_decls), SOURCE_KINDS)
    known = list(known)
    declared = known_declarations or {}

    def symbols_of(path: str) -> tuple[SymbolFact, ...]:
        ff = facts_of(path)
        symbols = (*(ff.symbols if ff is not None else ()), *declared.get(path, ()))
        decls.setdefault(path, FileDeclarations(symbols, SOURCE_KINDS))
        return symbols

    for t, decl in kept_definitions(known, symbols_of, lambda t: t.symbol in defined):
        defined[t.symbol] = (t.path, decl)
    typed_callable = {t.symbol for t in known if t.callable}
    type_names = {t.symbol: t.type_name for t in known if t.type_name}
    stated = {t.symbol: t.stated for t in known}
    for doc in documents:
        for info in doc.symbols:
            stated[canonical_symbol(info.symbol)] = stated_of(info)
            if info.documentation:
                if holds_callable(info.documentation[0]):
                    typed_callable.add(canonical_symbol(info.symbol))
                elif named := named_type(info.documentation[0]):
                    type_names[canonical_symbol(info.symbol)] = named

    # 2. uses in the corpus's own documents, document by document in path order
    uses: list[ScipUse] = []
    external: list[CoveredSite] = []
    counts: list[tuple[str, int]] = []
    hooks = TypescriptHooks(local_target, decls)
    for doc in (d for d in documents if d.relative_path in files):
        path = doc.relative_path
        counts.append((path, document_uses(hooks, path, doc, source_of(path), decls[path], defined, uses, external)))
        uses += document_relations(hooks, path, doc, defined)
    return RepositoryTsFacts(
        analyzer_version=f"{index.metadata.tool_name} {index.metadata.tool_version}".strip(),
        uses=tuple(uses),
        external=tuple(external),
        documents=len(counts),
        occurrences=sum(n for _p, n in counts),
        declarations=tuple((p, d) for p, ds in sorted(synthesized.items()) for d in ds),
        definitions=tuple(
            sorted(
                (
                    TsDefinition(
                        sym,
                        p,
                        d.qualified_name,
                        d.kind,
                        d.start_line,
                        d.start_col,
                        callable=d.kind == "variable" and sym in typed_callable,
                        type_name=type_names.get(sym, "") if d.kind == "variable" else "",
                        stated=stated.get(sym, ""),
                    )
                    for sym, (p, d) in defined.items()
                ),
                key=lambda t: (t.path, t.symbol),
            )
        ),
        document_occurrences=tuple(counts),
    )


_DECLARED = re.compile(r"^(?:var|let|const) [^:]+: ", re.S)
_BRACKETS = {"(": ")", "<": ">", "{": "}", "[": "]"}


def _past_group(text: str, start: int) -> int:
    """The index just past the bracket group opening at ``start`` (len(text) when it never closes)."""
    stack: list[str] = []
    for i in range(start, len(text)):
        char = text[i]
        if char in _BRACKETS:
            stack.append(_BRACKETS[char])
        elif stack and char == stack[-1] and not (char == ">" and text[i - 1] == "="):
            stack.pop()
            if not stack:
                return i + 1
    return len(text)


_NAMED = re.compile(r"([A-Za-z_$][\w$]*)(?:<|$)")
_NOT_NAMES = frozenset({"string", "number", "boolean", "bigint", "symbol", "object", "any", "unknown", "never"})


def _printed_type(hover: str) -> str:
    body = hover.strip().removeprefix("```ts").removesuffix("```").strip()
    match = _DECLARED.match(body)
    return body[match.end() :].strip() if match is not None else ""


def named_type(hover: str) -> str:
    """The name of the named type a variable's hover gives it (``CreateApi`` of ``var x: CreateApi<"a">``), or ""."""
    match = _NAMED.match(_printed_type(hover))
    return match.group(1) if match is not None and match.group(1) not in _NOT_NAMES else ""


def holds_callable(hover: str) -> bool:
    """Whether a variable's hover text, as scip-typescript writes it (the checker's printed declaration,
    ```ts var x: T```), gives it a function or constructor type: ``(a) => b``, ``<T>(a: T) => T``,
    ``new (…) => X``, ``typeof SomeClass``, or an object type whose first member is a call or construct
    signature. A named type (``Ctor``, ``PayloadActionCreator<…>``) is not decided here."""
    text = _printed_type(hover)
    if text.startswith(("typeof ", "new (", "new <", "abstract new (")):
        return True
    if text.startswith("{"):
        inner = text[1:].lstrip()
        return inner.startswith(("(", "<", "new (", "new <"))
    at = 0
    if text.startswith("<"):
        at = _past_group(text, 0)
    if text[at : at + 1] != "(":
        return False
    return text[_past_group(text, at) :].lstrip().startswith("=>")


def _lost_declaration(path: str, occ: Occurrence, member: str, cmap: ColumnMap, source: bytes) -> SymbolFact | None:
    """The checker's declaration at a definition tree-sitter lost (its line did not parse)."""
    parsed = parse_symbol(occ.symbol)
    if parsed is None or not parsed.descriptors:
        return None
    text = line_of(source, occ.range[0])
    if not names_at(text, occ, cmap, member.rsplit(".", 1)[-1]):
        return None  # a name the indexer made up (a destructuring pattern's parts): not a declaration in the source
    span = occ.enclosing_range or occ.range
    start = (span[0] + 1, cmap.byte_col(span[0], span[1]))
    end = (span[2] + 1, cmap.byte_col(span[2], span[3]))
    return analyzer_declaration(module_name(path), member, parsed.descriptors[-1].suffix, text, start, end)


def _is_interface_member(target: tuple[str, SymbolFact], decls: Mapping[str, FileDeclarations]) -> bool:
    path, decl = target
    fd = decls.get(path)
    owner = (
        fd.declared_at(decl.start_line, decl.start_col, decl.qualified_name.rsplit(".", 2)[-2])
        if fd is not None and decl.qualified_name.count(".") >= 1
        else None
    )
    return owner is not None and owner.kind == "interface"


# -- bind: stable keys, cross-repository providers --------------------------------------------------


class ModuleTable:
    """Every registered repository's files and the npm package names they provide."""

    def __init__(self, corpus: Corpus) -> None:
        self.files: dict[tuple[str, str], FileFacts] = {}
        self.providers: dict[str, list[tuple[str, str]]] = {}  # package name -> [(repository, directory)]
        for repo in corpus.repositories:
            for ff in repo.files:
                self.files[(repo.name, ff.path)] = ff
            for d, name in package_dirs(repo.root, [ff.path for ff in repo.files]).items():
                self.providers.setdefault(name, []).append((repo.name, d))
        self._qn: dict[tuple[str, str], dict[str, SymbolFact]] = {}
        # Hook (issue 11): a provider's published build (node_modules/<name>) maps to its source declarations.
        self.published = PublishedBuilds(
            {r.name: r.root for r in corpus.repositories}, lambda repo, path: self.files.get((repo, path))
        )

    def declaration(self, repo: str, path: str, qn: str) -> SymbolFact | None:
        table = self._qn.get((repo, path))
        if table is None:
            ff = self.files.get((repo, path))
            table = {}
            for s in ff.symbols if ff is not None else ():
                table.setdefault(s.qualified_name, s)
            self._qn[(repo, path)] = table
        return table.get(qn)


_EDGE_OF_USE = {
    "call": EdgeKind.CALLS_DIRECT,
    "import": EdgeKind.IMPORTS_SYMBOL,
    "export": EdgeKind.EXPORTS,
    "reexport": EdgeKind.REEXPORTS,
    "type": EdgeKind.TYPE_USES,
    "extends": EdgeKind.EXTENDS,
    "implements": EdgeKind.IMPLEMENTS,
    "override": EdgeKind.OVERRIDES,
}


def edge_kind(use: str, target_kind: str) -> EdgeKind:
    if use == "callback":
        return EdgeKind.PASSES_AS_CALLBACK if target_kind in _CALLABLE else EdgeKind.REFERENCES
    if use == "call" and target_kind not in _CALLABLE and target_kind != "class":
        return EdgeKind.REFERENCES
    return _EDGE_OF_USE.get(use, EdgeKind.REFERENCES)


_TYPE_KINDS = frozenset({"type", "interface", "class", "enum"})


def _callable_type_names(corpus: Corpus, repo: str) -> dict[str, bool]:
    """Type names of the repository declared once, each with whether its values are callable (a type alias of a
    function type, an interface with a call signature...: the extractor's mark); a name declared twice is
    False, so a printed name only marks a variable callable when it can mean one declaration."""
    seen: dict[str, bool] = {}
    for facts in (r for r in corpus.repositories if r.name == repo):
        for ff in facts.files:
            for sym in ff.symbols:
                if sym.kind in _TYPE_KINDS:
                    seen[sym.name] = sym.name not in seen and sym.callable
    return seen


def _provided_declaration(u: ScipUse, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
    """The declaration of the one registered package providing a foreign use: in its source, else through its
    published build (EXACT_PACKAGE_MAPPED); None with the reason recorded when neither has it."""
    modules: ModuleTable = bound.modules
    corpus, repo = bound.corpus, bound.repo
    target_repo, directory = provider
    target_path = f"{directory}/{u.file}" if directory else u.file
    qn = module_name(target_path) + (f".{u.member}" if u.member else "")
    decl = modules.declaration(target_repo, target_path, qn)
    if decl is None and (target_repo, target_path) not in modules.files:
        decl = module_declaration(corpus, target_repo, target_path, qn)
    if decl is None and is_declaration(u.file):  # hook (issue 11): a published build -> its source
        mapped = modules.published.map(repo, u.path, u.package, u.file, u.member, u.use, (target_repo, directory))
        if isinstance(mapped, NotMapped):
            # named by the declaration's own name, as every unresolved use is: answers about a symbol of that
            # name (each candidate's, with its file as the package) then know they may miss it
            wanted = [(qn, p) for p, qn in mapped.candidates] or [(u.member or u.file, u.package)]
            for qualified, package in wanted:
                name = qualified.rsplit(".", 1)[-1]
                bound.unresolved(u, source, name=name, reason=mapped.reason, package=package, detail=mapped.detail)
            return None
        decl = mapped.declaration
        key = corpus.key_of(target_repo, mapped.path, decl.qualified_name, decl.kind)
        return BoundTarget(
            target_repo, key, decl.kind, Confidence.EXACT_PACKAGE_MAPPED, Provenance.TYPESCRIPT_PROJECT_REFERENCE
        )
    if decl is None:
        reason = (
            "DECLARATION_SOURCE_NOT_MAPPED"
            if u.file.endswith((".d.ts", ".d.mts", ".d.cts"))
            else "PROVIDER_SOURCE_UNAVAILABLE"
        )
        detail = f"{target_repo} has no declaration {qn} in {target_path}"
        bound.unresolved(u, source, name=u.member or u.file, reason=reason, package=u.package, detail=detail)
        return None
    return BoundTarget(target_repo, corpus.key_of(target_repo, target_path, decl.qualified_name, decl.kind), decl.kind)


def module_declaration(corpus: Corpus, repo: str, path: str, qn: str) -> SymbolFact | None:
    """A provider declaration in a file of the other language (a ``.js`` provider for a ``.ts`` consumer)."""
    root = next((r.root for r in corpus.repositories if r.name == repo), None)
    full = Path(root, path) if root else None
    if full is None or not full.is_file() or language_of(path) == corpus.language:
        return None
    ff = extract(path, full.read_bytes(), package_for(path, frozenset()))
    return next((s for s in ff.symbols if s.qualified_name == qn), None)


# -- the pass over a corpus ---------------------------------------------------------------------------


def cache_key(repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], analyzer_identity: str) -> bytes:
    """Adapter and analyzer identity + every file's content the checker could read for this run: the
    corpus files, the repository's sources of the other language (TS and JS import each other) and every
    tsconfig/jsconfig of the repository (with the bases they extend)."""
    h = hashlib.blake2b(digest_size=20)
    for part in ("scip-ts", ADAPTER_VERSION, analyzer_identity, repo.name, repo.root):
        h.update(part.encode())
        h.update(b"\0")
    for path, digest in projects_mod.config_inputs(repo.root):
        h.update(f"config\0{path}\0{digest}\n".encode())
    # the other language's files: every source the checker can read that is not one of this corpus's files
    for path, digest in projects_mod.source_inputs(repo.root, {ff.path for ff in repo.files}):
        h.update(f"source\0{path}\0{digest}\n".encode())
    for name in sorted(hashes):
        for path, digest in sorted(hashes[name].items()):
            h.update(f"{name}\0{path}\0{digest}\n".encode())
    return h.digest()


def analyze_repository(repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryTsFacts:
    """Run scip-typescript over one repository's files of the corpus's language, project by project, and join."""
    files = sorted(ff.path for ff in repo.files if ff.parsed and not ff.path.endswith(".d.ts"))
    if not files:
        return RepositoryTsFacts(analyzer_version=f"{ANALYZER} {PINNED_VERSION}")
    root = Path(repo.root)
    projects = plan(root, files, timeout=timeout)
    index = run_index(root, files, timeout=timeout, projects=projects)
    facts = join_repository(index, repo, projects.output_redirects(str(root)), projects.files(str(root)))
    return msgspec.structs.replace(facts, units=file_units(root, files))


def file_units(root: Path, files: Iterable[str]) -> tuple[FileUnits, ...]:
    """The top-level statements of ``files`` (what the next incremental run compares an edit with)."""
    return read_file_units(root, files, units_of, FileUnits)


def bind(facts: RepositoryTsFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> ExactOutcome:
    """The route's binding with TypeScript's hooks (``adapter.ADAPTER.bind``)."""
    return route_bind(facts, repo, corpus, modules, TypescriptHooks())
