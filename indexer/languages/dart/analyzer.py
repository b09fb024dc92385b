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
from collections.abc import Mapping
from pathlib import Path

import msgspec

from indexer import children
from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import EdgeFact, FileFacts, Site, SymbolFact, UnresolvedFact
from indexer.languages.dart import sites as S
from indexer.languages.dart.modules import LANGUAGE, package_of
from indexer.languages.dart.resolve import edge_kind
from indexer.languages.npm_tool import cause
from indexer.languages.spec import AnalyzerFailed, ExactAdapter, ExactOutcome
from indexer.scip.decode import Document, Index, decode_index
from indexer.scip.join import ColumnMap, CoveredSite, FileDeclarations, parse_symbol
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

ANALYZER = "scip-dart"
PUB_PACKAGE = "scip_dart"
PINNED_VERSION = "1.6.2"  # the newest on the pub site when this was written; activation is the user's step
ADAPTER_VERSION = "scip-dart-join-1"  # part of the cache key: bump on any change to the joined output
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


class DartUse(msgspec.Struct, array_like=True, frozen=True):
    """One resolved use: where (the site), from which declaration, how, and to what."""

    path: str
    line: int
    col: int
    source_qn: str
    source_kind: str
    use: str  # the site kind: call | callback | ref | type | extends | with | implements | on | show | override
    how: str = ""  # a show site's "import" | "export"
    target_path: str = ""  # "" = defined outside this repository: see package/path/member
    target_qn: str = ""
    target_kind: str = ""
    package: str = ""
    namespace: str = ""  # the file path under the package root
    member: str = ""  # dotted member path, constructors as ``new`` or their name


