"""The exact Dart adapter: scip-dart (the Dart analyzer's resolution, as SCIP) per pub package, joined with tree-sitter.

UNTESTED HERE: no Dart SDK exists on these machines and none can be installed, so
the run of scip-dart has never happened in this project. What is tested: the
absence path (no ``dart`` on PATH, or ``$KIVGRAPH_DART`` naming nothing), which
degrades the repository to the CANDIDATE fallback with the reason
``no dart executable on PATH: Dart answers are CANDIDATE``; and the join and
bind below on a hand-encoded index written to the symbol scheme scip-dart
documents (``scip-dart pub <package> <version> <path>/<Type>#<member>().``,
constructors as ``<Type>#`<constructor>`().`` or ``<Type>#<name>().``).

The run (per package of the repository, a directory with a pubspec.yaml):
``dart --suppress-analytics pub global run scip_dart <package dir> --output
<temporary>/index.scip``, cwd a temporary directory, bounded by the timeout.
scip-dart reads ``.dart_tool/package_config.json`` of the package to resolve
imports; kivgraph never writes into a repository, so it never runs ``dart pub
get`` there: a package without that file is reported as not loaded, with the
reason. ``scip_dart`` must be activated in the pub cache (``dart pub global
activate scip_dart``); the pub site is not reachable from these machines, so
setup cannot do it here. ``pub global run`` of an activated package needs no
network, and nothing else is run.

The join: SCIP says what an occurrence refers to, the tree-sitter sites say how
it is used. An occurrence binds where our extractor has a site at the same
position (sites sit on the identifier, as SCIP occurrences do), so the syntactic
class (call, callback, type, extends...) is the site's and the target is the
analyzer's. Definition occurrences map a SCIP symbol to our declaration at that
position with that name; a symbol defined in another package maps by
(package name, file path under the package, member path). scip-dart gives
private declarations ``local`` symbols: uses of ``_name`` stay CANDIDATE.
SDK symbols (package ``dart:*``) settle their site with no edge. Method
``implementation`` relationships become OVERRIDES.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from indexer import children
from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import FileFacts, Site, SymbolFact, UnresolvedFact
from indexer.languages.dart import sites as S
from indexer.languages.dart.modules import LANGUAGE, package_of
from indexer.languages.dart.resolve import edge_kind
from indexer.languages.npm_tool import cause
from indexer.languages.spec import AnalyzerFailed
from indexer.scip.decode import Document, Index, Relationship, decode_index
from indexer.scip.join import ColumnMap, CoveredSite, FileDeclarations, parse_symbol
from indexer.scip.route import (
    EXTERNAL,
    Binding,
    BoundTarget,
    Foreign,
    ScipAdapter,
    ScipFacts,
    ScipLanguage,
    ScipUse,
    Target,
    UseSite,
    document_relations,
    document_uses,
    first_definitions,
    local,
    source_reader,
)
from snapshot_format.vocab import EdgeKind, Provenance

ANALYZER = "scip-dart"
PUB_PACKAGE = "scip_dart"
PINNED_VERSION = "1.6.2"  # the newest on the pub site when this was written; activation is the user's step
ADAPTER_VERSION = "scip-dart-join-2"  # part of the cache key: bump on any change to the joined output
DART_ENV = "KIVGRAPH_DART"
ABSENT = "no dart executable on PATH: Dart answers are CANDIDATE"

SOURCE_KINDS = frozenset(
    {
        "module",
        "class",
        "mixin",
        "enum",
        "extension",
        "extension_type",
        "type_alias",
        "function",
        "method",
        "getter",
        "setter",
        "constructor",
        "field",
        "variable",
        "enum_member",
    }
)
_CTOR = "<constructor>"


def dart_executable() -> Path:
    """The dart command: ``$KIVGRAPH_DART`` when set, else ``dart`` on PATH; AnalyzerFailed says why not."""
    override = os.environ.get(DART_ENV)
    if override:
        if not Path(override).is_file() or not os.access(override, os.X_OK):
            raise AnalyzerFailed(f"{DART_ENV}={override} is no executable: Dart answers are CANDIDATE")
        return Path(override)
    found = shutil.which("dart")
    if not found:
        raise AnalyzerFailed(ABSENT)
    return Path(found)


def identity() -> str:
    """What the cache key knows of the analyzer: the dart binary (path, size, mtime) and the pinned scip_dart."""
    dart = dart_executable().resolve()
    st = dart.stat()
    return f"{ANALYZER}|{PINNED_VERSION}|{dart}|{st.st_size}|{st.st_mtime_ns}"


def probe(timeout: float = 60) -> str:
    """A detail line for doctor: scip_dart's version, or AnalyzerFailed with the reason."""
    dart = dart_executable()
    try:
        code, out, err = children.run(
            [str(dart), "--suppress-analytics", "pub", "global", "run", PUB_PACKAGE, "--version"],
            timeout=timeout,
            env=_env(),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AnalyzerFailed(f"{ANALYZER} could not run: {exc}") from None
    if code != 0:
        raise AnalyzerFailed(
            f"{ANALYZER} is not usable ({cause(err.decode(errors='replace'))}); "
            f"activate it with `dart pub global activate {PUB_PACKAGE} {PINNED_VERSION}`"
        )
    return f"{ANALYZER} {out.decode(errors='replace').strip()} on {dart}"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop(DART_ENV, None)
    env["PUB_ENVIRONMENT"] = "kivgraph"
    return env


# -- facts ---------------------------------------------------------------------------------------------


# The joined output of one run: the route's facts (no units: Dart has no incremental pass); the packages
# scip-dart could not analyse are ``not_loaded`` ((package directory, why)), those it did ``parts``.
RepositoryDartFacts = ScipFacts[Any]


def package_dirs(repo: RepositoryFacts) -> dict[str, str]:
    """Package directory (repository-relative, "" = root) -> pub name, for the packages holding its files."""
    out: dict[str, str] = {}
    for ff in repo.files:
        directory, name = package_of(Path(repo.root), ff.path)
        if name:
            out.setdefault(directory, name)
    return out


def cache_key(repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], analyzer_identity: str) -> bytes:
    """Adapter and analyzer identity + every Dart file of the corpus + each package's pubspec and package config."""
    h = hashlib.blake2b(digest_size=20)
    for part in ("dart", ADAPTER_VERSION, analyzer_identity, repo.name, repo.root):
        h.update(part.encode() + b"\0")
    for directory in sorted(package_dirs(repo)):
        for name in ("pubspec.yaml", "pubspec.lock", ".dart_tool/package_config.json"):
            h.update(f"{directory}/{name}\0".encode())
            try:
                h.update(hashlib.sha256(Path(repo.root, directory, name).read_bytes()).digest())
            except OSError:
                h.update(b"-")
    for name in sorted(hashes):
        for path, digest in sorted(hashes[name].items()):
            h.update(f"{name}\0{path}\0{digest}\n".encode())
    return h.digest()


