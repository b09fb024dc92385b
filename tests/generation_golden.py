"""The fixture corpus's generation, pinned: its content digest and one committed generation per feature version.

Two promises of the on-disk contract are checked against files committed under
``tests/fixtures/generations/``:

* ``golden.json`` holds the *content digest* of the generation the fixture
  corpus (``pyrepo_a``, ``pyrepo_b``, ``ts_monorepo``, analyzers on) indexes to.
  A refactor must leave it byte-identical. The digest is the writer's own
  (every sub-database, every key and value, layout order) with the two facts
  that depend on the machine rather than the code blanked: a repository's
  absolute root and each analysis's seconds.
* ``feature-<N>/`` holds one such generation per FEATURE_VERSION, with what a
  reader must answer from it (``answers.json``). Every later reader must keep
  reading all of them.

When a change is *meant* to change the bytes (a new feature version), regenerate::

    python -m tests.generation_golden --write

which rewrites golden.json and adds ``feature-<FEATURE_VERSION>/`` (older ones stay).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import lmdb
import msgspec

from snapshot_format import codec, keys, records
from snapshot_format.digest import DigestBuilder
from snapshot_format.layout import LAYERS_DIRNAME
from snapshot_format.manifest import read_manifest
from snapshot_format.reader import Generation, layers_digest
from snapshot_format.versions import FEATURE_VERSION
from tests.helpers import FIXTURES, copy_fixture, run_kivgraph

GOLDEN_DIR = FIXTURES / "generations"
GOLDEN_FILE = GOLDEN_DIR / "golden.json"
CORPUS = ("pyrepo_a", "pyrepo_b", "ts_monorepo")


def build(workdir: Path) -> Path:
    """Index a private copy of the fixture corpus into ``workdir/home``; returns the generation directory."""
    home = workdir / "home"
    roots = [str(copy_fixture(name, workdir)) for name in CORPUS]
    init = run_kivgraph(home, "init", *roots)
    if init.returncode != 0:
        raise RuntimeError(f"kivgraph init failed: {init.stderr}")
    index = run_kivgraph(home, "index")
    if index.returncode != 0:
        raise RuntimeError(f"kivgraph index failed: {index.stderr}")
    (generation,) = sorted((home / "state" / "generations").glob("g*.v*"))
    return generation


def _machine_free(raw: bytes) -> bytes:
    repo = codec.decode(records.Repository, raw)
    analyses = tuple(msgspec.structs.replace(a, seconds=0.0) for a in repo.analyses)
    return codec.encode(msgspec.structs.replace(repo, root="", analyses=analyses))


def content_digest(generation: Path) -> str:
    """The writer's content digest with each repository's root and analysis seconds blanked.

    A layered generation (feature 10): the link layer's so blanked, then each repository layer's own digest
    (a layer holds nothing that depends on the machine), in layer order.
    """
    manifest = read_manifest(generation)
    digest = _environment_digest(generation)
    if not manifest.layers:
        return digest
    return layers_digest(digest, [(e.repository, e.digest) for e in manifest.layers])


def _environment_digest(generation: Path) -> str:
    builder = DigestBuilder()
    env = lmdb.open(str(generation), readonly=True, lock=False, max_dbs=len(keys.ALL_DATABASES) + 4, subdir=True)
    try:
        for name in keys.ALL_DATABASES:
            try:
                db = env.open_db(name, create=False)
            except lmdb.NotFoundError:
                continue
            with env.begin(db=db) as txn:
                items = [(bytes(k), bytes(v)) for k, v in txn.cursor()]
            if name == keys.DB_REPOSITORIES:
                items = [(k, _machine_free(v)) for k, v in items]
            builder.add_many(name, items)
    finally:
        env.close()
    return builder.hexdigest()


def answers(generation: Path) -> dict[str, Any]:
    """What a reader answers from a generation: counts, repositories, every symbol with its edges, unresolved."""
    gen = Generation(generation)
    try:
        gen.verify_digest()
        counts = {f: getattr(gen.counts(), f) for f in records.Counts.__struct_fields__}
        repositories = [r.name for r in gen.repositories()]
        symbols: list[list[Any]] = []
        for repo in repositories:
            for file in gen.files(repo):
                for sym in gen.declarations(repo, file.path):
                    incoming = sorted([e.source, e.kind, e.confidence, e.line] for e in gen.edges_in(sym.key))
                    symbols.append([repo, file.path, sym.qualified_name, sym.kind, sym.key, incoming])
        unresolved = sorted(
            [u.repository, u.path, u.line, u.name, u.reason] for repo in repositories for u in gen.unresolved_in(repo)
        )
        stats = gen.lexicon_stats()
        return {
            "feature_version": gen.manifest.feature_version,
            "counts": counts,
            "repositories": repositories,
            "symbols": sorted(symbols),
            "unresolved": unresolved,
            "lexicon_documents": stats.documents if stats else None,
        }
    finally:
        gen.close()


def committed_generations() -> list[Path]:
    """Every committed generation directory (``feature-<N>/g*.v*``)."""
    return sorted(GOLDEN_DIR.glob("feature-*/g*.v*"))


def write() -> None:
    with tempfile.TemporaryDirectory(prefix="kivgraph-golden-") as tmp:
        generation = build(Path(tmp))
        GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
        GOLDEN_FILE.write_text(
            json.dumps(
                {
                    "feature_version": FEATURE_VERSION,
                    "corpus": list(CORPUS),
                    "content_digest": content_digest(generation),
                },
                indent=2,
            )
            + "\n"
        )
        target = GOLDEN_DIR / f"feature-{FEATURE_VERSION}"
        if target.exists():
            shutil.rmtree(target)
        dest = target / generation.name
        dest.mkdir(parents=True)
        for name in ("data.mdb", "manifest"):
            shutil.copy2(generation / name, dest / name)
        if (generation / LAYERS_DIRNAME).is_dir():
            shutil.copytree(generation / LAYERS_DIRNAME, dest / LAYERS_DIRNAME)
        (target / "answers.json").write_text(json.dumps(answers(dest), indent=1) + "\n")
    print(f"wrote {GOLDEN_FILE} and {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="regenerate golden.json and feature-<N>/")
    args = parser.parse_args()
    if not args.write:
        parser.error("nothing to do: pass --write to regenerate the committed golden files")
    write()


if __name__ == "__main__":
    main()
