"""Hand-made generations for the server tests, published with indexer.publish.

A tiny line scanner turns Python source into declarations (``def``/``class``
nesting by indentation, plus a module symbol per file), so the records match
real files on disk and get_source can serve and hash them. Edges and
unresolved references are stated explicitly by qualified name. Nothing here
depends on the real extractor.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from indexer.languages.registry import is_test_path
from indexer.publish import GenerationContent, PublishResult, publish
from snapshot_format import records
from snapshot_format.layout import StateLayout
from snapshot_format.stable_key import stable_key
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

_DECL = re.compile(r"^(?P<indent>[ ]*)(?:async[ ]+)?(?P<kw>def|class)[ ]+(?P<name>\w+)")


@dataclass
class GraphBuilder:
    """Collects repositories, files, declarations, edges and unresolved references for one generation."""

    base: Path
    repositories: dict[str, records.Repository] = field(default_factory=dict)
    files: list[records.File] = field(default_factory=list)
    symbols: list[records.Symbol] = field(default_factory=list)
    edges: list[records.Edge] = field(default_factory=list)
    unresolved: list[records.Unresolved] = field(default_factory=list)
    package_dependencies: list[records.PackageDependency] = field(default_factory=list)
    by_qn: dict[tuple[str, str], list[records.Symbol]] = field(default_factory=dict)

    def repo(
        self,
        name: str,
        *,
        languages: tuple[str, ...] = ("python",),
        commit: str = "",
        branch: str = "",
        mode: str = "exact",
        root: Path | None = None,
    ) -> Path:
        """Register a repository whose files live under ``base/name`` (or ``root``)."""
        path = root or (self.base / name)
        path.mkdir(parents=True, exist_ok=True)
        analyses = tuple(
            records.LanguageAnalysis(
                language=lang,
                mode=mode,
                analyzer="hand-made",
                reason="" if mode == "exact" else "no exact analyzer: edges are CANDIDATE",
            )
            for lang in languages
        )
        self.repositories[name] = records.Repository(
            name=name, root=str(path), languages=languages, commit=commit, branch=branch, analyses=analyses
        )
        return path

    def root(self, repo: str) -> Path:
        return Path(self.repositories[repo].root)

    def add_file(
        self, repo: str, path: str, text: str, *, status: str = "indexed", reason: str = "", write: bool = True
    ) -> list[records.Symbol]:
        """Write the file and record it with its declarations (none when it failed to parse)."""
        target = self.root(repo) / path
        if write:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        data = text.encode("utf-8")
        package = path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        found = [] if status != "indexed" else self._declarations(repo, path, package, text)
        self.files.append(
            records.File(
                repository=repo,
                path=path,
                language="python",
                content_hash=hashlib.sha256(data).hexdigest(),
                size=len(data),
                status=status,
                reason=reason,
                symbols=len(found),
                package=package,
                analysis="exact" if status == "indexed" else "",
                test=is_test_path("python", path),
            )
        )
        for sym in found:
            self.symbols.append(sym)
            self.by_qn.setdefault((repo, sym.qualified_name), []).append(sym)
        return found

    def _declarations(self, repo: str, path: str, package: str, text: str) -> list[records.Symbol]:
        lines = text.splitlines()
        module_name = package.rsplit(".", 1)[-1]
        out = [self._symbol(repo, path, package, module_name, package, "module", 1, max(len(lines), 1), "")]
        stack: list[tuple[int, str, str]] = []  # (indent, qualified name, kind)
        for number, line in enumerate(lines, start=1):
            match = _DECL.match(line)
            if not match:
                continue
            indent = len(match.group("indent"))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            parent_qn = stack[-1][1] if stack else package
            parent_kind = stack[-1][2] if stack else "module"
            name = match.group("name")
            kind = "class" if match.group("kw") == "class" else ("method" if parent_kind == "class" else "function")
            qn = f"{parent_qn}.{name}"
            end = number
            for later in range(number + 1, len(lines) + 1):
                body = lines[later - 1]
                if body.strip() and len(body) - len(body.lstrip(" ")) <= indent:
                    break
                if body.strip():
                    end = later
            signature = line.strip().rstrip(":")
            container = out[-1].key if stack else ""
            for sym in reversed(out):
                if sym.qualified_name == parent_qn:
                    container = sym.key
                    break
            out.append(self._symbol(repo, path, package, name, qn, kind, number, end, signature, indent, container))
            stack.append((indent, qn, kind))
        return out

    def _symbol(
        self,
        repo: str,
        path: str,
        package: str,
        name: str,
        qn: str,
        kind: str,
        start: int,
        end: int,
        signature: str,
        col: int = 0,
        container: str = "",
    ) -> records.Symbol:
        discriminator = f"{signature or 'none'} @{path}:{start}"
        key = stable_key(
            language="python",
            repository=repo,
            package=package,
            module="",
            qualified_name=qn,
            kind=kind,
            discriminator=discriminator,
        )
        return records.Symbol(
            key=key,
            name=name,
            qualified_name=qn,
            kind=kind,
            language="python",
            repository=repo,
            path=path,
            start_line=start,
            start_col=col,
            end_line=end,
            end_col=0,
            signature=signature,
            exported=not name.startswith("_"),
            container=container,
            package=package,
        )

    def add_symbol(self, repo: str, path: str, name: str, kind: str, line: int) -> records.Symbol:
        """A record the scanner does not produce (an import binding, say), declared on one line."""
        package = path.removesuffix(".py").replace("/", ".")
        sym = self._symbol(repo, path, package, name, f"{package}.{name}", kind, line, line, "")
        self.symbols.append(sym)
        self.by_qn.setdefault((repo, sym.qualified_name), []).append(sym)
        return sym

    def add_declared(
        self,
        repo: str,
        path: str,
        language: str,
        package: str,
        declarations: list[tuple[str, str, str, int]],
        *,
        text: str = "\n" * 60,
        test: bool = False,
    ) -> None:
        """A file of any language with the declarations given as (qualified name, name, kind, line)."""
        target = self.root(repo) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        self.files.append(
            records.File(
                repository=repo,
                path=path,
                language=language,
                package=package,
                symbols=len(declarations),
                content_hash=hashlib.sha256(text.encode()).hexdigest(),
                size=len(text),
                test=test,
            )
        )
        for qn, name, kind, line in declarations:
            key = stable_key(
                language=language,
                repository=repo,
                package=package,
                module=path,
                qualified_name=qn,
                kind=kind,
                discriminator="none",
            )
            sym = records.Symbol(
                key=key,
                name=name,
                qualified_name=qn,
                kind=kind,
                language=language,
                repository=repo,
                path=path,
                start_line=line,
                start_col=0,
                end_line=line,
                end_col=0,
                exported=True,
                package=package,
            )
            self.symbols.append(sym)
            self.by_qn.setdefault((repo, qn), []).append(sym)

    def sym(self, repo: str, qn: str, index: int = 0) -> records.Symbol:
        """The declaration with this qualified name (the ``index``-th when there are homonyms)."""
        return self.by_qn[(repo, qn)][index]

    def edge(
        self,
        source: records.Symbol,
        kind: EdgeKind,
        target: records.Symbol,
        *,
        confidence: Confidence = Confidence.EXACT_TYPECHECKED,
        provenance: Provenance = Provenance.PYTHON_INDEXER_USE,
        line: int = 0,
        count: int = 1,
    ) -> None:
        self.edges.append(
            records.Edge(
                kind=int(kind),
                source=source.key,
                target=target.key,
                confidence=int(confidence),
                provenance=int(provenance),
                line=line or source.start_line,
                col=0,
                count=count,
            )
        )

    def unresolved_ref(
        self,
        name: str,
        reason: str,
        repo: str,
        path: str = "",
        *,
        line: int = 0,
        source: records.Symbol | None = None,
        package: str = "",
        detail: str = "",
    ) -> None:
        self.unresolved.append(
            records.Unresolved(
                name=name,
                reason=reason,
                repository=repo,
                path=path,
                line=line,
                language="python",
                source=source.key if source else "",
                package=package,
                detail=detail,
            )
        )

    def package_dependency(
        self,
        consumer_repo: str,
        consumer_pkg: str,
        provider_repo: str,
        provider_pkg: str,
        path: str,
        line: int,
        count: int = 1,
    ) -> None:
        self.package_dependencies.append(
            records.PackageDependency(
                consumer_repository=consumer_repo,
                consumer_package=consumer_pkg,
                provider_repository=provider_repo,
                provider_package=provider_pkg,
                path=path,
                line=line,
                count=count,
            )
        )

    def publish(self, layout: StateLayout) -> PublishResult:
        content = GenerationContent(
            repositories=list(self.repositories.values()),
            files=self.files,
            symbols=self.symbols,
            edges=self.edges,
            unresolved=self.unresolved,
            analyzers={"python": "hand-made 1"},
            package_dependencies=self.package_dependencies,
        )
        return publish(layout, content, indexer_version="test-fixture")


SHAPES = '''"""Shapes."""


class Shape:
    def area(self):
        raise NotImplementedError


class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side


def make_square(side):
    return Square(side)


def unused():
    return None
'''

USE = """from pkg.shapes import make_square


