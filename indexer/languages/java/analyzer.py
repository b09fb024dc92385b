"""The exact Java adapter: javac's own attribution (scip-java's SemanticDB plugin) in batch, joined with tree-sitter.

One ``javac`` per repository over all its Java files, with the SemanticDB compiler plugin that ships inside
scip-java (``-Xplugin:semanticdb``), then ``scip-java index-semanticdb`` turns the SemanticDB files into one
SCIP index. Everything is written to a private temporary directory (``-d``, ``-targetroot``), never into
the repository; annotation processors are off (``-proc:none``) and javac attributes every file even when some
do not compile (``-XDshould-stop.ifError=FLOW``): a use javac could not attribute gets no symbol and stays
on the CANDIDATE fallback, and the run's note says how many errors javac reported.

The classpath: the build files (``build.py``: every ``pom.xml``, ``build.gradle``) name the repository's
dependencies. Those a registered repository builds (its ``groupId:artifactId``) are that repository's
sources, put on javac's ``-sourcepath``: javac then reads the provider's declarations from source, and the
SemanticDB plugin also writes the provider files it read, with their definitions, so a use binds to the
very overload javac chose. The other dependencies are resolved from the local Maven repository by Maven
itself (``mvn dependency:build-classpath`` over a generated pom in the temporary directory, offline unless
``[java] allow_network``); one that is not there is named in the run's note.

Joining (``join_repository``, repository-local and cached): each occurrence is classified by the
tree-sitter node at its position (call, new, type, extends, implements, import, annotation, method
reference, field reference) and attributed to its enclosing declaration; its target is the declaration its
definition occurrence falls in (this repository's or a provider's file javac read). SCIP relationships of
a method (``is_implementation``) are IMPLEMENTS (the parent is an interface's method) or OVERRIDES edges.
A symbol of the JDK or of a jar settles its site without an edge.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tree_sitter import Node, Parser

from indexer import children
from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import FileFacts, SymbolFact, UnresolvedFact
from indexer.languages.java import build
from indexer.languages.java.extract import TS_LANGUAGE, explicit_constructor_call, extract, last_identifier
from indexer.languages.java.modules import package_declared
from indexer.languages.java.resolve import IMPLICIT_BY, TYPE_KINDS, arity
from indexer.languages.npm_tool import cache_root, cause, tail
from indexer.languages.spec import AnalyzerFailed, ExactOutcome
from indexer.scip.decode import Document, Index, Relationship, ScipDecodeError, decode_index
from indexer.scip.join import (
    METHOD,
    NAMESPACE,
    TERM,
    TYPE,
    ColumnMap,
    CoveredSite,
    FileDeclarations,
    ScipSymbol,
    parse_symbol,
)
from indexer.scip.route import (
    EXTERNAL,
    Binding,
    BoundTarget,
    Foreign,
    Local,
    ScipAdapter,
    ScipFacts,
    ScipLanguage,
    ScipUse,
    Target,
    UseSite,
    document_relations,
    document_uses,
    first_definitions,
    source_reader,
)
from snapshot_format.vocab import EXTERNAL_OVERRIDE, EdgeKind, Provenance

LANGUAGE = "java"
ANALYZER = "scip-java"
PINNED_VERSION = "0.10.3"
MAVEN_ARTIFACT = f"com.sourcegraph:scip-java_2.13:{PINNED_VERSION}"
ADAPTER_VERSION = "scip-java-route-3"  # part of the cache key: bump on any change to the joined output
INSTALL_ENV = "KIVGRAPH_SCIP_JAVA"  # an install directory to use instead of the pinned one (tests: a missing one)
MAIN_CLASS = "com.sourcegraph.scip_java.ScipJava"
PLUGIN_JAR = "semanticdb-plugin.jar"

SOURCE_KINDS = frozenset({"module", "class", "interface", "enum", "method", "constructor"})
_CALLABLE = frozenset({"method", "constructor"})
_EXTERNAL_PACKAGES = frozenset({"jdk"})
_DEBIAN_PACKAGES = ("openjdk-17-jdk-headless", "maven")


# -- install, identity ------------------------------------------------------------------------------------


def install_dir() -> Path:
    override = os.environ.get(INSTALL_ENV)
    return Path(override) if override else cache_root() / "analyzers" / f"{ANALYZER}-{PINNED_VERSION}"


def executable() -> Path:
    """The SemanticDB plugin jar javac loads (next to it, ``lib/`` holds scip-java and its dependencies)."""
    return install_dir() / PLUGIN_JAR


def _tools() -> dict[str, str | None]:
    return {name: shutil.which(name) for name in ("java", "javac", "mvn")}


def _missing_tools() -> list[str]:
    return [name for name, where in _tools().items() if where is None]


def _install_debian_packages() -> str:
    """Install Debian's JDK and Maven when a tool is missing (root with apt-get only); what was done."""
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return ""
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *_DEBIAN_PACKAGES]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        subprocess.run(["apt-get", "update"], capture_output=True, timeout=600, check=False)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    return f"installed Debian's {' and '.join(_DEBIAN_PACKAGES)}; " if proc.returncode == 0 else ""


def _install_pom() -> str:
    group, artifact, version = MAVEN_ARTIFACT.split(":")
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>kivgraph</groupId><artifactId>scip-java-install</artifactId><version>1</version>"
        f"<packaging>pom</packaging><dependencies><dependency><groupId>{group}</groupId>"
        f"<artifactId>{artifact}</artifactId><version>{version}</version></dependency></dependencies></project>\n"
    )


