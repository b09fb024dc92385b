"""An index built elsewhere: a repository names a SCIP index another tool wrote (``scip = "index.scip"``).

The Scala fixture (tests/fixtures/scip_scala) is what scalac with scalameta's SemanticDB plugin and
scip-java's ``index-semanticdb`` write: kivgraph has no Scala grammar or adapter, so its declarations come
from the index alone. A Java repository's index (written by the scip-java route in a test marked
``analyzers``) is joined with tree-sitter-java's declarations instead.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from indexer.config import ConfigError, load
from indexer.run import run_index
from indexer.scip.decode import decode_index
from snapshot_format.layout import StateLayout
from snapshot_format.reader import open_current
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.helpers import copy_fixture

FIXTURE = Path(__file__).parent / "fixtures" / "scip_scala"


def _git(root: Path) -> str:
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(root), *cmd], check=True, capture_output=True)
    return subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def _config(home: Path, entries: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "kivgraph.toml"
    path.write_text("version = 1\n\n" + entries)
    return path


def _index(home: Path, config: Path):
    layout = StateLayout(config_path=config, state_dir=home / "state")
    run_index(load(config), layout)
    return open_current(layout)


def _incoming(gen, qn: str) -> list[tuple[str, str, int]]:
    (subject,) = gen.symbols_by_qualified_name(qn)
    out = []
    for e in gen.edges_in(subject.key):
        source = gen.symbol(e.source)
        assert source is not None
        out.append((EdgeKind(e.kind).name, source.qualified_name, e.line))
        assert e.confidence == Confidence.EXACT_TYPECHECKED
        assert e.provenance in (Provenance.SCIP_INDEX_USE, Provenance.SCIP_INDEX_DEF)
    return sorted(out)


def test_a_scala_index_written_by_another_tool_gives_declarations_and_exact_edges(tmp_path: Path) -> None:
    repo = copy_fixture("scip_scala", tmp_path)
    (repo / "generate.sh").unlink()
    commit = _git(repo)
    config = _config(
        tmp_path / "home", f'[[repository]]\nname = "geo"\npath = "{repo}"\nlanguages = []\nscip = "index.scip"\n'
    )
    with _index(tmp_path / "home", config) as gen:
        declared = {
            (s.qualified_name, s.kind, s.start_line, s.end_line)
            for s in gen.declarations("geo", "src/main/scala/geo/Shapes.scala")
        }
        assert {
            ("geo.Shape", "trait", 3, 6),
            ("geo.Shape.area", "method", 4, 4),
            ("geo.Circle", "class", 8, 10),
            ("geo.Circle.area", "method", 9, 10),
            ("geo.Shapes", "class", 12, 19),
            ("geo.Shapes.total", "method", 13, 13),
            ("geo.Shapes.main", "method", 14, 19),
        } <= declared
        assert _incoming(gen, "geo.Shapes.total") == [("CALLS_DIRECT", "geo.Shapes.main", 16)]
        assert _incoming(gen, "geo.Shape.area") == [
            ("IMPLEMENTS", "geo.Circle.area", 9),
            ("REFERENCES", "geo.Shape.describe", 5),
            ("REFERENCES", "geo.Shapes.total", 13),
        ]
        assert ("CALLS_DIRECT", "geo.Shapes.main", 15) in _incoming(gen, "geo.Circle")
        (record,) = gen.repositories()
        scip = next(a for a in record.analyses if a.language == "scip")
        assert scip.mode == "exact" and scip.analyzer == "scip-java" and scip.analyzer_version == "0.10.3"
        assert f"commit {commit[:12]}" in scip.reason and "index.scip" in scip.reason
        scala = next(a for a in record.analyses if a.language == "scala")
        assert scala.mode == "exact" and "no scala grammar" in scala.reason
        (f,) = gen.files("geo")
        assert (f.language, f.status, f.analysis) == ("scala", "indexed", "exact")


def test_a_file_newer_than_its_index_is_said_stale_and_a_broken_index_is_a_status_not_a_crash(tmp_path: Path) -> None:
    repo = copy_fixture("scip_scala", tmp_path)
    config = _config(
        tmp_path / "home", f'[[repository]]\nname = "geo"\npath = "{repo}"\nlanguages = []\nscip = "index.scip"\n'
    )
    source = repo / "src/main/scala/geo/Shapes.scala"
    source.write_text(source.read_text() + "\n")
    with _index(tmp_path / "home", config) as gen:
        (record,) = gen.repositories()
        scip = next(a for a in record.analyses if a.language == "scip")
        assert "1 files changed since it was written" in scip.reason
        assert "no commit (the index is not tracked by git)" in scip.reason
    (repo / "index.scip").write_bytes(b"\x0a\xff\xff\xff")  # a length past the end: not a SCIP index
    with _index(tmp_path / "home", config) as gen:
        (record,) = gen.repositories()
        scip = next(a for a in record.analyses if a.language == "scip")
        assert scip.mode == "failed" and "is not a SCIP index" in scip.reason and "scip = " in scip.reason


def test_the_scip_setting_is_checked_and_languages_may_be_empty_only_with_it(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    missing = _config(
        tmp_path / "a", f'[[repository]]\nname = "r"\npath = "{repo}"\nlanguages = []\nscip = "gone.scip"\n'
    )
    with pytest.raises(ConfigError, match=r"repository\[0\]\.scip'.*gone\.scip is not a file"):
        load(missing)
    bare = _config(tmp_path / "b", f'[[repository]]\nname = "r"\npath = "{repo}"\nlanguages = []\n')
    with pytest.raises(ConfigError, match="at least one language"):
        load(bare)


@pytest.mark.analyzers
def test_the_committed_index_is_what_the_real_tools_write(tmp_path: Path) -> None:
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("JAVA OR MAVEN MISSING: the Scala fixture cannot be regenerated")
    work = copy_fixture("scip_scala", tmp_path)
    proc = subprocess.run(
        ["sh", str(work / "generate.sh"), str(tmp_path / "fresh.scip")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    fresh, committed = (decode_index(p.read_bytes()) for p in (tmp_path / "fresh.scip", FIXTURE / "index.scip"))
    assert fresh.metadata.tool_name == committed.metadata.tool_name == "scip-java"
    assert [(d.relative_path, d.occurrences, d.symbols) for d in fresh.documents] == [
        (d.relative_path, d.occurrences, d.symbols) for d in committed.documents
    ]


@pytest.mark.analyzers
def test_a_java_index_is_joined_with_tree_sitter_declarations(tmp_path: Path) -> None:
    from indexer.languages.java import analyzer
    from indexer.languages.spec import AnalyzerFailed
    from tests.java_corpus import build_java_corpus

    try:
        analyzer.identity()
    except AnalyzerFailed as exc:
        pytest.skip(f"SCIP-JAVA UNAVAILABLE: {exc}")
    repo = tmp_path / "lib"
    (repo / "src/p").mkdir(parents=True)
    (repo / "src/p/A.java").write_text("package p;\n\npublic class A {\n    public static int f() { return 1; }\n}\n")
    (repo / "src/p/B.java").write_text("package p;\n\nclass B {\n    int g() {\n        return A.f();\n    }\n}\n")
    built = build_java_corpus([("lib", repo)])
    run = analyzer.run_index(built.corpus.repositories[0], [], timeout=300)
    (repo / "index.scip").write_bytes(run.raw)
    # the language's own analyzer is not asked for: only the index answers exactly
    config = _config(
        tmp_path / "home", f'[[repository]]\nname = "lib"\npath = "{repo}"\nlanguages = ["java"]\nscip = "index.scip"\n'
    )
    layout = StateLayout(config_path=config, state_dir=tmp_path / "home" / "state")
    import os

    os.environ["KIVGRAPH_SCIP_JAVA"] = str(tmp_path / "no-scip-java")
    try:
        run_index(load(config), layout)
    finally:
        del os.environ["KIVGRAPH_SCIP_JAVA"]
    with open_current(layout) as gen:
        (f,) = gen.symbols_by_qualified_name("p.A.f")
        rows = [
            (EdgeKind(e.kind).name, gen.symbol(e.source).qualified_name, e.line, Provenance(e.provenance).name)
            for e in gen.edges_in(f.key)
        ]
        assert rows == [("CALLS_DIRECT", "p.B.g", 5, "SCIP_INDEX_USE")]


def test_the_scip_setting_and_java_network_survive_a_rewrite_of_the_config(tmp_path: Path) -> None:
    from indexer.config import render

    repo = copy_fixture("scip_scala", tmp_path)
    config = _config(
        tmp_path / "home",
        f'[java]\nallow_network = true\n\n[[repository]]\nname = "geo"\npath = "{repo}"\nlanguages = []\n'
        'scip = "index.scip"\n',
    )
    loaded = load(config)
    assert loaded.allows_network("java") and loaded.repositories[0].scip == repo / "index.scip"
    text = render(loaded.raw)
    assert 'scip = "index.scip"' in text and "[java]\nallow_network = true" in text