# -- running -------------------------------------------------------------------------------------------


def run_index(package_root: Path, *, timeout: float) -> Index:
    """Run scip-dart over one package (its package config must exist) and decode the index it writes."""
    dart = dart_executable()
    if not (package_root / ".dart_tool" / "package_config.json").is_file():
        raise AnalyzerFailed(
            f"{package_root} has no .dart_tool/package_config.json; run `dart pub get` there "
            "(kivgraph never writes into a repository)"
        )
    with tempfile.TemporaryDirectory(prefix="kivgraph-scip-dart-") as tmp:
        out = Path(tmp) / "index.scip"
        cmd = [
            str(dart),
            "--suppress-analytics",
            "pub",
            "global",
            "run",
            PUB_PACKAGE,
            str(package_root.resolve()),
            "--output",
            str(out),
        ]
        try:
            code, stdout, stderr = children.run(cmd, timeout=timeout, cwd=tmp, env=_env())
        except OSError as exc:
            raise AnalyzerFailed(f"{ANALYZER} could not start: {exc}") from None
        except subprocess.TimeoutExpired:
            raise AnalyzerFailed(f"{ANALYZER} timed out after {timeout:g}s") from None
        if code != 0:
            raise AnalyzerFailed(
                f"{ANALYZER} exited {code}: {cause(stderr.decode(errors='replace') or stdout.decode(errors='replace'))}"
            )
        if not out.is_file():
            raise AnalyzerFailed(f"{ANALYZER} wrote no index")
        try:
            return decode_index(out.read_bytes())
        except ValueError as exc:
            raise AnalyzerFailed(f"{ANALYZER} wrote an unreadable index: {exc}") from None