def install(timeout: float = 1200) -> str:
    """Fetch scip-java and its dependencies from Maven Central with Maven, unless present; one status line."""
    label = f"{ANALYZER} {PINNED_VERSION}"
    target = install_dir()
    if executable().is_file() and (target / "lib").is_dir():
        missing = _missing_tools()
        if missing:
            return f"{label}: NOT installed ({', '.join(missing)} missing; Java stays on the CANDIDATE fallback)"
        return f"{label}: already installed in {target}"
    done = ""
    if _missing_tools():
        done = _install_debian_packages()
    missing = _missing_tools()
    if missing:
        return f"{label}: NOT installed ({', '.join(missing)} not found; Java stays on the CANDIDATE fallback)"
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / "pom.xml").write_text(_install_pom())
    cmd = [str(_tools()["mvn"]), "-q", "-B", "dependency:copy-dependencies", "-DoutputDirectory=lib"]
    try:
        proc = subprocess.run(cmd, cwd=partial, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"{label}: NOT installed (Maven timed out after {timeout:.0f}s)"
    if proc.returncode != 0:
        return f"{label}: NOT installed (Maven failed: {cause(proc.stdout + proc.stderr)})"
    main_jar = partial / "lib" / f"scip-java_2.13-{PINNED_VERSION}.jar"
    try:
        with zipfile.ZipFile(main_jar) as jar:
            (partial / PLUGIN_JAR).write_bytes(jar.read(PLUGIN_JAR))
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        return f"{label}: NOT installed (no {PLUGIN_JAR} in {main_jar.name}: {exc})"
    (partial / "pom.xml").unlink()
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return f"{label}: {done}installed in {target} (Maven Central)"


def identity() -> str:
    """What the fact cache knows of the analyzer: the pinned version, the plugin jar and the JDK (no process)."""
    jar = executable()
    try:
        st = jar.stat()
    except OSError:
        raise AnalyzerFailed(f"{ANALYZER} is not installed ({jar} missing; run `make setup`)") from None
    javac = _tools()["javac"]
    if javac is None:
        raise AnalyzerFailed("javac is not on PATH (install a JDK; `make setup` installs Debian's)")
    real = Path(javac).resolve()
    return f"{ANALYZER} {PINNED_VERSION} {st.st_size}:{st.st_mtime_ns} javac={real}"


def _java_cmd(*args: str) -> list[str]:
    return [str(_tools()["java"] or "java"), "-cp", str(install_dir() / "lib" / "*"), MAIN_CLASS, *args]


def version() -> str:
    identity()
    try:
        code, out, err = children.run(_java_cmd("--version"), timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AnalyzerFailed(f"{ANALYZER} does not run: {exc}") from None
    if code != 0:
        raise AnalyzerFailed(f"{ANALYZER} does not run: {tail((out + err).decode('utf-8', 'replace'))}")
    return out.decode().strip()


# -- the run ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Provider:
    """A registered repository whose artifact this one's build depends on, and where javac reads its sources."""

    repository: str
    root: Path
    coordinates: tuple[str, ...]
    source_roots: tuple[Path, ...]


def source_roots(repo: RepositoryFacts) -> list[Path]:
    """The directories a repository's packages are rooted at (``src/main/java``), most files first."""
    counts: dict[str, int] = {}
    for ff in repo.files:
        if not ff.parsed:
            continue
        directory = ff.path.rpartition("/")[0]
        depth = len(ff.package.split(".")) if ff.package else 0
        parts = directory.split("/") if directory else []
        if depth and parts[-depth:] != ff.package.split("."):
            continue
        root = "/".join(parts[: len(parts) - depth])
        counts[root] = counts.get(root, 0) + 1
    return [Path(repo.root, r) if r else Path(repo.root) for r in sorted(counts, key=lambda r: (-counts[r], r))]


def providers(repo: RepositoryFacts, corpus: Corpus) -> list[Provider]:
    """Registered repositories that build an artifact this repository's build files depend on (registry order)."""
    wanted = {d.coordinates for d in build.read_build(Path(repo.root)).external}
    out: list[Provider] = []
    for other in corpus.repositories:
        if other.name == repo.name:
            continue
        built = build.read_build(Path(other.root)).artifacts & wanted
        if built:
            out.append(Provider(other.name, Path(other.root), tuple(sorted(built)), tuple(source_roots(other))))
    return out


def local_repository() -> Path:
    """The local Maven repository: ``$MAVEN_LOCAL_REPOSITORY`` (handed to Maven as ``maven.repo.local``), else
    ``~/.m2/repository``."""
    return Path(os.environ.get("MAVEN_LOCAL_REPOSITORY") or Path.home() / ".m2" / "repository")


def installed_sources(d: build.Dependency) -> Path | None:
    """The ``-sources.jar`` of a dependency in the local Maven repository (``mvn install`` with sources, or what
    a repository publishing to Maven Central ships), if there."""
    if not d.version or "$" in d.version:
        return None
    jar = (
        local_repository()
        / d.group.replace(".", "/")
        / d.artifact
        / d.version
        / f"{d.artifact}-{d.version}-sources.jar"
    )
    return jar if jar.is_file() else None


def _unpack_sources(jar: Path, into: Path) -> None:
    """The ``.java`` files of a sources jar under ``into`` (entries that would land outside it are skipped)."""
    into.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar) as z:
        for entry in z.namelist():
            parts = entry.split("/")
            if not entry.endswith(".java") or entry.startswith("/") or ".." in parts:
                continue
            target = into.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(entry))


# The row of a bundle's dependency that a registered repository builds but that the job installed without sources.
UNLINKED_DEPENDENCY = "UNLINKED_DEPENDENCY"
INSTALLED = "maven:"  # a foreign target's package when javac read it from an installed sources jar: + group:artifact