def total_area(shapes):
    return sum(s.area() for s in shapes)


def main():
    sq = make_square(2)
    return total_area([sq])
"""

ALPHA_UTIL = """import sys

if sys.platform == "win32":
    def helper():
        return "win"
else:
    def helper():
        return "posix"
"""

BETA_UTIL = """def helper():
    return "beta"
"""

RUN = """from pkg.shapes import make_square
from os import getcwd


def run():
    return make_square(3)


def area():
    return 0
"""

INIT = """from pkg.shapes import make_square
"""

DRAW = """class Drawable:
    def draw(self):
        raise NotImplementedError


class Circle(Drawable):
    def draw(self):
        return "circle"


def render(item):
    return item.draw()
"""

CALLER_COUNT = 130
CALLER_FILES = 7


def hub_files() -> dict[str, str]:
    """Files of the ``gamma`` repository: one hub called by many small functions spread over several files."""
    files = {"hub.py": "def hub():\n    return 1\n\n\ndef hub2():\n    return 2\n"}
    per_file = -(-CALLER_COUNT // CALLER_FILES)
    for f in range(CALLER_FILES):
        body = "from hub import hub\n"
        for i in range(f * per_file, min(CALLER_COUNT, (f + 1) * per_file)):
            body += f"\n\ndef caller_{i:03d}():\n    return hub() + hub2()\n"
        files[f"callers/c{f}.py"] = body
    return files


@dataclass
class StandardGraph:
    """The shared test graph: its builder (for keys and roots) and the published generation."""

    builder: GraphBuilder
    layout: StateLayout
    result: PublishResult

    def key(self, repo: str, qn: str, index: int = 0) -> str:
        return self.builder.sym(repo, qn, index).key


def build_standard(builder: GraphBuilder) -> GraphBuilder:
    """alpha (shapes and uses), beta (a cross-repository caller and homonyms), gamma (a hub with many callers)."""
    b = builder
    b.repo("alpha", commit="a" * 40, branch="main")
    b.repo("beta", mode="fallback")
    b.repo("gamma")
    b.add_file("alpha", "pkg/__init__.py", INIT)
    b.add_file("alpha", "pkg/shapes.py", SHAPES)
    b.add_file("alpha", "pkg/use.py", USE)
    b.add_file("alpha", "pkg/broken.py", "def broken(:\n", status="parse_failed", reason="syntax error at 1:11")
    b.add_file("alpha", "pkg/draw.py", DRAW)
    b.add_file("alpha", "util.py", ALPHA_UTIL)
    b.add_file("beta", "app/run.py", RUN)
    b.add_file("beta", "util.py", BETA_UTIL)
    for path, text in hub_files().items():
        b.add_file("gamma", path, text)
    b.add_symbol("beta", "app/run.py", "getcwd", "import", 2)

    make_square = b.sym("alpha", "pkg.shapes.make_square")
    b.edge(b.sym("alpha", "pkg.use.main"), EdgeKind.CALLS_DIRECT, make_square, line=10)
    b.edge(b.sym("alpha", "pkg.use.main"), EdgeKind.CALLS_DIRECT, b.sym("alpha", "pkg.use.total_area"), line=11)
    b.edge(b.sym("alpha", "pkg.use"), EdgeKind.IMPORTS_SYMBOL, make_square, line=1)
    b.edge(b.sym("alpha", "pkg"), EdgeKind.REEXPORTS, make_square, line=1)
    b.edge(
        b.sym("beta", "app.run.run"),
        EdgeKind.CALLS_DIRECT,
        make_square,
        line=6,
        confidence=Confidence.CANDIDATE,
        provenance=Provenance.PYTHON_SYNTAX_CALL,
    )
    b.edge(
        b.sym("beta", "app.run"),
        EdgeKind.IMPORTS_SYMBOL,
        make_square,
        line=1,
        confidence=Confidence.CANDIDATE,
        provenance=Provenance.PYTHON_SYNTAX_CALL,
    )
    b.edge(make_square, EdgeKind.CALLS_DIRECT, b.sym("alpha", "pkg.shapes.Square"), line=18)
    b.edge(
        b.sym("alpha", "pkg.shapes.Square"),
        EdgeKind.EXTENDS,
        b.sym("alpha", "pkg.shapes.Shape"),
        line=9,
        provenance=Provenance.PYTHON_INDEXER_DEF,
    )
    b.edge(
        b.sym("alpha", "pkg.shapes.Square.area"),
        EdgeKind.OVERRIDES,
        b.sym("alpha", "pkg.shapes.Shape.area"),
        line=13,
        provenance=Provenance.PYTHON_INDEXER_DEF,
    )
    b.edge(
        b.sym("alpha", "pkg.use.total_area"),
        EdgeKind.CALLS_DIRECT,
        b.sym("alpha", "pkg.shapes.Shape.area"),
        line=5,
        confidence=Confidence.CANDIDATE,
        provenance=Provenance.PYTHON_SYNTAX_CALL,
        count=2,
    )
    draw = b.sym("alpha", "pkg.draw.Drawable.draw")
    b.edge(b.sym("alpha", "pkg.draw.Circle.draw"), EdgeKind.IMPLEMENTS, draw, provenance=Provenance.PYTHON_INDEXER_DEF)
    b.edge(
        b.sym("alpha", "pkg.draw.Circle"),
        EdgeKind.EXTENDS,
        b.sym("alpha", "pkg.draw.Drawable"),
        provenance=Provenance.PYTHON_INDEXER_DEF,
    )
    b.edge(b.sym("alpha", "pkg.draw.render"), EdgeKind.CALLS_DIRECT, draw, line=12)
    b.unresolved_ref(
        "unknown_helper",
        "NAME_NOT_RESOLVED",
        "alpha",
        "pkg/use.py",
        line=5,
        source=b.sym("alpha", "pkg.use.total_area"),
    )
    b.unresolved_ref(
        "make_square",
        "IMPORT_NOT_RESOLVED",
        "beta",
        "app/run.py",
        line=1,
        source=b.sym("beta", "app.run"),
        package="pkg.shapes",
    )
    b.unresolved_ref("", "PACKAGE_NOT_LOADED", "beta", package="requests", detail="requests is not installed")

    hub, hub2 = b.sym("gamma", "hub.hub"), b.sym("gamma", "hub.hub2")
    for i in range(CALLER_COUNT):
        b.edge(_caller(b, i), EdgeKind.CALLS_DIRECT, hub)
        # hub2: every third caller is only a candidate, so its answer has two confidence buckets
        b.edge(
            _caller(b, i),
            EdgeKind.CALLS_DIRECT,
            hub2,
            confidence=Confidence.CANDIDATE if i % 3 == 0 else Confidence.EXACT_TYPECHECKED,
            provenance=Provenance.PYTHON_SYNTAX_CALL if i % 3 == 0 else Provenance.PYTHON_INDEXER_USE,
        )
    return b


def _caller(b: GraphBuilder, i: int) -> records.Symbol:
    per_file = -(-CALLER_COUNT // CALLER_FILES)
    return b.sym("gamma", f"callers.c{i // per_file}.caller_{i:03d}")


def standard_graph(tmp: Path) -> StandardGraph:
    """Build and publish the standard graph under ``tmp`` (repositories in tmp/src, state in tmp/state)."""
    builder = build_standard(GraphBuilder(tmp / "src"))
    layout = StateLayout(config_path=tmp / "kivgraph.toml", state_dir=tmp / "state")
    result = builder.publish(layout)
    return StandardGraph(builder=builder, layout=layout, result=result)


# --- two repositories where the consumer imports the provider (traversals and consumers) ------------------------

PROVIDER_CORE = """def compute(x):
    return loop(x)


