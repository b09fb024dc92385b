"""A workspace package reached through node_modules resolves to its built ``.d.ts``; the edge goes to its source.

The language service maps a referenced project's declaration output back to
the project's source; the exact pass does the same with the project's
``outDir``/``rootDir``. One scip-typescript run over a temporary monorepo.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.exact_pass import ExactPass, merge
from indexer.languages import typescript as ts
from indexer.languages.typescript import analyzer as scip_ts
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.helpers import write_repo
from tests.test_typescript_annotated import require_analyzer
from tests.typescript_corpus import build_ts_corpus

pytestmark = pytest.mark.analyzers

_FILES = {
    "tsconfig.json": '{"files": [], "references": [{"path": "packages/core"}, {"path": "packages/app"}]}',
    "packages/core/package.json": '{"name": "@ws/core", "types": "dist/index.d.ts"}',
    "packages/core/tsconfig.json": '{"compilerOptions": {"composite": true, "rootDir": "src", "outDir": "dist",'
    ' "module": "esnext", "moduleResolution": "bundler"}, "include": ["src"]}',
    "packages/core/src/index.ts": 'export { square } from "./math";\n',
    "packages/core/src/math.ts": "export function square(x: number): number {\n  return x * x;\n}\n",
    # the build output tsc -b would have written (ignored by git in real repositories, never indexed)
    "packages/core/dist/index.d.ts": 'export { square } from "./math";\n',
    "packages/core/dist/math.d.ts": "export declare function square(x: number): number;\n",
    "packages/app/package.json": '{"name": "@ws/app", "dependencies": {"@ws/core": "*"}}',
    "packages/app/tsconfig.json": '{"compilerOptions": {"composite": true, "rootDir": "src", "outDir": "dist",'
    ' "module": "esnext", "moduleResolution": "bundler"}, "include": ["src"],'
    ' "references": [{"path": "../core"}]}',
    "packages/app/src/main.ts": 'import { square } from "@ws/core";\n\nexport function area(r: number): number {\n'
    "  return square(r) * 3;\n}\n",
}


def test_a_call_through_a_workspace_link_binds_to_the_referenced_project_source(tmp_path: Path) -> None:
    require_analyzer()
    root = write_repo(tmp_path / "ws", _FILES)
    (root / ".gitignore").write_text("dist/\nnode_modules/\n")
    (root / "node_modules" / "@ws").mkdir(parents=True)
    os.symlink("../../packages/core", root / "node_modules" / "@ws" / "core")
    built = build_ts_corpus([("ws", root)])
    corpus = built.corpora["typescript"]
    (repo,) = corpus.repositories
    assert not any(ff.path.startswith("packages/core/dist/") for ff in repo.files)  # outputs are never indexed
    exact = ExactPass("typescript")
    facts = scip_ts.analyze_repository(repo, corpus, timeout=120)
    exact.outcomes.append(scip_ts.bind(facts, "ws", corpus, scip_ts.ModuleTable(corpus)))
    merged = merge(ts.resolve(corpus), exact)
    source = built.key("packages.app.src.main.area")
    calls = {
        (built.declarations[e.target].path, built.declarations[e.target].qualified_name)
        for e in merged.edges
        if e.source == source
        and e.kind == EdgeKind.CALLS_DIRECT
        and e.confidence == Confidence.EXACT_TYPECHECKED
        and e.provenance == Provenance.TYPESCRIPT_CHECKER
    }
    assert calls == {("packages/core/src/math.ts", "packages.core.src.math.square")}