def _classpath(info: build.BuildInfo, provided: Collection[str], tmp: Path, *, network: bool, timeout: float):
    """Jars of the dependencies no registered repository builds, from the local Maven repository: (jars, notes)."""
    wanted = [d for d in info.external if d.coordinates not in provided and d.version and "$" not in d.version]
    unversioned = [d.coordinates for d in info.external if d.coordinates not in provided and d not in wanted]
    notes = [f"no version could be read for {', '.join(unversioned)}: uses of it are not exact"] if unversioned else []
    if not network:
        # offline, Maven can only read the local repository: an artifact whose pom is not there fails at once
        local = local_repository()
        absent = [
            d
            for d in wanted
            if not (
                local / d.group.replace(".", "/") / d.artifact / d.version / f"{d.artifact}-{d.version}.pom"
            ).is_file()
        ]
        if absent:
            notes.append(
                "dependencies not in the local Maven repository: "
                + ", ".join(f"{d.coordinates}:{d.version}" for d in absent)
                + " (their uses are not exact)"
            )
            wanted = [d for d in wanted if d not in absent]
    mvn = _tools()["mvn"]
    if not wanted or mvn is None:
        if wanted:
            notes.append("Maven is not installed: dependencies are not on the classpath")
        return [], notes

    def resolve(deps: list[build.Dependency]) -> list[str] | None:
        work = tmp / f"classpath-{len(list(tmp.glob('classpath-*')))}"
        work.mkdir()
        xml = "".join(
            f"<dependency><groupId>{d.group}</groupId><artifactId>{d.artifact}</artifactId>"
            f"<version>{d.version}</version></dependency>"
            for d in deps
        )
        (work / "pom.xml").write_text(
            '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            "<groupId>kivgraph</groupId><artifactId>classpath</artifactId><version>1</version>"
            f"<dependencies>{xml}</dependencies></project>\n"
        )
        cmd = [mvn, "-q", "-B", *([] if network else ["-o"]), "dependency:build-classpath"]
        if os.environ.get("MAVEN_LOCAL_REPOSITORY"):
            cmd.append(f"-Dmaven.repo.local={local_repository()}")
        cmd.append(f"-Dmdep.outputFile={work / 'cp.txt'}")
        try:
            code, _out, _err = children.run(cmd, timeout=timeout, cwd=work)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if code != 0 or not (work / "cp.txt").is_file():
            return None
        return [p for p in (work / "cp.txt").read_text().strip().split(os.pathsep) if p]

    jars = resolve(wanted)
    if jars is not None:
        return jars, notes
    jars, missing = [], []
    for d in wanted[:40]:
        one = resolve([d])
        if one is None:
            missing.append(f"{d.coordinates}:{d.version}")
        else:
            jars += [j for j in one if j not in jars]
    if missing:
        where = "in the local Maven repository" if not network else "on Maven Central"
        notes.append(f"dependencies not found {where}: {', '.join(missing)} (their uses are not exact)")
    return jars, notes


@dataclass
class Run:
    index: Index
    errors: int
    notes: list[str]
    raw: bytes = b""  # the index as scip-java wrote it
    # A bundle build's installed dependencies without a sources jar: (INSTALLED + groupId:artifactId, why)
    unlinked: list[tuple[str, str]] = field(default_factory=list)
    # The installed dependencies' source files javac read (``installed``): absolute path as the index names it ->
    # (INSTALLED + groupId:artifactId, path inside the sources jar, its bytes).
    installed: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)


def run_index(
    repo: RepositoryFacts, provided: list[Provider], *, timeout: float, network: bool = False, installed: bool = False
) -> Run:
    """javac with the SemanticDB plugin over the repository's Java files, then ``index-semanticdb``.

    ``installed`` (a bundle build, ``Corpus.installed``): a dependency no registered repository builds whose
    sources jar the local Maven repository holds is read from those sources, as a registered provider's are, so
    that a use of it names the declaration by its package identity (``INSTALLED``: coordinates, path, name)."""
    identity()
    root = Path(repo.root).resolve()
    files = sorted(ff.path for ff in repo.files if ff.parsed and not ff.path.endswith("module-info.java"))
    if not files:
        return Run(Index(), 0, [])
    javac = _tools()["javac"]
    assert javac is not None  # identity() checked it
    with tempfile.TemporaryDirectory(prefix="kivgraph-java-") as tmp_name:
        tmp = Path(tmp_name)
        info = build.read_build(root)
        coordinates = {c for p in provided for c in p.coordinates}
        unpacked: dict[Path, str] = {}  # an installed dependency's sources -> INSTALLED + its coordinates
        unlinked: list[tuple[str, str]] = []
        for d in info.external if installed else ():
            jar = installed_sources(d) if d.coordinates not in coordinates else None
            if jar is not None:
                into = tmp / "installed" / d.group / d.artifact
                try:
                    _unpack_sources(jar, into)
                except (OSError, zipfile.BadZipFile) as exc:
                    raise AnalyzerFailed(f"the sources jar {jar} cannot be read: {exc}") from None
                unpacked[into.resolve()] = INSTALLED + d.coordinates
                coordinates.add(d.coordinates)  # off the classpath: javac reads its sources
            elif installed and d.coordinates not in coordinates and d.version:
                unlinked.append(
                    (
                        INSTALLED + d.coordinates,
                        f"{d.coordinates}:{d.version} has no sources jar in the local Maven repository: its uses are "
                        "settled without an edge and cannot be linked to a repository that builds it (install its "
                        "-sources.jar)",
                    )
                )
        jars, notes = _classpath(info, coordinates, tmp, network=network, timeout=timeout)
        sourcepath = [str(r.resolve()) for p in provided for r in p.source_roots] + [str(u) for u in unpacked]
        (tmp / "sdb").mkdir()
        (tmp / "classes").mkdir()
        args = [
            "-encoding",
            "UTF-8",
            "-proc:none",
            "-implicit:none",
            "-nowarn",
            "-Xmaxerrs",
            "100000",
            "-XDshould-stop.ifError=FLOW",
            "-d",
            str(tmp / "classes"),
            "-classpath",
            os.pathsep.join([str(executable()), *jars]),
            "-sourcepath",
            os.pathsep.join(sourcepath) if sourcepath else str(tmp / "none"),
            f"-Xplugin:semanticdb -sourceroot:{root} -targetroot:{tmp / 'sdb'}",
            *(str(root / f) for f in files),
        ]
        argfile = tmp / "javac.args"
        argfile.write_text("\n".join(_quote(a) for a in args))
        started = ANALYZER
        try:
            code, out, err = children.run([javac, f"@{argfile}"], timeout=timeout, cwd=tmp)
        except OSError as exc:
            raise AnalyzerFailed(f"javac could not start: {exc}") from None
        except subprocess.TimeoutExpired:
            raise AnalyzerFailed(f"javac timed out after {timeout:.0f}s") from None
        text = (out + err).decode("utf-8", "replace")
        errors = sum(1 for line in text.splitlines() if ": error: " in line)
        if not any((tmp / "sdb").rglob("*.semanticdb")):
            raise AnalyzerFailed(f"javac wrote no SemanticDB (exit {code}): {cause(text)}")
        cmd = _java_cmd(
            "index-semanticdb", "--no-emit-inverse-relationships", "--output", str(tmp / "index.scip"), str(tmp / "sdb")
        )
        try:
            code, out, err = children.run(cmd, timeout=timeout, cwd=tmp)
        except OSError as exc:
            raise AnalyzerFailed(f"{started} could not start: {exc}") from None
        except subprocess.TimeoutExpired:
            raise AnalyzerFailed(f"{started} index-semanticdb timed out after {timeout:.0f}s") from None
        if code != 0 or not (tmp / "index.scip").is_file():
            raise AnalyzerFailed(f"{started} index-semanticdb failed: {cause((out + err).decode('utf-8', 'replace'))}")
        raw = (tmp / "index.scip").read_bytes()
        try:
            index = decode_index(raw)
        except ScipDecodeError as exc:
            raise AnalyzerFailed(f"{started} wrote an unreadable index: {exc}") from None
        if errors:
            notes.append(f"javac reported {errors} errors; uses it could not attribute stay CANDIDATE")
        read: dict[str, tuple[str, str, bytes]] = {}
        for doc in index.documents if unpacked else ():
            where = _absolute(doc.relative_path)
            for base, marker in unpacked.items():
                if where.is_relative_to(base) and where.is_file():
                    read[str(where)] = (marker, where.relative_to(base).as_posix(), where.read_bytes())
        return Run(index, errors, notes, raw, installed=read, unlinked=unlinked)