class RepositoryDartFacts(msgspec.Struct, frozen=True):
    """The joined analyzer output of one repository (what the fact cache stores)."""

    analyzer_version: str
    uses: tuple[DartUse, ...] = ()
    external: tuple[CoveredSite, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()  # (package directory, why it was not analysed)
    packages: int = 0


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
    uses: list[DartUse] = []
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
        problems=tuple(problems),
        packages=len(dirs) - len(problems),
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


def _target_of(found: tuple[str, SymbolFact]) -> tuple[str, str, str]:
    """(path, qualified name, kind) of a declaration of this repository, as a use names its target."""
    return found[0], found[1].qualified_name, found[1].kind


def _overrides(path: str, doc: Document, defined: Mapping[str, tuple[str, SymbolFact]]) -> list[DartUse]:
    """Members overriding or implementing another: the relationships on one document's definitions."""
    out: list[DartUse] = []
    for info in doc.symbols:
        child = defined.get(info.symbol)
        if child is None or child[1].kind not in ("method", "getter", "setter", "field"):
            continue
        decl = child[1]
        for rel in info.relationships:
            parent = defined.get(rel.symbol)
            if parent is None or not rel.is_implementation:
                continue
            site = (path, decl.start_line, decl.start_col, decl.qualified_name, decl.kind, "override", "")
            out.append(DartUse(*site, *_target_of(parent)))
    return out


def join_index(index: Index, repo: RepositoryFacts, package_dir: str) -> RepositoryDartFacts:
    """Tie one package's index to the repository's declarations and sites (repository-local, cacheable)."""
    prefix = f"{package_dir}/" if package_dir else ""
    files: dict[str, FileFacts] = {ff.path: ff for ff in repo.files if ff.parsed}
    decls = {p: FileDeclarations(ff.symbols, SOURCE_KINDS) for p, ff in files.items()}
    sites: dict[tuple[str, int, int], Site] = {}
    for path, ff in files.items():
        for site in ff.sites:
            if site.kind != S.TYPED:
                sites.setdefault((path, site.line, site.col), site)
    root = Path(repo.root)
    docs = [(prefix + d.relative_path, d) for d in index.documents if prefix + d.relative_path in files]
    cmaps = {}
    for path, doc in docs:
        try:
            source = (root / path).read_bytes()
        except OSError:
            source = b""
        # Dart offsets count UTF-16 code units; a document that says otherwise is taken at its word
        cmaps[path] = ColumnMap(source, {1: "utf-8", 3: "utf-32"}.get(doc.position_encoding, "utf-16"))
    defined: dict[str, tuple[str, SymbolFact]] = {}
    for path, doc in docs:
        for occ in doc.occurrences:
            if not occ.is_definition or occ.symbol in defined:
                continue
            target = _symbol_target(occ.symbol)
            if target is None:
                continue
            line0, col = occ.range[0], cmaps[path].byte_col(occ.range[0], occ.range[1])
            name = target[2].rsplit(".", 1)[-1]
            found = decls[path].declared_at(line0 + 1, col, name)
            if found is None and name == "new":  # an unnamed constructor is defined on its class's name
                inner = decls[path].enclosing(line0 + 1, col)
                found = inner if inner is not None and inner.qualified_name == target[2] else None
            if found is not None:
                defined[occ.symbol] = (path, found)
    uses: list[DartUse] = []
    external: list[CoveredSite] = []
    for path, doc in docs:
        for occ in doc.occurrences:
            if occ.is_definition or not occ.symbol or occ.symbol.startswith("local "):
                continue
            line, col = occ.range[0] + 1, cmaps[path].byte_col(occ.range[0], occ.range[1])
            site = sites.get((path, line, col))
            if site is None:
                continue  # a name our sites do not hold (a local, a declaration's own name)
            source = decls[path].enclosing(line, col)
            src_qn = site.enclosing or (source.qualified_name if source is not None else "")
            src = (
                files[path].symbols[0]
                if not site.enclosing
                else next((s for s in files[path].symbols if s.qualified_name == site.enclosing), None)
            )
            if src is None:
                continue
            how = site.extra[2] if site.kind == S.SHOW and len(site.extra) > 2 else ""
            local = defined.get(occ.symbol)
            if local is not None:
                uses.append(DartUse(path, line, col, src_qn, src.kind, site.kind, how, *_target_of(local)))
                continue
            target = _symbol_target(occ.symbol)
            if target is None:
                continue
            if target[0].startswith("dart:"):
                external.append(CoveredSite(path, line, col, src.qualified_name, src.kind))
                continue
            uses.append(
                DartUse(
                    path,
                    line,
                    col,
                    src.qualified_name,
                    src.kind,
                    site.kind,
                    how,
                    package=target[0],
                    namespace=target[1],
                    member=target[2],
                )
            )
        uses += _overrides(path, doc, defined)
    meta = index.metadata
    return RepositoryDartFacts(
        analyzer_version=f"{meta.tool_name or ANALYZER} {meta.tool_version}".strip(),
        uses=tuple(uses),
        external=tuple(external),
        packages=1,
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


def bind(facts: RepositoryDartFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> ExactOutcome:
    """EXACT_TYPECHECKED edges for every use whose target one registered package declares."""
    out = ExactOutcome(repository=repo)
    for directory, why in facts.problems:
        out.unresolved.append(
            UnresolvedFact(
                name=directory or ".",
                reason="PACKAGE_NOT_LOADED",
                repository=repo,
                language=LANGUAGE,
                package=directory,
                detail=why,
            )
        )
    for c in facts.external:
        source = corpus.key_of(repo, c.path, c.source_qn, c.source_kind)
        if source is not None:
            out.covered.add((source, c.line, c.col))
            out.covered_positions.add((c.path, c.line, c.col))
    for u in facts.uses:
        source = corpus.key_of(repo, u.path, u.source_qn, u.source_kind)
        if source is None:
            continue
        target_repo = repo
        if u.target_path:
            target = corpus.key_of(repo, u.target_path, u.target_qn, u.target_kind)
            target_kind = u.target_kind
        else:
            places = modules.providers.get(u.package, [])
            own = [p for p in places if p[0] == repo]
            places = own[:1] or places
            if len(places) != 1:
                if u.use != "override":
                    out.unresolved.append(
                        UnresolvedFact(
                            name=u.member or u.namespace,
                            reason="AMBIGUOUS_PACKAGE_PROVIDER" if places else "DART_TARGET_NOT_INDEXED",
                            repository=repo,
                            path=u.path,
                            line=u.line,
                            col=u.col,
                            language=LANGUAGE,
                            source=source,
                            package=u.package,
                            detail=(f"package {u.package} is in " + ", ".join(sorted(r for r, _d in places)))
                            if places
                            else f"the analyzer resolved it into package {u.package}, which no repository registers",
                        )
                    )
                    out.covered.add((source, u.line, u.col))
                    out.covered_positions.add((u.path, u.line, u.col))
                continue
            target_repo, directory = places[0]
            path = f"{directory}/{u.namespace}" if directory else u.namespace
            found = modules.declared.get((target_repo, path), {}).get(u.member, []) if u.member else []
            if not u.member:
                target, target_kind = None, ""
            elif not found:
                out.unresolved.append(
                    UnresolvedFact(
                        name=u.member,
                        reason="DART_TARGET_NOT_INDEXED",
                        repository=repo,
                        path=u.path,
                        line=u.line,
                        col=u.col,
                        language=LANGUAGE,
                        source=source,
                        package=u.package,
                        detail=f"the analyzer resolved {u.package}/{u.namespace} {u.member}, which {target_repo} "
                        "does not declare in an indexed file",
                    )
                )
                out.covered.add((source, u.line, u.col))
                out.covered_positions.add((u.path, u.line, u.col))
                continue
            else:
                decl = _readable(found)
                target, target_kind = (corpus.key_of(target_repo, path, decl.qualified_name, decl.kind), decl.kind)
        if target is None:
            continue
        if u.use != "override":
            out.covered.add((source, u.line, u.col))
            out.covered_positions.add((u.path, u.line, u.col))
        if target_repo != repo:
            out.cross_repository += 1
        if u.use == "override":
            kind, provenance = EdgeKind.OVERRIDES, Provenance.DART_ANALYZER_DEF
        elif u.use == S.SHOW:
            kind = EdgeKind.IMPORTS_SYMBOL if u.how == "import" else EdgeKind.REEXPORTS
            provenance = Provenance.DART_ANALYZER_USE
        else:
            kind, provenance = edge_kind(u.use, target_kind, u.source_kind), Provenance.DART_ANALYZER_USE
        out.edges.append(
            EdgeFact(int(kind), source, target, int(Confidence.EXACT_TYPECHECKED), int(provenance), u.line, u.col)
        )
    return out


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


class ScipDartAdapter(ExactAdapter[RepositoryDartFacts]):
    """scip-dart behind the language seam (untested here: no Dart SDK on these machines)."""

    analyzer = ANALYZER
    facts_type = RepositoryDartFacts

    def install(self) -> str:
        return install()

    def executable(self) -> Path:
        return dart_executable()

    def version(self) -> str:
        return version()

    def identity(self) -> str:
        return identity()

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

    def bind(self, facts: RepositoryDartFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> ExactOutcome:
        return bind(facts, repo, corpus, modules)


ADAPTER = ScipDartAdapter()
