"""An analyzer that crashes on one file of a repository: the rest keeps its exact edges.

scip-python 0.6.6 crashes with a Pyright internal error on one test file of django 5.1.4 after eleven
minutes. Here the real scip-python runs behind a small wrapper that fails, the way that crash does, whenever
the file ``poison.py`` is among the files it is asked to analyse; every other run is the real analyzer.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from indexer.languages.python import analyzer as scip_python
from snapshot_format.layout import StateLayout
from snapshot_format.reader import open_current
from snapshot_format.vocab import Confidence, EdgeKind
from tests.helpers import run_kivgraph, write_repo

pytestmark = pytest.mark.analyzers

REPO = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def compute(x: int) -> int:\n    return x + 1\n\n\ndef unused() -> int:\n    return 0\n",
    "pkg/good.py": "from pkg.core import compute\n\n\ndef caller() -> int:\n    return compute(1)\n",
    "pkg/more/__init__.py": "",
    "pkg/more/other.py": "from pkg.core import compute\n\n\ndef also() -> int:\n    return compute(2)\n",
    "pkg/more/poison.py": "from pkg.core import compute\n\n\ndef poisoned() -> int:\n    return compute(3)\n",
}

WRAPPER = '''#!{python}
"""Runs the real scip-python unless {poison} is among the files to analyse (then fails like Pyright does)."""
import json, os, pathlib, sys
args = sys.argv[1:]
with open({counter!r}, "a") as log:
    log.write(" ".join(args[:1]) + "\\n")
if args[:1] == ["index"]:
    cwd = pathlib.Path(args[args.index("--cwd") + 1])
    config = cwd / "pyrightconfig.json"
    files = json.loads(config.read_text())["include"] if config.exists() else [
        str(p.relative_to(cwd)) for p in cwd.rglob("*.py")]
    if {poison!r} in files or {always}:
        sys.stderr.write("Error: Debug Failure. False expression.\\n    at Checker.visit (checker.js:1:2)\\n")
        sys.exit(1)
os.execv({real!r}, [{real!r}, *args])
'''


def _wrapper(tmp: Path, *, always: bool = False) -> tuple[Path, Path]:
    real = scip_python.executable()
    if not real.exists():
        pytest.skip("scip-python is not installed (make setup installs it)")
    counter = tmp / "runs.log"
    exe = tmp / "scip-python-wrapper"
    exe.write_text(
        WRAPPER.format(
            python=sys.executable,
            poison="pkg/more/poison.py",
            counter=str(counter),
            real=str(real),
            always="True" if always else "False",
        )
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe, counter


def _index(home: Path, exe: Path) -> dict[str, object]:
    result = run_kivgraph(home, "index", "--json", KIVGRAPH_SCIP_PYTHON=str(exe))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])["result"]


def _index_runs(counter: Path) -> int:
    return sum(1 for line in counter.read_text().splitlines() if line == "index") if counter.exists() else 0


def test_a_crash_on_one_file_leaves_that_file_out_and_keeps_the_others_exact(tmp_path: Path) -> None:
    exe, counter = _wrapper(tmp_path)
    repo = write_repo(tmp_path / "repo", REPO)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0
    report = _index(home, exe)
    first_runs = _index_runs(counter)
    assert first_runs >= 2  # the crashing full run, then runs that find and leave out the poisoned file
    assert report["index"]["python"]["mode"] == "exact"  # type: ignore[index]
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        (compute,) = gen.symbols_by_qualified_name("pkg.core.compute")
        by_source = {
            gen.symbol(e.source).qualified_name: e.confidence  # type: ignore[union-attr]
            for e in gen.edges_in(compute.key, [EdgeKind.CALLS_DIRECT])
        }
        assert by_source["pkg.good.caller"] == Confidence.EXACT_TYPECHECKED
        assert by_source["pkg.more.other.also"] == Confidence.EXACT_TYPECHECKED
        assert by_source["pkg.more.poison.poisoned"] == Confidence.CANDIDATE  # the file left out
        poison = gen.file("repo", "pkg/more/poison.py")
        assert poison is not None and poison.analysis == "fallback"
        assert gen.file("repo", "pkg/good.py").analysis == "exact"  # type: ignore[union-attr]
        (row,) = [u for u in gen.unresolved_in("repo", "pkg/more/poison.py") if u.reason == "ANALYZER_FAILED"]
        assert "Debug Failure. False expression." in row.detail
        (analysis,) = gen.repository("repo").analyses  # type: ignore[union-attr]
        assert "crashed on pkg/more/poison.py" in analysis.reason
        assert "Debug Failure. False expression." in analysis.reason and "checker.js" not in analysis.reason
    # an unchanged re-index publishes nothing and runs no analyzer; one that must publish again (CURRENT is
    # gone) takes the salvaged run from the fact cache
    assert _index(home, exe)["published"] is False
    (home / "state" / "CURRENT").unlink()
    again = _index(home, exe)
    assert _index_runs(counter) == first_runs
    assert again["published"] is True and again["index"]["python"]["analyzer_cache_hits"] == 1  # type: ignore[index]


def test_a_failure_nothing_can_salvage_is_cached_for_unchanged_inputs(tmp_path: Path) -> None:
    exe, counter = _wrapper(tmp_path, always=True)
    repo = write_repo(tmp_path / "repo", REPO)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0
    report = _index(home, exe)
    assert report["index"]["python"]["mode"] == "fallback"  # type: ignore[index]
    runs = _index_runs(counter)
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    reason = status["repositories"][0]["analyses"][0]["reason"]
    assert "Debug Failure. False expression." in reason and "checker.js" not in reason
    assert _index(home, exe)["published"] is False  # unchanged: nothing published, nothing run
    (home / "state" / "CURRENT").unlink()  # a run that must publish again reads the failure from the cache
    _index(home, exe)
    assert _index_runs(counter) == runs  # not paid again
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    assert "cached" in status["repositories"][0]["analyses"][0]["reason"]
    # an edit is new input: the analyzer runs again
    (repo / "pkg" / "core.py").write_text(REPO["pkg/core.py"] + "\n\ndef added() -> int:\n    return 1\n")
    _index(home, exe)
    assert _index_runs(counter) > runs