def _absolute(relative_path: str) -> Path:
    """A document's file as an absolute path (scip-java names a file outside the source root by its absolute
    path, without the leading slash)."""
    return Path("/" + relative_path.lstrip("/")).resolve()


def _quote(arg: str) -> str:
    """One javac @argfile argument (quoted: paths may hold spaces)."""
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- syntax: what each occurrence is ----------------------------------------------------------------------


def _same(a: Node | None, b: Node | None) -> bool:
    return a is not None and b is not None and (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


_TYPE_WRAPPERS = frozenset({"scoped_type_identifier", "generic_type", "type_arguments", "type_list", "array_type"})


def classify(node: Node) -> str:
    """The use an identifier at an occurrence makes: import, call, new, callback, annotation, extends,
    implements, type or ref."""
    parent = node.parent
    if parent is None:
        return "ref"
    up: Node | None = parent
    while up is not None and up.type in ("scoped_identifier", "scoped_type_identifier", "generic_type"):
        up = up.parent
    if up is not None and up.type == "import_declaration":
        return "import"
    if (
        up is not None
        and up.type in ("marker_annotation", "annotation")
        and _same(up.child_by_field_name("name"), _top(node))
    ):
        return "annotation"
    if parent.type == "method_invocation" and _same(parent.child_by_field_name("name"), node):
        return "call"
    if parent.type == "explicit_constructor_invocation":
        return "new"  # this(...) or super(...): a constructor call
    if parent.type == "enum_constant" and _same(parent.child_by_field_name("name"), node):
        return "new"  # javac names the constructor an enum constant runs at the constant's name
    if parent.type == "method_reference" and parent.named_children and _same(parent.named_children[-1], node):
        return "callback" if len(parent.named_children) > 1 else "ref"
    if node.type == "type_identifier":
        cur = node
        while cur.parent is not None and cur.parent.type in _TYPE_WRAPPERS:
            if cur.parent.type == "type_arguments":
                return "type"
            cur = cur.parent
        holder = cur.parent
        if holder is not None:
            if holder.type == "object_creation_expression" and _same(holder.child_by_field_name("type"), cur):
                return "new"
            if holder.type in ("superclass", "extends_interfaces"):
                return "extends"
            if holder.type == "super_interfaces":
                return "implements"
        return "type"
    return "ref"


def _top(node: Node) -> Node:
    while node.parent is not None and node.parent.type in ("scoped_identifier",):
        node = node.parent
    return node


_PARSER = Parser(TS_LANGUAGE)


def _nodes(source: bytes) -> dict[tuple[int, int], Node]:
    """Identifier nodes by (row, byte column)."""
    out: dict[tuple[int, int], Node] = {}
    stack = [_PARSER.parse(source).root_node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "type_identifier") or (
            n.type in ("this", "super") and n.parent is not None and n.parent.type == "explicit_constructor_invocation"
        ):
            out[n.start_point] = n
        else:
            stack.extend(n.children)
    return out


# -- join: repository-local, cacheable, on the SCIP route ------------------------------------------------------

RepositoryJavaFacts = ScipFacts[Any]


def _definition_name(sym: ScipSymbol) -> str:
    last = sym.descriptors[-1]
    if last.name == "<init>" and len(sym.descriptors) > 1:
        return sym.descriptors[-2].name  # a constructor is declared under its class's name
    return last.name


def _definitions(doc: Document, ff: FileFacts, src: bytes) -> Iterator[tuple[str, SymbolFact, bool]]:
    """Each global symbol one document defines -> our declaration (by position and name)."""
    fd = FileDeclarations(ff.symbols, SOURCE_KINDS)
    cmap = ColumnMap(src, _UNIT)
    for occ in doc.occurrences:
        if not occ.is_definition or not occ.symbol or occ.symbol.startswith("local "):
            continue
        sym = parse_symbol(occ.symbol)
        if sym is None or not sym.descriptors or sym.descriptors[-1].suffix not in (TYPE, TERM, METHOD):
            continue
        decl = fd.declared_at(occ.range[0] + 1, cmap.byte_col(occ.range[0], occ.range[1]), _definition_name(sym))
        if decl is not None and decl.kind != "module":
            yield occ.symbol, decl, False


_UNIT = "utf-16"  # scip-java's documents do not say; javac counts UTF-16 units


class JavaHooks(ScipLanguage):
    """Java's hooks into the SCIP route. A join's instance holds what javac defined in the provider files it read
    (``provided``: symbol -> (repository, path, declaration)) and every joined file's declarations."""

    language = LANGUAGE
    analyzer = ANALYZER
    default_unit = _UNIT

    def __init__(
        self,
        provided: Mapping[str, tuple[str, str, SymbolFact]] | None = None,
        files: Mapping[tuple[str, str], FileFacts] | None = None,
    ) -> None:
        self.provided = provided or {}
        self.kinds: dict[tuple[str, str], dict[str, str]] = {}
        self.constructors: dict[tuple[str, str, str], list[SymbolFact]] = {}  # (repository, path, class) -> them
        for (repo, path), ff in (files or {}).items():
            self.kinds[(repo, path)] = {s.qualified_name: s.kind for s in ff.symbols}
            for s in ff.symbols:
                if s.kind == "constructor":
                    self.constructors.setdefault((repo, path, s.container), []).append(s)

    def sites(self, path: str, source: bytes) -> Callable[[int, int], UseSite | None]:
        nodes = _nodes(source)

        def site_at(line0: int, col: int) -> UseSite | None:
            node = nodes.get((line0, col))
            return UseSite(classify(node), line0 + 1, col) if node is not None else None

        return site_at

    def _target(self, repo: str, path: str, decl: SymbolFact, use: str) -> Target:
        if use == "new" and decl.kind == "class":
            # an anonymous subclass names its class, not the constructor it runs: the only one there is
            only = self.constructors.get((repo, path, decl.qualified_name), [])
            decl = only[0] if len(only) == 1 else decl
        if repo == "":
            return Local(path, decl.qualified_name, decl.kind)
        return Foreign(repo, path, f"{decl.kind}:{decl.qualified_name}")

    def target(self, symbol: str, site: UseSite, found: tuple[str, SymbolFact] | None) -> Target | None:
        where = ("", *found) if found is not None else self.provided.get(symbol)
        if where is not None:
            decl = where[2]
            if site.use in ("extends", "implements") and decl.kind not in TYPE_KINDS:
                return None  # a constructor's occurrence in a clause: the type's occurrence is the use
            return self._target(where[0], where[1], decl, site.use)
        sym = parse_symbol(symbol)
        if sym is None or not sym.descriptors or sym.descriptors[0].suffix != NAMESPACE:
            return None  # an error type javac could not attribute (no package): the fallback answers
        if sym.descriptors[-1].suffix == NAMESPACE:
            return None  # a package name
        return EXTERNAL  # the JDK's, a jar's: settled, no edge

    def relation(
        self, child: tuple[str, SymbolFact], rel: Relationship, parent: tuple[str, SymbolFact] | None, symbol: str
    ) -> tuple[str, bool, Target] | None:
        """A method overriding or implementing another (javac's own override relation)."""
        if child[1].kind != "method" or not rel.is_implementation:
            return None
        where = ("", *parent) if parent is not None else self.provided.get(symbol)
        if where is None:
            outside = _outside_method(symbol)
            return ("override", False, outside) if outside is not None else None
        if where[2].kind != "method":
            return None
        owner = self.kinds.get((where[0], where[1]), {}).get(where[2].container, "")
        return ("implements" if owner == "interface" else "override"), False, self._target(*where, "")

    def providers(self, use: ScipUse, modules: Any) -> list[tuple[str, str]]:
        # javac read the provider's file: the repository is known; "" is a method outside the graph; an installed
        # dependency's is each registered repository that builds its artifact
        if use.package.startswith(INSTALLED):
            table = modules if isinstance(modules, JavaModules) else None
            return [(r, "") for r in table.builders.get(use.package[len(INSTALLED) :], [])] if table else []
        return [(use.package, "")] if use.package else []

    def unprovided(self, use: ScipUse, source: str, bound: Binding) -> None:
        """A method overriding one outside the graph (the JDK's, a jar's): an ``EXTERNAL_OVERRIDE`` row on it, but
        for the methods whose implicit calls their ``IMPLICIT_CALL`` row names already."""
        if use.final:
            bound.settle(source, use.path, use.line, use.col)  # an installed dependency nobody registered
        name = use.source_qn.rsplit(".", 1)[-1].partition("(")[0]
        if use.use != "override" or name in IMPLICIT_METHODS:
            return
        installed = use.package.startswith(INSTALLED)
        base = (use.member.partition(":")[2] if installed else use.member).partition("(")[0]
        # a dependency's (a jar's, or an installed sources jar's nobody registered) as kivgraph index names it
        where = "" if installed else use.file
        owner = base.rpartition(".")[0] or base
        bound.out.unresolved.append(
            UnresolvedFact(
                name=name,
                reason=EXTERNAL_OVERRIDE,
                repository=bound.repo,
                path=use.path,
                line=use.line,
                col=use.col,
                language=LANGUAGE,
                source=source,
                package=where,
                detail=(
                    f"overrides {base} ({where or 'a dependency no registered repository builds'}), outside the graph: code there ({owner}'s own methods, or code "
                    "handed this object as one) may call it, and those calls are not in the graph"
                ),
            )
        )

    def declaration(self, use: ScipUse, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
        kind, _, qn = use.member.partition(":")
        path: str | None = use.file
        if use.package.startswith(INSTALLED) and isinstance(bound.modules, JavaModules):
            path = bound.modules.file_of(provider[0], use.file)  # the sources jar's path, under a source root
        if path is None:
            return None
        return BoundTarget(provider[0], bound.corpus.key_of(provider[0], path, qn, kind), kind)

    def edge_kind(self, use: ScipUse, target_kind: str) -> EdgeKind:
        return edge_kind(use.use, target_kind)

    def provenance(self, use: ScipUse) -> Provenance:
        if use.use == "implicit":
            return Provenance.JAVA_IMPLICIT_CALL
        relation = not use.final and use.use in ("override", "implements")
        return Provenance.JAVA_INDEXER_DEF if relation else Provenance.JAVA_INDEXER_USE

    def preamble(self, facts: ScipFacts[Any], bound: Binding, modules: Any) -> None:
        """What the run could not see (a dependency not in the local repository, javac's errors); a bundle's
        dependency installed without sources that a registered repository builds is a row naming no file: the
        repository's answers are then not complete."""
        for where, why in facts.not_loaded:
            coordinates = where[len(INSTALLED) :] if where.startswith(INSTALLED) else ""
            builders = modules.builders.get(coordinates, []) if isinstance(modules, JavaModules) else []
            if coordinates and not builders:
                continue  # a jar nobody registers: outside the graph, as on the classpath
            bound.out.notes.append(why)
            if builders:
                bound.out.unresolved.append(
                    UnresolvedFact(
                        name=coordinates.rpartition(":")[2],
                        reason=UNLINKED_DEPENDENCY,
                        repository=bound.repo,
                        path="",
                        language=LANGUAGE,
                        package=coordinates,
                        detail=f"{why}; {', '.join(builders)} builds it",
                    )
                )


# Methods Java calls without naming them: the resolver's ``IMPLICIT_CALL`` rows (resolve.py) name them; an
# override of one outside the graph is no ``EXTERNAL_OVERRIDE`` row on top.
IMPLICIT_METHODS = frozenset(name for name, _n in IMPLICIT_BY)


def _outside_method(symbol: str) -> Foreign | None:
    """A method of the JDK or of a jar (outside the graph) as a target bind leaves unprovided: ``file`` names its
    package (``jdk 17``; "" for a jar's, which scip-java names as it names the repository's own), ``member`` the
    method (``java.lang.Object.equals()``)."""
    sym = parse_symbol(symbol)
    if sym is None or len(sym.descriptors) < 2 or sym.descriptors[-1].suffix != METHOD:
        return None
    names = [d.name for d in sym.descriptors if d.suffix == NAMESPACE]
    members = [d.name for d in sym.descriptors if d.suffix != NAMESPACE]
    package = f"{sym.package} {sym.version}".strip() if sym.package not in ("", ".") else ""
    return Foreign("", package, ".".join([*names, *members]) + "()")


def callable_with(constructors: list[SymbolFact], args: int) -> list[SymbolFact]:
    """The constructors a call with ``args`` arguments can run: those of that arity, else the varargs ones (JLS
    15.12.2: a variable-arity constructor only when no fixed-arity one applies)."""
    fixed = [c for c in constructors if arity(c) == args]
    return fixed or [c for c in constructors if arity(c) is None]


def _last_type_identifier(superclass: Node) -> Node | None:
    """The identifier that names the type of a superclass clause (``extends a.b.C<T>``: ``C``)."""
    named = [c for c in superclass.named_children if "comment" not in c.type]
    return last_identifier(named[0]) if named else None


def implicit_uses(
    hooks: JavaHooks,
    path: str,
    doc: Document,
    source: bytes,
    ff: FileFacts,
    defined: Mapping[str, tuple[str, SymbolFact]],
    external: list[CoveredSite],
) -> list[ScipUse]:
    """The constructor calls javac makes that no source line writes, as uses at the calling declaration:

    - a constructor without an explicit this(...)/super(...) calls its superclass's no-argument constructor, and a
      class that declares no constructor has a default one that does (its use is the class's: ``new C()`` binds to
      the class when C declares none);
    - an enum constant with a body is an anonymous subclass whose constructor runs the enum's constructor of the
      constant's arguments (a constant without a body is javac's own occurrence at its name).

    The superclass is javac's (the class's SCIP relationships), its constructors are its declarations; a call
    whose constructor the arity does not decide (two of the same arity) keeps the resolver's CANDIDATE edges. Each
    use is at the site the extractor gives the same call (``sites.py``: ``new``, ``implicit``) and settles it; a
    superclass javac finds outside the graph settles it with no edge."""
    by_position = {(s.start_line, s.start_col, s.kind): s for s in ff.symbols}
    classes = {
        (p, d.start_line, d.start_col): sym
        for sym, (p, d) in defined.items()
        if d.kind in TYPE_KINDS and sym.endswith("#")
    }
    infos = {i.symbol: i for i in doc.symbols}
    enclosing = FileDeclarations(ff.symbols, SOURCE_KINDS)
    cmap = ColumnMap(source, hooks.unit(doc))
    used = {
        (o.range[0], cmap.byte_col(o.range[0], o.range[1])): o.symbol
        for o in doc.occurrences
        if not o.is_definition and o.symbol and not o.symbol.startswith("local ")
    }
    out: list[ScipUse] = []

    def use(src: SymbolFact, where: tuple[str, str, SymbolFact], line: int, col: int) -> None:
        target = hooks._target(*where, "")
        at = (path, line, col, src.qualified_name, src.kind, "implicit", True, "")
        if isinstance(target, Local):
            out.append(ScipUse(*at, target_path=target.path, target_qn=target.qualified_name, target_kind=target.kind))
        elif isinstance(target, Foreign):
            out.append(ScipUse(*at, package=target.package, file=target.file, member=target.member))

    def constructors_of(where: tuple[str, str, SymbolFact]) -> list[SymbolFact]:
        return hooks.constructors.get((where[0], where[1], where[2].qualified_name), [])

    stack = [_PARSER.parse(source).root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        row, col = node.start_point[0] + 1, node.start_point[1]
        if node.type == "class_declaration":
            decl = by_position.get((row, col, "class"))
            symbol = classes.get((path, row, col)) if decl is not None else None
            if decl is not None and infos.get(symbol or "") is None:
                continue  # a class javac did not attribute
            # the superclass is the type javac attributed in the extends clause (a class's relationships name every
            # supertype, transitively, in no stated order)
            named = node.child_by_field_name("superclass")
            written = _last_type_identifier(named) if named is not None else None
            symbol_there = used.get(written.start_point) if written is not None else None
            sup = None
            if symbol_there is not None:
                sup = ("", *defined[symbol_there]) if symbol_there in defined else hooks.provided.get(symbol_there)
                sup = sup if sup is not None and sup[2].kind == "class" else None
            if named is not None and symbol_there is None:
                continue  # javac could not attribute the superclass: the fallback's candidate stays
            body = node.child_by_field_name("body")
            mine = [c for c in (body.named_children if body else []) if c.type == "constructor_declaration"]
            callers: list[tuple[SymbolFact, int, int]] = []
            if decl is None:  # a local class: its code is the enclosing method's, its constructors' calls too
                around = enclosing.enclosing(row, col)
                if around is not None and (not mine or not all(explicit_constructor_call(c) for c in mine)):
                    callers.append((around, row, col))
            elif not mine:
                callers.append((decl, row, col))
            for c in mine if decl is not None else ():
                own = by_position.get((c.start_point[0] + 1, c.start_point[1], "constructor"))
                if own is not None and not explicit_constructor_call(c):
                    callers.append((own, own.start_line, own.start_col))
            ctors = constructors_of(sup) if sup is not None else []
            runs = (callable_with(ctors, 0) if ctors else [sup[2]]) if sup is not None else []
            for src, line, at in callers:
                if sup is not None and len(runs) == 1:
                    use(src, (sup[0], sup[1], runs[0]), line, at)  # none declared: the default one, the class
                elif sup is None:  # Object, or a superclass outside the graph: nothing of the graph is called
                    external.append(CoveredSite(path, line, at, src.qualified_name, src.kind))
        elif node.type == "enum_constant" and node.child_by_field_name("body") is not None:
            member = by_position.get((row, col, "enum_member"))
            enum = next((s for s in ff.symbols if member and s.qualified_name == member.container), None)
            if member is None or enum is None:
                continue
            args = node.child_by_field_name("arguments")
            n = len([c for c in args.named_children if "comment" not in c.type]) if args is not None else 0
            ctors = constructors_of(("", path, enum))
            runs = callable_with(ctors, n) if ctors else ([enum] if n == 0 else [])
            name = node.child_by_field_name("name")
            if len(runs) == 1 and name is not None:  # from the enum, as javac's occurrence at a constant's name
                use(enum, ("", path, runs[0]), name.start_point[0] + 1, name.start_point[1])
    return out


def join_repository(index: Index, repo: RepositoryFacts, provided: list[Provider], corpus: Corpus, run: Run):
    """Tie the index's occurrences to this repository's and its providers' declarations; classify each use."""
    root = Path(repo.root).resolve()
    own = {ff.path: ff for ff in repo.files if ff.parsed}
    provider_files: dict[str, tuple[str, FileFacts]] = {}  # absolute path -> (repository, facts)
    by_name = {r.name: r for r in corpus.repositories}
    for p in provided:
        other = by_name.get(p.repository)
        if other is None:
            continue
        for ff in other.files:
            if ff.parsed:
                provider_files[str((Path(other.root) / ff.path).resolve())] = (p.repository, ff)
    source_of = source_reader(root)
    docs = sorted((d for d in index.documents if d.relative_path in own), key=lambda d: d.relative_path)
    defined: dict[str, tuple[str, SymbolFact]] = {}
    first_definitions(
        ((d.relative_path, _definitions(d, own[d.relative_path], source_of(d.relative_path))) for d in docs), defined
    )
    provided_defs: dict[str, tuple[str, str, SymbolFact]] = {}
    joined: dict[tuple[str, str], FileFacts] = {("", p): ff for p, ff in own.items()}
    for doc in sorted(index.documents, key=lambda d: d.relative_path):
        if not doc.relative_path or doc.relative_path in own:
            continue
        where = str(_absolute(doc.relative_path))
        found = provider_files.get(where)
        if found is not None:
            repository, ff = found
            try:
                src = (Path(by_name[repository].root) / ff.path).read_bytes()
            except OSError:
                continue
        elif where in run.installed:  # an installed dependency's source: its package identity stands for it
            repository, rel, src = run.installed[where]
            ff = extract(rel, src, package_declared(src) or "")
        else:
            continue
        joined[(repository, ff.path)] = ff
        for symbol, decl, _made in _definitions(doc, ff, src):
            provided_defs.setdefault(symbol, (repository, ff.path, decl))
    hooks = JavaHooks(provided_defs, joined)
    uses: list[ScipUse] = []
    external: list[CoveredSite] = []
    occurrences = 0
    for doc in docs:
        path = doc.relative_path
        ff = own[path]
        occurrences += document_uses(
            hooks, path, doc, source_of(path), FileDeclarations(ff.symbols, SOURCE_KINDS), defined, uses, external
        )
        uses += document_relations(hooks, path, doc, defined)
        uses += implicit_uses(hooks, path, doc, source_of(path), ff, defined, external)
        for p, decl in defined.values():
            if p == path and decl.kind == "method":
                # javac decided what this method overrides: a candidate override here is settled
                external.append(CoveredSite(path, decl.start_line, decl.start_col, decl.qualified_name, decl.kind))
    meta = index.metadata
    notes = [*run.notes]
    return RepositoryJavaFacts(
        analyzer_version=f"{meta.tool_name or ANALYZER} {meta.tool_version or PINNED_VERSION}".strip(),
        uses=tuple(uses),
        external=tuple(external),
        documents=len(docs),
        occurrences=occurrences,
        not_loaded=(*(("", n) for n in notes), *run.unlinked),
    )


def analyze_repository(repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryJavaFacts:
    provided = providers(repo, corpus)
    try:
        run = run_index(repo, provided, timeout=timeout, network=corpus.allow_network, installed=corpus.installed)
    except AnalyzerFailed as exc:
        if "not installed" in str(exc) or "not on PATH" in str(exc):
            raise
        return RepositoryJavaFacts(analyzer_version="", failure=str(exc))
    return join_repository(run.index, repo, provided, corpus, run)


# -- bind -------------------------------------------------------------------------------------------------------

_EDGE_OF_USE = {
    "call": EdgeKind.CALLS_DIRECT,
    "new": EdgeKind.CALLS_DIRECT,
    "implicit": EdgeKind.CALLS_DIRECT,
    "import": EdgeKind.IMPORTS_SYMBOL,
    "type": EdgeKind.TYPE_USES,
    "extends": EdgeKind.EXTENDS,
    "implements": EdgeKind.IMPLEMENTS,
    "override": EdgeKind.OVERRIDES,
    "annotation": EdgeKind.REFERENCES,
    "ref": EdgeKind.REFERENCES,
}


def edge_kind(use: str, target_kind: str) -> EdgeKind:
    if use == "callback":
        return EdgeKind.PASSES_AS_CALLBACK if target_kind in _CALLABLE else EdgeKind.REFERENCES
    if use in ("call", "new", "implicit") and target_kind not in _CALLABLE and target_kind not in ("class", "enum"):
        return EdgeKind.REFERENCES
    if use == "type" and target_kind not in TYPE_KINDS:
        return EdgeKind.REFERENCES
    return _EDGE_OF_USE.get(use, EdgeKind.REFERENCES)


# -- the pass -----------------------------------------------------------------------------------------------


def cache_key(
    repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], analyzer_identity: str, corpus: Corpus
) -> bytes:
    """Adapter and analyzer identity, the network setting, this repository's Java and build files, and those
    of the registered repositories whose artifacts it depends on."""
    h = hashlib.blake2b(digest_size=20)
    provided = {p.repository for p in providers(repo, corpus)}
    for part in ("java", ADAPTER_VERSION, analyzer_identity, repo.name, repo.root, str(corpus.allow_network)):
        h.update(part.encode())
        h.update(b"\0")
    if corpus.installed:  # a bundle build reads the installed dependencies' sources jars
        for d in build.read_build(Path(repo.root)).external:
            jar = installed_sources(d)
            if jar is not None:
                st = jar.stat()
                h.update(f"installed\0{jar}\0{st.st_size}:{st.st_mtime_ns}\n".encode())
    by_name = {r.name: r for r in corpus.repositories}
    for name in sorted(hashes):
        if name != repo.name and name not in provided:
            continue
        h.update(f"repository\0{name}\n".encode())
        for path in sorted(hashes[name]):
            h.update(f"{path}\0{hashes[name][path]}\n".encode())
        other = by_name.get(name)
        if other is not None:
            for rel in build.build_files(Path(other.root)):
                try:
                    h.update(rel.encode() + b"\0" + hashlib.blake2b((Path(other.root) / rel).read_bytes()).digest())
                except OSError:
                    h.update(rel.encode() + b"\0missing")
    return h.digest()


def probe(timeout: float = 180) -> str:
    """Compile a two-file project; a detail line, or AnalyzerFailed."""
    from indexer.languages.java import extract

    with tempfile.TemporaryDirectory(prefix="kivgraph-probe-") as tmp:
        root = Path(tmp)
        (root / "p").mkdir()
        a = b"package p;\n\npublic class A {\n    public static int target() { return 1; }\n}\n"
        b = b"package p;\n\nclass B {\n    int caller() { return A.target(); }\n}\n"
        (root / "p" / "A.java").write_bytes(a)
        (root / "p" / "B.java").write_bytes(b)
        repo = RepositoryFacts("probe", str(root), [extract("p/A.java", a, "p"), extract("p/B.java", b, "p")])
        run = run_index(repo, [], timeout=timeout)
        for doc in run.index.documents:
            if doc.relative_path == "p/B.java":
                for occ in doc.occurrences:
                    if occ.range[:2] == (3, 28) and occ.symbol.endswith("p/A#target()."):
                        return f"{run.index.metadata.tool_name} {run.index.metadata.tool_version} resolved a cross-file call"
        raise AnalyzerFailed(f"{ANALYZER} ran but did not resolve the probe's cross-file call")


class JavaModules:
    """Per corpus: which registered repositories build each Maven artifact (``groupId:artifactId``), and where a
    repository's file of a sources-jar path is (under one of its source roots)."""

    def __init__(self, corpus: Corpus) -> None:
        self.builders: dict[str, list[str]] = {}
        self._repos = {r.name: r for r in corpus.repositories}
        self._files: dict[str, dict[str, str]] = {}
        for r in corpus.repositories:
            for coordinates in sorted(build.read_build(Path(r.root)).artifacts):
                self.builders.setdefault(coordinates, []).append(r.name)

    def file_of(self, repository: str, rel: str) -> str | None:
        """The repository's path of the file a sources jar holds at ``rel`` (its package path)."""
        if repository not in self._files:
            repo = self._repos.get(repository)
            table: dict[str, str] = {}
            if repo is not None:
                paths = {ff.path for ff in repo.files}
                for base in source_roots(repo):
                    prefix = base.relative_to(Path(repo.root)).as_posix()
                    for path in sorted(paths):
                        inside = path[len(prefix) + 1 :] if prefix not in ("", ".") else path
                        if (prefix in ("", ".") or path.startswith(prefix + "/")) and inside not in table:
                            table[inside] = path
            self._files[repository] = table
        return self._files[repository].get(rel)


class _JavaTool:
    """scip-java and the JDK (``install``, ``identity`` above)."""

    def install(self) -> str:
        return install()

    def executable(self) -> Path:
        return executable()

    def run_version(self) -> str:
        return version()

    def identity(self) -> str:
        return identity()


class ScipJavaAdapter(ScipAdapter[RepositoryJavaFacts]):
    """scip-java (javac's attribution) behind the language seam, on the SCIP route."""

    analyzer = ANALYZER
    facts_type = RepositoryJavaFacts
    hooks = JavaHooks()
    tool = _JavaTool()

    def probe(self) -> str:
        return probe()

    def modules(self, corpus: Corpus) -> JavaModules:
        return JavaModules(corpus)

    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        return cache_key(repo, hashes, identity, corpus)

    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryJavaFacts:
        return analyze_repository(repo, corpus, timeout=timeout)


ADAPTER = ScipJavaAdapter()


def bind(facts: RepositoryJavaFacts, repo: str, corpus: Corpus) -> ExactOutcome:
    """The route's binding with Java's hooks."""
    return ADAPTER.bind(facts, repo, corpus, ADAPTER.modules(corpus))
