"""Each phase of the index pipeline on its own: what it reads from the Build and what it adds."""

from __future__ import annotations

from pathlib import Path

from indexer.config import load
from indexer.fact_cache import FactCache
from indexer.pipeline import Build, Timer, discover_phase, extract_phase, key_phase, link_phase, records_phase
from indexer.pipeline import resolve_phase as resolve_phase_
from tests.helpers import write_repo

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def helper():\n    return 1\n\n\ndef run():\n    return helper()\n",
    "pkg/broken.py": "def fine():\n    return 2\n\n\ndef bad(:\n    pass\n",
    "notes.txt": "not python\n",
}


def _build(tmp_path: Path, cache: FactCache) -> Build:
    repo = write_repo(tmp_path / "repo", FILES)
    config = tmp_path / "kivgraph.toml"
    config.write_text(f'version = 1\n\n[[repository]]\nname = "repo"\npath = "{repo}"\nlanguages = ["python"]\n')
    loaded = load(config)
    return Build(loaded, cache, lambda _p: None, Timer())


def test_each_phase_adds_its_part_of_the_generation(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KIVGRAPH_SCIP_PYTHON", str(tmp_path / "no-analyzer"))  # the phases, not the analyzer
    with FactCache(tmp_path / "cache", "on") as cache:
        b = _build(tmp_path, cache)

        discover_phase(b)
        (work,) = b.work
        assert sorted(c.path for c in work.discovery.indexable) == ["pkg/__init__.py", "pkg/broken.py", "pkg/core.py"]
        assert not work.facts and not b.symbols

        extract_phase(b)
        statuses = {ff.path: ff.status for ff in work.facts["python"]}
        assert statuses == {"pkg/__init__.py": "indexed", "pkg/core.py": "indexed", "pkg/broken.py": "partial"}
        assert set(work.hashes) == set(statuses) and not b.symbols

        key_phase(b)
        names = {s.qualified_name for s in b.symbols}
        assert {"pkg.core.helper", "pkg.core.run", "pkg.broken.fine"} <= names
        assert len(b.key_index) == len(b.symbols) and not b.resolutions

        resolve_phase_(b)
        assert b.languages == ["python"] and len(b.resolutions) == 1
        assert b.exact_passes["python"].analyses["repo"].mode == "fallback"
        assert not b.edges

        link_phase(b)
        by_key = {s.key: s.qualified_name for s in b.symbols}
        assert ("pkg.core.run", "pkg.core.helper") in {(by_key[e.source], by_key[e.target]) for e in b.edges}
        assert not b.file_records

        records_phase(b)
        assert {f.path: f.status for f in b.file_records}["pkg/broken.py"] == "partial"
        (repository,) = b.repositories
        assert repository.files == 3 and b.counters["python"].partial == 1
        content = b.content()
        assert content.symbols is b.symbols and content.edges is b.edges
