"""A generation published from bundles answers every tool exactly as ``kivgraph index`` of the same repositories.

Per language a provider and a consumer, each a git checkout. ``kivgraph index`` registers both (the consumer's
analyzer sees the provider's registered source). The bundles are built as CI matrix jobs would build them:
each job in its own home (own state directory and fact cache) with only its repository registered, the
consumer's with its provider installed as a package the way that language installs one: a wheel in an active
virtualenv (Python), the published build in ``node_modules`` (TypeScript), the module in a module cache
filled from a module proxy (Go), the crate in the job's cargo home fetched from a crate registry (Rust), the
artifact with its sources jar in the job's local Maven repository (Java), the pub cache's copy named by the
package config (Dart: no Dart SDK here, so the CANDIDATE route is compared). ``kivgraph publish`` of both
bundles must then hold the same records and give the same answer to every read tool, about every symbol, file
and name, as the indexed generation.

Each pair also checks the answers are not trivially equal: cross-repository exact edges are there, and a
consumer bundle built without its provider installed misses them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from snapshot_format.layout import resolve_layout
from snapshot_format.reader import Generation, open_current
from snapshot_format.vocab import Confidence
from tests.bundle_kit import bundle_job, differences, git_commit, kivgraph, stored_rows, tool_answers, write_wheel
from tests.helpers import copy_fixture, write_repo
from tests.test_typescript_package_mapped import CONSUMER, PROVIDER, PUBLISHED

pytestmark = pytest.mark.analyzers


def _generation(home: Path) -> Generation:
    return open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)}))


def _cross_exact(gen: Generation, consumer: str, provider: str, *, exact: bool = True) -> int:
    """Exact edges (any edges when not ``exact``) from the consumer's declarations into the provider's."""
    n = 0
    for f in gen.files(consumer):
        for s in gen.declarations(consumer, f.path):
            for e in gen.edges_out(s.key):
                target = gen.symbol(e.target)
                wanted = Confidence(e.confidence).is_exact or not exact
                n += int(target is not None and target.repository == provider and wanted)
    return n


def _index_and_publish(
    tmp: Path,
    pair: list[tuple[str, Path]],
    languages: str,
    consumer_env: dict[str, str],
    job_env: dict[str, str] | None = None,
    incomplete: str = "",
) -> tuple[Path, Path]:
    """``kivgraph index`` of both in one home; each bundle built in its own home; ``kivgraph publish`` in a third.
    ``incomplete``: the failure every bundle states (an analyzer this machine cannot run), else each is complete."""
    (provider, _), (consumer, _) = pair
    for name, root in pair:
        for home in ("index", "publisher"):
            done = kivgraph(tmp / home, "init", "--repository", f"{name}={root}", "--languages", languages)
            assert done.returncode == 0, done.stderr
        env = {**(job_env or {}), **(consumer_env if name == consumer else {})}
        built = bundle_job(tmp / f"job-{name}", name, root, languages, tmp / f"{name}.kgbundle", env=env)
        assert built.returncode == 0, built.stderr
        if incomplete:
            assert "incomplete" in built.stdout and incomplete in built.stdout, built.stdout
        else:
            assert "complete" in built.stdout and "incomplete" not in built.stdout, built.stdout
    indexed = kivgraph(tmp / "index", "index", env=job_env)
    assert indexed.returncode == 0, indexed.stderr
    bundles = [a for name, _ in pair for a in ("--bundle", str(tmp / f"{name}.kgbundle"))]
    published = kivgraph(tmp / "publisher", "publish", *bundles)
    assert published.returncode == 0, published.stderr
    assert f"{provider}: bundle at" in published.stdout and f"{consumer}: bundle at" in published.stdout
    return tmp / "index", tmp / "publisher"


def _assert_same(
    index_home: Path, publisher_home: Path, consumer: str, provider: str, tmp: Path, *, exact: bool = True
) -> int:
    with _generation(index_home) as a, _generation(publisher_home) as b:
        rows_a, rows_b = stored_rows(a), stored_rows(b)
        assert rows_a == rows_b, "\n".join(differences(rows_a, rows_b))
        answers_a, answers_b = tool_answers(a), tool_answers(b)
        assert answers_a == answers_b, "\n".join(differences(answers_a, answers_b))
        crossing = _cross_exact(b, consumer, provider, exact=exact)
        assert crossing > 0
    # A publisher with no checkout at all (nothing registered): linking reads what the bundles carry, so every
    # record is the same but the repository's root, and every answer but what names a checkout.
    bare = tmp / "checkout-less"
    bundles = [a for name in (provider, consumer) for a in ("--bundle", str(tmp / f"{name}.kgbundle"))]
    published = kivgraph(bare, "publish", *bundles)
    assert published.returncode == 0, published.stderr
    with _generation(index_home) as a, _generation(bare) as c:
        rows_a, rows_c = stored_rows(a), stored_rows(c)
        for rows in (rows_a, rows_c):
            for key in [k for k in rows if k.startswith("repository ")]:
                rows[key] = {**rows[key], "root": ""}
        assert rows_a == rows_c, "\n".join(differences(rows_a, rows_c))
        checkout = ("get_source ", "graph_status", "list_repositories")
        roots = [r.root for r in a.repositories()]
        answers_a = {k: _unrooted(v, roots) for k, v in tool_answers(a).items() if not k.startswith(checkout)}
        answers_c = {k: v for k, v in tool_answers(c).items() if not k.startswith(checkout)}
        assert answers_a == answers_c, "\n".join(differences(answers_a, answers_c))
    return crossing


def _unrooted(value: object, roots: list[str]) -> object:
    """An answer with the checkouts' directories taken out of its text (a grep fallback names files under them)."""
    if isinstance(value, dict):
        out = {k: _unrooted(v, roots) for k, v in value.items()}
        if isinstance(value.get("paths"), list) and "pattern" in value:
            # a grep fallback names a checkout's own directory; "." where there is none
            out["paths"] = ["." if p in roots else _unrooted(p, roots) for p in value["paths"]]
        return out
    if isinstance(value, list):
        return [_unrooted(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root + "/", "").replace(root, "")
    return value


def _without_provider(tmp: Path, name: str, root: Path, languages: str, env: dict[str, str], provider: Path) -> int:
    """The consumer's bundle built where its provider is not installed, published with the provider's bundle:
    how many exact edges cross into the provider then."""
    built = bundle_job(tmp / "bare-job", name, root, languages, tmp / "bare.kgbundle", env=env)
    assert built.returncode == 0, built.stderr
    home = tmp / "bare-publisher"
    published = kivgraph(home, "publish", "--bundle", str(provider), "--bundle", str(tmp / "bare.kgbundle"))
    assert published.returncode == 0, published.stderr
    with _generation(home) as gen:
        return _cross_exact(gen, name, next(r.name for r in gen.repositories() if r.name != name))


def test_python_pair_from_bundles_with_the_provider_installed_as_a_wheel(tmp_path: Path) -> None:
    shapes = copy_fixture("pyrepo_a", tmp_path)
    drawing = copy_fixture("pyrepo_b", tmp_path)
    git_commit(shapes)
    git_commit(drawing)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    wheel = write_wheel(shapes / "src", "shapes", "0.1.0", tmp_path)
    site = next((venv / "lib").glob("python3*/site-packages"))
    with zipfile.ZipFile(wheel) as z:  # what pip does with a pure-Python wheel: unpack it into site-packages
        z.extractall(site)
    active = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    index_home, publisher = _index_and_publish(tmp_path, [("shapes", shapes), ("drawing", drawing)], "python", active)
    crossing = _assert_same(index_home, publisher, "drawing", "shapes", tmp_path)
    assert (
        _without_provider(tmp_path, "drawing", drawing, "python", {"VIRTUAL_ENV": ""}, tmp_path / "shapes.kgbundle")
        < crossing
    )


def test_typescript_pair_through_a_published_package_from_bundles(tmp_path: Path) -> None:
    lib = write_repo(tmp_path / "lib", PROVIDER)
    app = write_repo(tmp_path / "app", CONSUMER)
    (app / ".gitignore").write_text("node_modules/\n")
    git_commit(lib)
    git_commit(app)
    write_repo(app / "node_modules" / "@fx" / "lib", PUBLISHED)  # installed, as `npm ci` would, after checkout
    index_home, publisher = _index_and_publish(tmp_path, [("lib", lib), ("app", app)], "typescript", {})
    crossing = _assert_same(index_home, publisher, "app", "lib", tmp_path)
    with _generation(publisher) as gen:
        assert gen.repository("app") is not None
    bare = tmp_path / "bare-app"
    subprocess.run(["git", "clone", "-q", str(app), str(bare)], check=True)  # no node_modules in the clone
    assert _without_provider(tmp_path, "app", bare, "typescript", {}, tmp_path / "lib.kgbundle") < crossing


GEO = {
    "go.mod": "module example.com/geo\n\ngo 1.21\n",
    "shape.go": "package geo\n\n// Shape has an area.\ntype Shape interface {\n\tArea() float64\n}\n\n"
    "// Circle is round.\ntype Circle struct{ R float64 }\n\n"
    "// Area of the circle.\nfunc (c Circle) Area() float64 { return 3 * c.R * c.R }\n\n"
    '// Name of the circle.\nfunc (c Circle) Name() string { return "circle" }\n\n'
    "// NewCircle makes one.\nfunc NewCircle(r float64) Circle { return Circle{R: r} }\n\n"
    "// Unused is called by nobody.\nfunc Unused() {}\n",
}
# A dependency no repository registers: outside the graph in both routes.
EXT = {
    "go.mod": "module example.com/ext\n\ngo 1.21\n",
    "ext.go": "package ext\n\n// Labeler labels.\ntype Labeler interface {\n\tLabel() string\n}\n\n"
    "// Use calls Label through the interface.\nfunc Use(l Labeler) string { return l.Label() }\n",
}
APP = {
    "go.mod": "module example.com/app\n\ngo 1.21\n\nrequire (\n\texample.com/ext v1.0.0\n\texample.com/geo v1.0.0\n)\n",
    # Named is implemented by the provider's Circle, which cannot know it: only the consumer's run pairs them.
    # Tag implements the outside Labeler and is converted to it (a blind spot: ext calls Label); Square implements the
    # provider's Shape and is converted to it (no blind spot once geo is registered: its calls are in the graph).
    "app.go": 'package app\n\nimport (\n\t"example.com/ext"\n\t"example.com/geo"\n)\n\n'
    "// Named has a name.\ntype Named interface {\n\tName() string\n}\n\n"
    '// Tag is labelled.\ntype Tag struct{}\n\n// Label of the tag.\nfunc (Tag) Label() string { return "tag" }\n\n'
    "// Square is square.\ntype Square struct{ S float64 }\n\n// Area of the square.\n"
    "func (q Square) Area() float64 { return q.S * q.S }\n\n"
    "// Total adds areas.\nfunc Total(shapes []geo.Shape) float64 {\n\tt := 0.0\n"
    "\tfor _, s := range shapes {\n\t\tt += s.Area()\n\t}\n\treturn t\n}\n\n// Run uses the provider.\n"
    "func Run() string {\n\tc := geo.NewCircle(2)\n\tvar n Named = c\n\t_ = Total([]geo.Shape{c, Square{S: 1}})\n"
    "\treturn n.Name() + ext.Use(Tag{})\n}\n",
}


def _serve_modules(proxy_root: Path, modules: dict[str, dict[str, str]]) -> None:
    """A module proxy on disk, as GOPROXY=file:// reads it: each module at v1.0.0."""
    for module, files in modules.items():
        at = proxy_root / module / "@v"
        at.mkdir(parents=True)
        (at / "list").write_text("v1.0.0\n")
        (at / "v1.0.0.info").write_text('{"Version":"v1.0.0"}')
        (at / "v1.0.0.mod").write_text(files["go.mod"])
        with zipfile.ZipFile(at / "v1.0.0.zip", "w") as z:
            for rel, text in files.items():
                z.writestr(f"{module}@v1.0.0/{rel}", text)


def test_go_pair_from_bundles_with_the_provider_in_the_module_cache(tmp_path: Path) -> None:
    geo = write_repo(tmp_path / "geo", GEO)
    app = write_repo(tmp_path / "app", APP)
    _serve_modules(tmp_path / "proxy", {"example.com/geo": GEO, "example.com/ext": EXT})
    modcache = tmp_path / "modcache"
    fetch = {
        **os.environ,
        "GOPROXY": f"file://{tmp_path / 'proxy'}",
        "GOSUMDB": "off",
        "GOMODCACHE": str(modcache),
        "GOFLAGS": "-mod=mod",
    }
    tidy = subprocess.run(["go", "mod", "tidy"], cwd=app, env=fetch, capture_output=True, text=True)
    assert tidy.returncode == 0, tidy.stderr  # go.sum written, the module in the module cache
    git_commit(geo)
    git_commit(app)
    cache = {"GOMODCACHE": str(modcache)}
    index_home, publisher = _index_and_publish(tmp_path, [("geo", geo), ("app", app)], "go", {}, job_env=cache)
    crossing = _assert_same(index_home, publisher, "app", "geo", tmp_path)
    with _generation(publisher) as gen:  # the provider's Circle implements the consumer's Named, paired in its job
        circle = next(s for s in gen.declarations("geo", "shape.go") if s.qualified_name == "Circle")
        targets = [gen.symbol(e.target) for e in gen.edges_out(circle.key)]
        assert ("app", "Named") in [(t.repository, t.qualified_name) for t in targets if t is not None]
        rows = [(u.reason, u.detail) for u in gen.unresolved_in("app")]
        assert any(r == "EXTERNAL_CONVERSION" and "example.com/ext.Labeler" in d for r, d in rows), rows
        assert not any("example.com/geo" in d for _r, d in rows), rows  # geo is in the graph, as when indexed
    empty = {"GOMODCACHE": str(tmp_path / "empty-modcache")}
    assert _without_provider(tmp_path, "app", app, "go", empty, tmp_path / "geo.kgbundle") < crossing


GEO_KIT = {
    "src/lib.rs": "mod shapes;\npub mod units;\npub use shapes::{Area, Rect};\n",
    "src/shapes.rs": "/// Has an area.\npub trait Area {\n    fn area(&self) -> u64;\n}\n\n"
    "/// A rectangle.\npub struct Rect {\n    pub w: u64,\n    pub h: u64,\n}\n\n"
    "impl Rect {\n    /// A square one.\n    pub fn square(side: u64) -> Rect {\n        Rect { w: side, h: side }\n    }\n"
    "    /// Called by nobody.\n    pub fn unused(&self) {}\n}\n\n"
    "impl Area for Rect {\n    fn area(&self) -> u64 {\n        self.w * self.h\n    }\n}\n",
    "src/units.rs": "/// One meter.\npub const METER: u64 = 1;\n",
}
GEO_KIT_MANIFEST = '[package]\nname = "geo-kit"\nversion = "0.1.0"\nedition = "2021"\n'
RUST_APP = {
    "Cargo.toml": '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\ngeo-kit = "0.1"\n',
    "src/main.rs": "use geo_kit::units::METER;\nuse geo_kit::{Area, Rect};\n\n/// A tile.\nstruct Tile {\n    size: u64,\n}\n\n"
    "impl Area for Tile {\n    fn area(&self) -> u64 {\n        self.size * METER\n    }\n}\n\n"
    "/// Through the trait.\nfn measure(a: &dyn Area) -> u64 {\n    a.area()\n}\n\n"
    "fn main() {\n    let r = Rect::square(3);\n    let direct = geo_kit::Rect::square(2);\n"
    "    let _ = (r.w, direct.area(), measure(&Tile { size: 1 }));\n}\n",
}


def test_rust_pair_from_bundles_with_the_provider_from_a_crate_registry(tmp_path: Path) -> None:
    """The provider is published to a crate registry (the test's, on 127.0.0.1) and the consumer depends on it by
    version (``geo-kit = "0.1"``), as a cargo job sees it: ``cargo fetch`` puts the crate in the job's cargo home.
    ``kivgraph index`` of both patches the dependency to the registered checkout."""
    from indexer.languages.rust import toolchain
    from indexer.languages.rust.analyzer import AnalyzerFailed
    from tests.cargo_registry import LocalRegistry

    try:
        toolchain.identity()
    except AnalyzerFailed as exc:
        pytest.skip(f"RUST-ANALYZER UNAVAILABLE: {exc}")
    lib = write_repo(tmp_path / "lib", {**GEO_KIT, "Cargo.toml": GEO_KIT_MANIFEST})
    app = write_repo(tmp_path / "app", RUST_APP)
    registry = LocalRegistry(mirror=Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo"))
    registry.add("geo-kit", "0.1.0", files=GEO_KIT)
    with registry:
        cargo_home = registry.user_home(tmp_path / "cargo-home")
        job = {"CARGO_HOME": str(cargo_home)}
        fetched = subprocess.run(
            ["cargo", "fetch", "--manifest-path", str(app / "Cargo.toml")],
            env={**os.environ, **job},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert fetched.returncode == 0, fetched.stderr  # Cargo.lock written, geo-kit in the job's cargo home
        assert list((cargo_home / "registry" / "src").glob("*/geo-kit-0.1.0/src/shapes.rs"))
        setup = subprocess.run(  # the job's setup step (``make setup``): the standard library's dependencies
            [
                sys.executable,
                "-c",
                "from indexer.languages.rust import toolchain as t; print(t.fetch_sysroot_dependencies())",
            ],
            env={**os.environ, **job},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert setup.returncode == 0 and "FAILED" not in setup.stdout, setup.stdout + setup.stderr
        git_commit(lib)
        git_commit(app)
        index_home, publisher = _index_and_publish(tmp_path, [("lib", lib), ("app", app)], "rust", {}, job_env=job)
        crossing = _assert_same(index_home, publisher, "app", "lib", tmp_path)
        empty = {"CARGO_HOME": str(registry.user_home(tmp_path / "empty-cargo-home"))}
        bare = _without_provider(tmp_path, "app", app, "rust", empty, tmp_path / "lib.kgbundle")
    assert bare < crossing


def test_dart_pair_on_the_candidate_route_from_bundles_with_the_provider_in_the_pub_cache(tmp_path: Path) -> None:
    """No Dart SDK exists on this machine, so scip-dart cannot run in either route (each bundle says so) and the
    comparison is of the CANDIDATE route. The consumer depends on ``geo`` by version; its job's ``dart pub get``
    would write ``.dart_tool/package_config.json`` naming the pub cache's copy, written here as pub writes it.

    The fallback binds ``package:geo/...`` to the registered repository whose pubspec names ``geo`` when linking,
    whatever the job installed: a consumer bundle built without the provider installed gets the same edges, so
    that half of the other pairs' check does not apply here."""
    geo = copy_fixture("dart_geo", tmp_path)
    app = copy_fixture("dart_app", tmp_path)
    (app / "pubspec.yaml").write_text((app / "pubspec.yaml").read_text().replace("path: ../dart_geo", "^0.1.0"))
    (app / ".gitignore").write_text(".dart_tool/\n")
    cache = tmp_path / "pub-cache" / "hosted" / "pub.dev" / "geo-0.1.0"
    shutil.copytree(geo, cache)
    config = {
        "configVersion": 2,
        "packages": [
            {"name": "geo", "rootUri": cache.as_uri(), "packageUri": "lib/", "languageVersion": "3.0"},
            {"name": "app", "rootUri": "../", "packageUri": "lib/", "languageVersion": "3.0"},
        ],
        "generator": "pub",
    }
    git_commit(geo)
    git_commit(app)
    (app / ".dart_tool").mkdir()
    (app / ".dart_tool" / "package_config.json").write_text(json.dumps(config, indent=2))
    job = {"PUB_CACHE": str(tmp_path / "pub-cache")}
    index_home, publisher = _index_and_publish(
        tmp_path, [("geo", geo), ("app", app)], "dart", {}, job_env=job, incomplete="scip-dart"
    )
    crossing = _assert_same(index_home, publisher, "app", "geo", tmp_path, exact=False)
    assert crossing > 0


JAVA_LIB_POM = (
    '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    "<groupId>kivgraph.test</groupId><artifactId>geo-lib</artifactId><version>1.0</version></project>\n"
)
JAVA_LIB = {
    "pom.xml": JAVA_LIB_POM,
    "src/main/java/org/geo/Shape.java": "package org.geo;\n\n/** Has an area. */\npublic interface Shape {\n"
    "    double area();\n}\n",
    "src/main/java/org/geo/Base.java": "package org.geo;\n\n/** A base with a no-argument constructor. */\n"
    "public class Base implements Shape {\n    public Base() {}\n\n    public Base(double r) {}\n\n"
    "    public double area() { return 0; }\n\n    public static Base of(int n) { return new Base(n); }\n\n"
    "    public static Base of(String s) { return new Base(); }\n\n    public static void unused() {}\n}\n",
    "src/main/java/org/geo/Unit.java": "package org.geo;\n\n/** Units. */\npublic enum Unit {\n    METER, FOOT;\n\n"
    "    public double scale() { return this == METER ? 1 : 0.3; }\n}\n",
}
JAVA_APP = {
    "pom.xml": '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    "<groupId>kivgraph.test</groupId><artifactId>app</artifactId><version>1.0</version><dependencies>"
    "<dependency><groupId>kivgraph.test</groupId><artifactId>geo-lib</artifactId><version>1.0</version></dependency>"
    "</dependencies></project>\n",
    "src/main/java/org/app/Square.java": "package org.app;\n\nimport org.geo.Base;\nimport org.geo.Shape;\n\n"
    "/** A square: its constructor's implicit super() runs the provider's Base(). */\npublic class Square extends Base {\n"
    "    private final double side;\n\n    public Square(double side) {\n        this.side = side;\n    }\n\n"
    "    @Override\n    public double area() { return side * side; }\n\n"
    "    static double total(Shape[] shapes) {\n        double t = 0;\n        for (Shape s : shapes) {\n"
    "            t += s.area();\n        }\n        return t;\n    }\n}\n",
    "src/main/java/org/app/Main.java": "package org.app;\n\nimport org.geo.Base;\nimport org.geo.Shape;\n"
    "import org.geo.Unit;\n\n/** Uses the provider. */\npublic class Main {\n    public static void main(String[] args) {\n"
    '        Shape[] all = {new Square(2), Base.of(3), Base.of("x"), new Base(1.5)};\n'
    "        System.out.println(Square.total(all) * Unit.FOOT.scale());\n    }\n}\n",
}


def _install_maven_artifact(lib: Path, local: Path) -> None:
    """What ``mvn install`` with its sources jar leaves in a local Maven repository: the pom, the jar of the
    compiled classes, the sources jar (javac and zip here: no plugin needs fetching)."""
    at = local / "kivgraph" / "test" / "geo-lib" / "1.0"
    at.mkdir(parents=True)
    (at / "geo-lib-1.0.pom").write_text(JAVA_LIB_POM)
    sources = sorted((lib / "src/main/java").rglob("*.java"))
    classes = lib.parent / "geo-lib-classes"
    done = subprocess.run(["javac", "-d", str(classes), *map(str, sources)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(at / "geo-lib-1.0.jar", "w") as jar:
        for c in sorted(classes.rglob("*.class")):
            jar.write(c, c.relative_to(classes).as_posix())
    with zipfile.ZipFile(at / "geo-lib-1.0-sources.jar", "w") as jar:
        for src in sources:
            jar.write(src, src.relative_to(lib / "src/main/java").as_posix())


def test_java_pair_from_bundles_with_the_provider_in_the_local_maven_repository(tmp_path: Path) -> None:
    """The provider installed into the job's local Maven repository (pom, jar and sources jar, as ``mvn install``
    with sources leaves it, or as Maven Central serves an artifact); the consumer depends on its coordinates.
    javac reads the installed sources as it reads a registered provider's, so each use names its declaration by
    the artifact's identity, bound to the repository that builds it when the bundles are linked."""
    from indexer.languages.java import analyzer as java_analyzer
    from indexer.languages.spec import AnalyzerFailed

    try:
        java_analyzer.identity()
    except AnalyzerFailed as exc:
        pytest.skip(f"SCIP-JAVA UNAVAILABLE: {exc}")
    lib = write_repo(tmp_path / "lib", JAVA_LIB)
    app = write_repo(tmp_path / "app", JAVA_APP)
    git_commit(lib)
    git_commit(app)
    local = tmp_path / "m2"
    _install_maven_artifact(lib, local)
    job = {"MAVEN_LOCAL_REPOSITORY": str(local)}
    index_home, publisher = _index_and_publish(tmp_path, [("lib", lib), ("app", app)], "java", {}, job_env=job)
    crossing = _assert_same(index_home, publisher, "app", "lib", tmp_path)
    with _generation(publisher) as gen:  # the implicit super() into the provider is there
        square = next(
            s for s in gen.declarations("app", "src/main/java/org/app/Square.java") if s.kind == "constructor"
        )
        targets = [gen.symbol(e.target) for e in gen.edges_out(square.key)]
        assert ("lib", "org.geo.Base.Base()") in [(t.repository, t.qualified_name) for t in targets if t is not None]
    empty = {"MAVEN_LOCAL_REPOSITORY": str(tmp_path / "empty-m2")}
    assert _without_provider(tmp_path, "app", app, "java", empty, tmp_path / "lib.kgbundle") < crossing
    with _generation(tmp_path / "bare-publisher") as gen:  # and that consumer says where it is blind
        rows = [(u.reason, u.package, u.path) for u in gen.unresolved_scopes("app")]
        assert ("UNLINKED_DEPENDENCY", "kivgraph.test:geo-lib", "") in rows, rows
        from server.tools.traversal import get_blast_radius

        answer = get_blast_radius(gen, {"qualified_name": "org.app.Main.main", "view": "full"})
        assert answer["completeness"]["verdict"] == "LOWER_BOUND", answer["completeness"]