def loop(x):
    return compute(x - 1) if x else 0


def left():
    return compute(1)


def right():
    return compute(2)


def top():
    return left() + right()


def unused():
    return None


VALUE = compute(3)
"""

PROVIDER_INIT = """from lib.core import compute
"""

CONSUMER_MAIN = """from lib.core import compute


def run():
    return compute(4)


def cli():
    return run()


def guess(obj):
    return obj.compute(5)
"""

CONSUMER_EXTRA = """import lib


def also():
    return lib.compute(6)
"""

OTHER_MAIN = """def compute():
    return "a homonym in a third repository"
"""


def build_cross_repo(builder: GraphBuilder) -> GraphBuilder:
    """``provider`` (lib) and ``consumer`` (app) where app imports lib, plus a diamond, a cycle and blind spots.

    consumer: app.main.cli -> app.main.run -> lib.core.compute (exact, cross-repository);
    provider: lib.core.left/right -> compute (a diamond under top), compute <-> loop (a cycle).
    """
    b = builder
    b.repo("provider", commit="b" * 40, branch="main")
    b.repo("consumer")
    b.repo("other")
    b.add_file("provider", "lib/__init__.py", PROVIDER_INIT)
    b.add_file("provider", "lib/core.py", PROVIDER_CORE)
    b.add_file("consumer", "app/main.py", CONSUMER_MAIN)
    b.add_file("consumer", "app/extra.py", CONSUMER_EXTRA)
    b.add_file("other", "tool.py", OTHER_MAIN)
    b.add_file("other", "lib/__init__.py", "")  # a homonym of the provider's package module
    value = b.add_symbol("provider", "lib/core.py", "VALUE", "variable", 25)
    compute = b.sym("provider", "lib.core.compute")
    loop = b.sym("provider", "lib.core.loop")
    b.edge(compute, EdgeKind.CALLS_DIRECT, loop, line=2)
    b.edge(loop, EdgeKind.CALLS_DIRECT, compute, line=6)
    b.edge(b.sym("provider", "lib.core.left"), EdgeKind.CALLS_DIRECT, compute, line=10)
    b.edge(b.sym("provider", "lib.core.right"), EdgeKind.CALLS_DIRECT, compute, line=14)
    b.edge(b.sym("provider", "lib.core.top"), EdgeKind.CALLS_DIRECT, b.sym("provider", "lib.core.left"), line=18)
    b.edge(b.sym("provider", "lib.core.top"), EdgeKind.CALLS_DIRECT, b.sym("provider", "lib.core.right"), line=18)
    b.edge(value, EdgeKind.CALLS_DIRECT, compute, line=25)
    b.edge(b.sym("provider", "lib"), EdgeKind.REEXPORTS, compute, line=1)
    run = b.sym("consumer", "app.main.run")
    b.edge(
        b.sym("consumer", "app.main"),
        EdgeKind.IMPORTS_SYMBOL,
        compute,
        line=1,
        confidence=Confidence.EXACT_PACKAGE_MAPPED,
    )
    b.edge(run, EdgeKind.CALLS_DIRECT, compute, line=5)
    b.edge(b.sym("consumer", "app.main.cli"), EdgeKind.CALLS_DIRECT, run, line=9)
    b.edge(
        b.sym("consumer", "app.extra.also"),
        EdgeKind.CALLS_DIRECT,
        compute,
        line=5,
        confidence=Confidence.CANDIDATE,
        provenance=Provenance.PYTHON_SYNTAX_CALL,
    )
    b.package_dependency("consumer", "app", "provider", "lib", "app/main.py", 1, count=2)
    b.package_dependency("consumer", "app.extra", "provider", "lib", "app/extra.py", 1)
    b.unresolved_ref(
        "compute",
        "RECEIVER_NOT_RESOLVED",
        "consumer",
        "app/main.py",
        line=13,
        source=b.sym("consumer", "app.main.guess"),
        detail="obj.compute",
    )
    b.unresolved_ref(
        "compute",
        "IMPORT_NOT_RESOLVED",
        "consumer",
        "app/extra.py",
        line=1,
        source=b.sym("consumer", "app.extra"),
        package="lib.core",
        detail="lib.core.compute",
    )
    b.unresolved_ref(
        "",
        "PACKAGE_NOT_LOADED",
        "provider",
        package="lib.vendored",
        detail="lib.vendored could not be imported in lib/vendored",
    )
    return b


def cross_repo_graph(tmp: Path) -> StandardGraph:
    """Build and publish the provider/consumer graph under ``tmp``."""
    builder = build_cross_repo(GraphBuilder(tmp / "src"))
    layout = StateLayout(config_path=tmp / "kivgraph.toml", state_dir=tmp / "state")
    return StandardGraph(builder=builder, layout=layout, result=builder.publish(layout))


# --- a stand-in for `kivgraph index`, for index_project tests that must not depend on the real indexer ----------

FAKE_MODE_ENV = "KIVGRAPH_TEST_FAKE_INDEX"
FAKE_ARGV_ENV = "KIVGRAPH_TEST_FAKE_ARGV"


def fake_indexer_command() -> list[str]:
    """The base command of the stand-in (index_argv appends --json --register ... --config ... --state-dir ...)."""
    import sys

    return [sys.executable, str(Path(__file__).resolve()), "fake-index"]


def _fake_index(argv: list[str]) -> int:
    """Behave like `kivgraph index --json --register` in the mode the environment names."""
    import json
    import os
    import sys

    mode = os.environ.get(FAKE_MODE_ENV, "publish")
    record = os.environ.get(FAKE_ARGV_ENV)
    if record:
        Path(record).write_text(json.dumps(argv))
    state_dir = Path(argv[argv.index("--state-dir") + 1])

    def emit(obj: dict[str, object]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def result(passed: bool, error: str | None, generation_id: int | None = None) -> None:
        emit(
            {
                "event": "result",
                "result": {
                    "passed": passed,
                    "generation_id": generation_id,
                    "generation": None,
                    "counts": {"symbols": 1} if passed else {},
                    "index": {},
                    "error": error,
                },
            }
        )

    if mode == "stderr-only":
        sys.stderr.write("Traceback (most recent call last):\nRuntimeError: the analyzer exploded\n")
        return 1
    if mode == "fail":
        emit(
            {
                "event": "progress",
                "progress": {"phase": "parse", "repository": "alpha", "detail": "pkg", "completed": 1, "total": 2},
            }
        )
        sys.stderr.write("noise on stderr\n")
        result(False, "alpha: analyzer crashed")
        return 1
    if mode == "locked":
        result(False, "another kivgraph index is publishing into the state directory")
        return 3
    emit(
        {
            "event": "progress",
            "progress": {"phase": "discover", "repository": "alpha", "detail": "3 files", "completed": 0, "total": 2},
        }
    )
    emit({"event": "telemetry", "whatever": True})
    emit(
        {
            "event": "progress",
            "progress": {"phase": "publish", "repository": "alpha", "detail": "", "completed": 2, "total": 2},
        }
    )
    layout = StateLayout(config_path=state_dir.parent / "kivgraph.toml", state_dir=state_dir)
    published = build_standard(GraphBuilder(state_dir.parent / "src")).publish(layout)
    result(True, None, published.generation_id)
    return 0


# --- a raw JSON-RPC peer on a real `kivgraph serve` over stdio -----------------------------------------------------


class StdioPeer:
    """Talks JSON-RPC lines to a server process, keeps every stdout line, answers the server's requests."""

    def __init__(self, process: Any) -> None:
        self.process = process
        self.stdout_lines: list[bytes] = []
        self.unparsed: list[bytes] = []
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.elicitation_answer: dict[str, Any] | None = None
        self.stderr = bytearray()
        self._responses: dict[int, dict[str, Any]] = {}
        self._arrived = anyio.Event()
        self._next_id = 0

    async def _read_stdout(self) -> None:
        pending = b""
        async for chunk in self.process.stdout:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                await self._line(line)
        if pending:
            await self._line(pending)
        self._wake()

    async def _read_stderr(self) -> None:
        async for chunk in self.process.stderr:
            self.stderr.extend(chunk)

    def _wake(self) -> None:
        self._arrived.set()
        self._arrived = anyio.Event()

    async def _line(self, line: bytes) -> None:
        self.stdout_lines.append(line)
        try:
            message = json.loads(line)
        except ValueError:
            self.unparsed.append(line)
            return
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            if message["method"] == "elicitation/create" and self.elicitation_answer is not None:
                await self._send({"jsonrpc": "2.0", "id": message["id"], "result": self.elicitation_answer})
            elif message["method"] == "ping":
                await self._send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            else:
                await self._send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "not supported by this test client"},
                    }
                )
        elif "method" in message:
            self.notifications.append(message)
        elif "id" in message:
            self._responses[message["id"]] = message
        self._wake()

    async def _send(self, message: dict[str, Any]) -> None:
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 60.0
    ) -> dict[str, Any]:
        """Send a request and wait (bounded) for its response message."""
        self._next_id += 1
        request_id = self._next_id
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        with anyio.fail_after(timeout):
            while request_id not in self._responses:
                if self.process.returncode is not None:
                    raise RuntimeError(f"server exited: {self.stderr.decode(errors='replace')[-2000:]}")
                await self._arrived.wait()
        return self._responses.pop(request_id)

    async def send_raw(self, line: bytes) -> None:
        """Write bytes as they are (a malformed message), then a newline."""
        await self.process.stdin.send(line + b"\n")

    async def response_for(self, request_id: object, *, timeout: float = 60.0) -> dict[str, Any]:
        """Wait (bounded) for the response carrying ``request_id`` (None for id null)."""
        with anyio.fail_after(timeout):
            while request_id not in self._responses:
                if self.process.returncode is not None:
                    raise RuntimeError(f"server exited: {self.stderr.decode(errors='replace')[-2000:]}")
                await self._arrived.wait()
        return self._responses.pop(request_id)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities or {},
                "clientInfo": {"name": "kivgraph-tests", "version": "0"},
            },
        )
        await self.notify("notifications/initialized")
        return response["result"]

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        progress_token: str | None = None,
        timeout: float = 60.0,
    ) -> tuple[bool, str]:
        """(is_error, text) of a tool call; exactly one text block is expected."""
        params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        response = await self.request("tools/call", params, timeout=timeout)
        result = response["result"]
        assert "structuredContent" not in result
        (block,) = result["content"]
        assert block["type"] == "text"
        return bool(result.get("isError")), block["text"]

    async def tool_names(self) -> list[str]:
        return [t["name"] for t in (await self.request("tools/list"))["result"]["tools"]]

    async def wait_for_notification(self, method: str, *, timeout: float = 30.0) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while True:
                for message in self.notifications:
                    if message["method"] == method:
                        return message
                await self._arrived.wait()


@asynccontextmanager
async def stdio_serve(argv: list[str], env: dict[str, str], cwd: Path) -> AsyncIterator[StdioPeer]:
    """Start a server process, yield a peer on it, then close stdin and wait (bounded) for a clean exit."""
    import subprocess

    process = await anyio.open_process(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    peer = StdioPeer(process)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer._read_stdout)
            tg.start_soon(peer._read_stderr)
            try:
                yield peer
            finally:
                await process.stdin.aclose()
                with anyio.move_on_after(30):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
    finally:
        if process.returncode is None:
            process.kill()


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["fake-index"]:
        sys.exit(_fake_index(sys.argv[2:]))
    sys.exit(f"usage: {sys.argv[0]} fake-index ...")
