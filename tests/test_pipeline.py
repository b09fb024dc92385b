"""The index pipeline end to end on small repositories with the hard cases, through the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from snapshot_format.layout import resolve_layout
from snapshot_format.reader import Generation, open_current
from snapshot_format.vocab import SYNTAX_ONLY_PROVENANCES, Confidence, EdgeKind, Provenance
from tests.helpers import run_kivgraph, write_repo

pytestmark = pytest.mark.e2e

REPO = {
    ".gitignore": "ignored_dir/\n",
    "ignored_dir/hidden.py": "def hidden():\n    return 0\n",
    "vendor/dep.py": "def dep():\n    return 0\n",
    "shapes/__init__.py": '"""Shapes."""\nfrom .base import Shape\n',
    "shapes/base.py": (
        "class Shape:\n"
        "    def area(self):\n"
        "        return 0\n\n"
        "    def describe(self):\n"
        "        return f'{self.area()}'\n"
    ),
    "shapes/square.py": (
        "from shapes.base import Shape\n\n\n"
        "class Square(Shape):\n"
        "    def area(self):\n"
        "        return 4\n\n"
        "    def report(self):\n"
        "        return self.describe()\n\n\n"
        "class Circle(Shape):\n"
        "    def area(self):\n"
        "        return 3\n"
    ),
    "app.py": (
        "import shapes.square as sq\n\n\n"
        "def main():\n"
        "    s = sq.Square()\n"
        "    return s.report()\n\n\n"
        "def unused():\n"
        "    return 1\n"
    ),
    "broken.py": "def fine():\n    return 1\n\n\ndef oops(:\n    pass\n",
}


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    repo = write_repo(tmp_path / "repo", REPO)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    return home, repo


def _gen(home: Path) -> Generation:
    return open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)}))


def _one(gen: Generation, qn: str):
    (sym,) = gen.symbols_by_qualified_name(qn)
    return sym


def _callers(gen: Generation, qn: str) -> set[str]:
    sym = _one(gen, qn)
    return {
        gen.symbol(e.source).qualified_name  # type: ignore[union-attr]
        for e in gen.edges_in(sym.key, [EdgeKind.CALLS_DIRECT])
    }


def test_a_broken_file_is_partial_and_keeps_what_parses_while_the_rest_indexes(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    with _gen(home) as gen:
        broken = gen.file("repo", "broken.py")
        assert broken is not None and broken.status == "partial"
        assert broken.reason.startswith("syntax error at line 5; lines 5-6 not parsed")
        assert gen.symbols_by_qualified_name("broken.fine")  # the good function before the error stays
        assert gen.symbols_by_qualified_name("app.main")
        assert gen.counts().partial_files == 1 and gen.counts().failed_files == 0


def test_gitignored_and_vendored_files_are_not_indexed(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    with _gen(home) as gen:
        assert gen.file("repo", "ignored_dir/hidden.py") is None
        assert not gen.symbols_by_name("hidden")
        vendored = gen.file("repo", "vendor/dep.py")
        assert vendored is not None and vendored.status == "skipped" and "vendored" in vendored.reason
        assert not gen.symbols_by_name("dep")


def test_methods_of_the_same_name_keep_their_own_callers(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    with _gen(home) as gen:
        assert _callers(gen, "shapes.base.Shape.area") == {"shapes.base.Shape.describe"}
        assert _callers(gen, "shapes.square.Circle.area") == set()
        assert "app.main" in _callers(gen, "shapes.square.Square.report")


def test_self_calls_resolve_through_the_enclosing_class_and_its_base(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    with _gen(home) as gen:
        assert "shapes.square.Square.report" in _callers(gen, "shapes.base.Shape.describe")
        square = _one(gen, "shapes.square.Square")
        bases = {gen.symbol(e.target).qualified_name for e in gen.edges_out(square.key, [EdgeKind.EXTENDS])}  # type: ignore[union-attr]
        assert bases == {"shapes.base.Shape"}


def test_a_call_through_an_import_alias_binds_to_the_module_symbol(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    with _gen(home) as gen:
        assert "app.main" in _callers(gen, "shapes.square.Square")


def test_no_edge_is_exact_without_analyzer_evidence_and_nothing_calls_the_unused_function(
    indexed: tuple[Path, Path],
) -> None:
    home, _repo = indexed
    with _gen(home) as gen:
        unused = _one(gen, "app.unused")
        assert list(gen.edges_in(unused.key)) == []
        seen = 0
        for sym in gen.declarations("repo", "", directory=True):
            for edge in gen.edges_out(sym.key):
                seen += 1
                if Provenance(edge.provenance) in SYNTAX_ONLY_PROVENANCES:
                    assert edge.confidence == Confidence.CANDIDATE
                if Confidence(edge.confidence).is_exact:
                    assert edge.provenance in (Provenance.PYTHON_INDEXER_USE, Provenance.PYTHON_INDEXER_DEF)
        assert seen > 0
        assert gen.repository("repo").analyses[0].mode in ("exact", "fallback")  # type: ignore[union-attr]


def test_an_unchanged_second_index_re_extracts_nothing(indexed: tuple[Path, Path]) -> None:
    home, repo = indexed
    again = run_kivgraph(home, "index", "--json")
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout.splitlines()[-1])["result"]
    assert result["cache"]["misses"] == 0
    assert result["cache"]["hits"] == result["index"]["python"]["files"]
    assert result["index"]["python"]["extracted"] == 0
    (repo / "app.py").write_text(REPO["app.py"] + "\n\ndef added():\n    return unused()\n")
    third = json.loads(run_kivgraph(home, "index", "--json").stdout.splitlines()[-1])["result"]
    assert third["index"]["python"]["extracted"] == 1
    with _gen(home) as gen:
        assert _callers(gen, "app.unused") == {"app.added"}


def test_verify_mode_re_extracts_and_agrees_with_the_cache(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    result = run_kivgraph(home, "index", "--json", "--fact-cache", "verify")
    assert result.returncode == 0, result.stderr
    cache = json.loads(result.stdout.splitlines()[-1])["result"]["cache"]
    assert cache["verified"] > 0 and cache["hits"] == 0


def test_status_reports_files_symbols_edges_and_unresolved_per_repository(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    result = run_kivgraph(home, "status", "--json")
    assert result.returncode == 0
    status = json.loads(result.stdout)
    assert status["status"] == "ready"
    (repo,) = status["repositories"]
    assert repo["languages"]["python"]["partial"] == 1
    assert repo["languages"]["python"]["indexed"] >= 4
    assert status["counts"]["edges"] > 0
    assert repo["analyses"][0]["mode"] == "exact"  # scip-python is installed by `make setup`
    assert repo["analyses"][0]["analyzer"] == "scip-python"
    text = run_kivgraph(home, "status").stdout
    assert "python analysis: exact" in text


def test_doctor_passes_on_a_healthy_install_and_fails_on_a_broken_config(indexed: tuple[Path, Path]) -> None:
    home, _repo = indexed
    ok = run_kivgraph(home, "doctor", "--deep")
    assert ok.returncode == 0, ok.stdout
    assert "digest verified" in ok.stdout and "doctor: PASS" in ok.stdout
    (home / "kivgraph.toml").write_text("version = 1\nsurprise = true\n")
    bad = run_kivgraph(home, "doctor")
    assert bad.returncode == 1 and "unknown key 'surprise'" in bad.stdout


def test_register_restores_the_registry_when_indexing_fails(tmp_path: Path) -> None:
    home = tmp_path / "home"
    good = write_repo(tmp_path / "good", {"a.py": "def a():\n    return 1\n"})
    assert run_kivgraph(home, "init", str(good), "--languages", "python").returncode == 0
    before = (home / "kivgraph.toml").read_text()
    payload = json.dumps([{"name": "good", "path": str(tmp_path / "elsewhere"), "languages": ["python"]}])
    result = run_kivgraph(home, "index", "--json", "--register", payload)
    assert result.returncode == 1
    assert "already registered" in json.loads(result.stdout.splitlines()[-1])["result"]["error"]
    assert (home / "kivgraph.toml").read_text() == before


def test_repository_option_re_reads_only_that_repository_and_keeps_the_others(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one = write_repo(tmp_path / "one", {"a.py": "def alpha():\n    return 1\n"})
    two = write_repo(tmp_path / "two", {"b.py": "def beta():\n    return 2\n"})
    assert run_kivgraph(home, "init", str(one), str(two), "--languages", "python").returncode == 0
    assert run_kivgraph(home, "index").returncode == 0
    (one / "a.py").write_text("def alpha2():\n    return 1\n")
    (two / "b.py").write_text("def beta2():\n    return 2\n")
    result = run_kivgraph(home, "index", "--json", "--repository", "two")
    assert result.returncode == 0, result.stderr
    with _gen(home) as gen:
        assert gen.symbols_by_name("alpha") and not gen.symbols_by_name("alpha2")  # carried over as last indexed
        assert gen.symbols_by_name("beta2") and not gen.symbols_by_name("beta")  # re-read from disk
        assert {r.name for r in gen.repositories()} == {"one", "two"}
    bad = run_kivgraph(home, "index", "--repository", "three")
    assert bad.returncode == 2 and "--repository three: not registered" in bad.stderr  # a usage error
