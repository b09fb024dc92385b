"""Go modules nested inside a repository are each type-checked (a polyglot repository rarely has a root go.mod)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapshot_format.layout import resolve_layout
from snapshot_format.reader import open_current
from snapshot_format.vocab import Confidence, EdgeKind
from tests.helpers import run_kivgraph, write_repo

pytestmark = pytest.mark.analyzers

FILES = {
    "tools/gen/go.mod": "module example.com/gen\n\ngo 1.21\n",
    "tools/gen/main.go": 'package main\n\nimport "example.com/gen/render"\n\nfunc main() { render.Page() }\n',
    "tools/gen/render/render.go": "package render\n\n// Page renders.\nfunc Page() string { return helper() }\n\n"
    'func helper() string { return "x" }\n',
    "services/api/go.mod": "module example.com/api\n\ngo 1.21\n",
    "services/api/server.go": "package api\n\ntype Server struct{}\n\nfunc (s *Server) Start() { s.listen() }\n\n"
    "func (s *Server) listen() {}\n",
    "scripts/build.py": "def build():\n    return 1\n",
}


def test_every_nested_module_gets_exact_edges_and_go_files_outside_modules_stay_candidates(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "repo", FILES)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "go,python").returncode == 0
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["result"]["index"]["go"]["mode"] == "exact"
    with open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)})) as gen:
        (page,) = gen.symbols_by_qualified_name("Page")
        assert page.package == "example.com/gen/render"
        callers = [e for e in gen.edges_in(page.key, [EdgeKind.CALLS_DIRECT])]
        assert [(gen.symbol(e.source).path, e.confidence) for e in callers] == [  # type: ignore[union-attr]
            ("tools/gen/main.go", Confidence.EXACT_TYPECHECKED)
        ]
        (listen,) = gen.symbols_by_qualified_name("Server.listen")
        (edge,) = list(gen.edges_in(listen.key, [EdgeKind.CALLS_DIRECT]))
        assert edge.confidence == Confidence.EXACT_TYPECHECKED
        assert gen.symbol(edge.source).qualified_name == "Server.Start"  # type: ignore[union-attr]
    assert not (repo / "go.work").exists() and not (repo / "tools" / "gen" / "go.sum").exists()