def analyze_repository(repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryDartFacts:
    """scip-dart once per package of the repository, joined; a package that cannot be analysed is a problem row."""
    dart_executable()  # absent: the whole repository stays on the fallback, with the reason
    dirs = package_dirs(repo)
    if not dirs:
        raise AnalyzerFailed(f"no pubspec.yaml governs the Dart files of {repo.name}: scip-dart needs a package")
    uses: list[ScipUse] = []
    external: list[CoveredSite] = []
    problems: list[tuple[str, str]] = []
    version = ""
    for directory in sorted(dirs):
        try:
            index = run_index(Path(repo.root, directory), timeout=timeout)
        except AnalyzerFailed as exc:
            if len(dirs) == 1:
                raise
            problems.append((directory, str(exc)[:300]))
            continue
        joined = join_index(index, repo, directory)
        version = version or joined.analyzer_version
        uses.extend(joined.uses)
        external.extend(joined.external)
    if len(problems) == len(dirs):
        raise AnalyzerFailed("no package of the repository could be analysed: " + "; ".join(p for _d, p in problems))
    return RepositoryDartFacts(
        analyzer_version=version or ANALYZER,
        uses=tuple(uses),
        external=tuple(external),
        not_loaded=tuple(problems),
        parts=len(dirs) - len(problems),
    )


# -- join ------------------------------------------------------------------------------------------------


def _symbol_target(symbol: str) -> tuple[str, str, str] | None:
    """(pub package, file path under it, dotted member path) of a scip-dart global symbol; None otherwise."""
    parsed = parse_symbol(symbol)
    if parsed is None or parsed.manager != "pub":
        return None
    if parsed.package.startswith("dart:"):
        return parsed.package, "", ""  # the SDK's: its descriptors name no file of ours
    path: list[str] = []
    members: list[str] = []
    for d in parsed.descriptors:
        if d.suffix == "/" and not members:
            path.append(d.name)
        elif d.suffix in ("#", ".", "()"):
            members.append("new" if d.name == _CTOR else d.name)
        else:
            return None  # a type parameter, a named parameter: never a declaration of ours
    if not path:
        return None
    return parsed.package, "/".join(path), ".".join(members)


class DartHooks(ScipLanguage):
    """Dart's hooks into the SCIP route. A join's instance holds the repository's tree-sitter sites (scip-dart's
    occurrences are classified by the site at their position, and its source is the site's enclosing name)."""

    language = LANGUAGE
    analyzer = ANALYZER

    def __init__(self, files: Mapping[str, FileFacts] | None = None) -> None:
        self.files = files or {}
        self.at: dict[tuple[str, int, int], Site] = {}
        for path, ff in self.files.items():
            for site in ff.sites:
                if site.kind != S.TYPED:
                    self.at.setdefault((path, site.line, site.col), site)

    def sites(self, path: str, source: bytes) -> Callable[[int, int], UseSite | None]:
        symbols = self.files[path].symbols if path in self.files else ()

        def site_at(line0: int, col: int) -> UseSite | None:
            site = self.at.get((path, line0 + 1, col))
            if site is None:
                return None  # a name our sites do not hold (a local, a declaration's own name)
            src = (
                (symbols[0] if symbols else None)
                if not site.enclosing
                else next((s for s in symbols if s.qualified_name == site.enclosing), None)
            )
            if src is None:
                return None
            how = site.extra[2] if site.kind == S.SHOW and len(site.extra) > 2 else ""
            return UseSite(site.kind, line0 + 1, col, source=src, how=how)

        return site_at

    def target(self, symbol: str, site: UseSite, found: tuple[str, SymbolFact] | None) -> Target | None:
        if found is not None:
            return local(found)
        target = _symbol_target(symbol)
        if target is None:
            return None
        if target[0].startswith("dart:"):
            return EXTERNAL
        return Foreign(*target)

    def relation(
        self, child: tuple[str, SymbolFact], rel: Relationship, parent: tuple[str, SymbolFact] | None, symbol: str
    ) -> tuple[str, bool, Target] | None:
        """Members overriding or implementing another."""
        if child[1].kind not in ("method", "getter", "setter", "field") or parent is None or not rel.is_implementation:
            return None
        return "override", False, local(parent)

    def providers(self, use: ScipUse, modules: ModuleTable) -> list[tuple[str, str]]:
        return modules.providers.get(use.package, [])

    def unprovided(self, use: ScipUse, source: str, bound: Binding) -> None:
        if use.final:
            detail = f"the analyzer resolved it into package {use.package}, which no repository registers"
            bound.unresolved(
                use, source, name=use.member or use.file, reason=NOT_INDEXED, package=use.package, detail=detail
            )

    def ambiguity(self, use: ScipUse, repositories: list[str]) -> str:
        return f"package {use.package} is in " + ", ".join(sorted(repositories))

    def declaration(self, use: ScipUse, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
        modules: ModuleTable = bound.modules
        target_repo, directory = provider
        if not use.member:
            return None
        path = f"{directory}/{use.file}" if directory else use.file
        found = modules.declared.get((target_repo, path), {}).get(use.member, [])
        if not found:
            detail = (
                f"the analyzer resolved {use.package}/{use.file} {use.member}, which {target_repo} "
                "does not declare in an indexed file"
            )
            bound.unresolved(use, source, name=use.member, reason=NOT_INDEXED, package=use.package, detail=detail)
            return None
        decl = _readable(found)
        return BoundTarget(
            target_repo, bound.corpus.key_of(target_repo, path, decl.qualified_name, decl.kind), decl.kind
        )

    def edge_kind(self, use: ScipUse, target_kind: str) -> EdgeKind:
        if use.use == "override":
            return EdgeKind.OVERRIDES
        if use.use == S.SHOW:
            return EdgeKind.IMPORTS_SYMBOL if use.how == "import" else EdgeKind.REEXPORTS
        return edge_kind(use.use, target_kind, use.source_kind)

    def provenance(self, use: ScipUse) -> Provenance:
        return Provenance.DART_ANALYZER_DEF if use.use == "override" else Provenance.DART_ANALYZER_USE

    def preamble(self, facts: ScipFacts[Any], bound: Binding, modules: Any) -> None:
        """A package scip-dart could not analyse."""
        for directory, why in facts.not_loaded:
            bound.out.unresolved.append(
                UnresolvedFact(
                    name=directory or ".",
                    reason="PACKAGE_NOT_LOADED",
                    repository=bound.repo,
                    language=LANGUAGE,
                    package=directory,
                    detail=why,
                )
            )


NOT_INDEXED = "DART_TARGET_NOT_INDEXED"


def _document_definitions(
    path: str, doc: Document, fd: FileDeclarations, cmap: ColumnMap, defined: Mapping[str, tuple[str, SymbolFact]]
) -> Iterator[tuple[str, SymbolFact, bool]]:
    """Each SCIP symbol the document defines (and no document before it) -> our declaration there."""
    for occ in doc.occurrences:
        if not occ.is_definition or occ.symbol in defined:
            continue
        target = _symbol_target(occ.symbol)
        if target is None:
            continue
        line0, col = occ.range[0], cmap.byte_col(occ.range[0], occ.range[1])
        name = target[2].rsplit(".", 1)[-1]
        found = fd.declared_at(line0 + 1, col, name)
        if found is None and name == "new":  # an unnamed constructor is defined on its class's name
            inner = fd.enclosing(line0 + 1, col)
            found = inner if inner is not None and inner.qualified_name == target[2] else None
        if found is not None:
            yield occ.symbol, found, False


def join_index(index: Index, repo: RepositoryFacts, package_dir: str) -> RepositoryDartFacts:
    """Tie one package's index to the repository's declarations and sites (repository-local, cacheable)."""
    prefix = f"{package_dir}/" if package_dir else ""
    files: dict[str, FileFacts] = {ff.path: ff for ff in repo.files if ff.parsed}
    decls = {p: FileDeclarations(ff.symbols, SOURCE_KINDS) for p, ff in files.items()}
    source_of = source_reader(Path(repo.root))
    hooks = DartHooks(files)
    docs = [(prefix + d.relative_path, d) for d in index.documents if prefix + d.relative_path in files]
    defined: dict[str, tuple[str, SymbolFact]] = {}
    first_definitions(
        (
            (path, _document_definitions(path, doc, decls[path], ColumnMap(source_of(path), hooks.unit(doc)), defined))
            for path, doc in docs
        ),
        defined,
    )
    uses: list[ScipUse] = []
    external: list[CoveredSite] = []
    for path, doc in docs:
        document_uses(hooks, path, doc, source_of(path), decls[path], defined, uses, external)
        uses += document_relations(hooks, path, doc, defined)
    meta = index.metadata
    return RepositoryDartFacts(
        analyzer_version=f"{meta.tool_name or ANALYZER} {meta.tool_version}".strip(),
        uses=tuple(uses),
        external=tuple(external),
        parts=1,
    )


# -- bind ------------------------------------------------------------------------------------------------


class ModuleTable:
    """Registered Dart packages: pub name -> (repository, package directory), and declarations by file."""

    def __init__(self, corpus: Corpus) -> None:
        self.providers: dict[str, list[tuple[str, str]]] = {}
        self.declared: dict[tuple[str, str], dict[str, list[SymbolFact]]] = {}
        for repo in corpus.repositories:
            for directory, name in sorted(package_dirs(repo).items()):
                self.providers.setdefault(name, []).append((repo.name, directory))
            for ff in repo.files:
                table = self.declared.setdefault((repo.name, ff.path), {})
                for s in ff.symbols:
                    table.setdefault(s.qualified_name, []).append(s)


def _readable(candidates: list[SymbolFact]) -> SymbolFact:
    """Of a getter/setter/field sharing a name, the one a read names (a setter only when it is all there is)."""
    return next((s for s in candidates if s.kind != "setter"), candidates[0])


def install() -> str:
    """Setup's line: scip_dart is activated by the user with their Dart SDK (pub is not reachable here)."""
    try:
        dart = dart_executable()
    except AnalyzerFailed as exc:
        return f"{ANALYZER}: skipped ({exc}; no Dart SDK can be installed on this machine)"
    return (
        f"{ANALYZER}: dart found at {dart}; activate the analyzer with "
        f"`dart pub global activate {PUB_PACKAGE} {PINNED_VERSION}` (kivgraph checks it with `kivgraph doctor`)"
    )


def version() -> str:
    """scip_dart's version through the user's dart; AnalyzerFailed when dart or scip_dart is missing."""
    return probe()


class _DartTool:
    """The user's dart with scip_dart activated (setup cannot install them here)."""

    def install(self) -> str:
        return install()

    def executable(self) -> Path:
        return dart_executable()

    def run_version(self) -> str:
        return version()

    def identity(self) -> str:
        return identity()


class ScipDartAdapter(ScipAdapter[RepositoryDartFacts]):
    """scip-dart behind the language seam, on the SCIP route (untested here: no Dart SDK on these machines)."""

    analyzer = ANALYZER
    facts_type = RepositoryDartFacts
    hooks = DartHooks()
    tool = _DartTool()

    def probe(self) -> str:
        return probe()

    def modules(self, corpus: Corpus) -> ModuleTable:
        return ModuleTable(corpus)

    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        return cache_key(repo, hashes, identity)

    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryDartFacts:
        return analyze_repository(repo, corpus, timeout=timeout)


ADAPTER = ScipDartAdapter()
bind = ADAPTER.bind  # the route's binding with Dart's hooks
