"""The TypeScript exact pass end to end through the real CLI: exact mode, cache, and degradation when missing."""

from __future__ import annotations

import json
from pathlib import Path

from indexer.scip import typescript as scip_ts
from tests.helpers import run_kivgraph, write_repo
from tests.test_typescript_annotated import require_analyzer

_FILES = {
    "src/a.ts": "export function f(): number {\n  return 1;\n}\n",
    "src/b.ts": "import { f } from './a';\n\nexport function g(): number {\n  return f();\n}\n",
    "src/c.js": "import { g } from './b';\n\nexport function h() {\n  return g();\n}\n",
}


def _index(home: Path, **env: str) -> dict[str, object]:
    result = run_kivgraph(home, "index", "--json", **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])["result"]


def test_a_missing_analyzer_degrades_typescript_to_the_fallback_with_the_reason_in_status(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", _FILES)
    env = {scip_ts.EXECUTABLE_ENV: str(tmp_path / "no-such-scip-typescript")}
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript,javascript", **env).returncode == 0
    report = _index(home, **env)
    assert report["index"]["typescript"]["mode"] == "fallback"  # type: ignore[index]
    assert report["index"]["javascript"]["mode"] == "fallback"  # type: ignore[index]
    status = json.loads(run_kivgraph(home, "status", "--json", **env).stdout)
    reasons = {a["language"]: a["reason"] for a in status["repositories"][0]["analyses"]}
    assert reasons["typescript"].startswith("scip-typescript failed: scip-typescript not found at")
    assert set(status["edges_by_confidence"]) == {"CANDIDATE"}
    doctor = run_kivgraph(home, "doctor", **env).stdout
    assert "analyzer.typescript.exact: WARN (scip-typescript not found" in doctor


def test_typescript_and_javascript_index_exactly_and_the_analyzer_run_is_cached(tmp_path: Path) -> None:
    require_analyzer()
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", _FILES)
    before = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*"))
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript,javascript").returncode == 0
    first = _index(home)
    index = first["index"]
    assert index["typescript"]["mode"] == "exact" and index["javascript"]["mode"] == "exact"  # type: ignore[index]
    assert index["typescript"]["analyzer_runs"] == 1  # type: ignore[index]
    assert "analyzer.typescript" in first["timings"]  # type: ignore[operator]
    assert sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*")) == before  # nothing written
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    # b and c each import a module, a name from it and call that name: every edge is the checker's
    assert status["edges_by_confidence"] == {"EXACT_TYPECHECKED": 6}
    second = _index(home)
    assert second["index"]["typescript"]["analyzer_runs"] == 0  # type: ignore[index]
    assert second["index"]["typescript"]["analyzer_cache_hits"] == 1  # type: ignore[index]
