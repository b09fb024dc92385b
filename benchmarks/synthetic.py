"""A synthetic generation for latency benchmarks: N symbols, M edges, deterministic (seeded).

Shaped like a real corpus: repositories of packages of files of classes with
methods, call edges biased towards a few popular targets (power law), a share
of cross-repository edges, homonyms (every method name repeats across
classes), and unresolved rows. Published through the real writer into a
private state directory.

    python -m benchmarks.synthetic --symbols 100000 --edges 1000000 --out /tmp/kivgraph-large
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from indexer.publish import GenerationContent, publish
from snapshot_format import records
from snapshot_format.layout import StateLayout, resolve_layout
from snapshot_format.stable_key import stable_key
from snapshot_format.versions import FEATURE_VERSION
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

WORDS = (
    "load",
    "save",
    "parse",
    "render",
    "fetch",
    "merge",
    "apply",
    "build",
    "check",
    "open",
    "close",
    "flush",
    "read",
    "write",
    "scan",
    "index",
    "query",
    "route",
    "bind",
    "emit",
)


def generate(symbols: int, edges: int, repositories: int = 8, seed: int = 42) -> GenerationContent:
    rng = random.Random(seed)
    syms: list[records.Symbol] = []
    files: list[records.File] = []
    repos = [f"repo{r:02d}" for r in range(repositories)]
    per_repo = symbols // repositories
    for repo in repos:
        count = 0
        f = 0
        while count < per_repo:
            path = f"pkg{f // 20:03d}/mod{f:04d}.py"
            module = path[:-3].replace("/", ".")
            files.append(
                records.File(
                    repository=repo,
                    path=path,
                    language="python",
                    content_hash="0" * 64,
                    size=4000,
                    symbols=0,
                    package=module,
                    analysis="fallback",
                )
            )
            line = 1
            mod_key = stable_key(
                language="python",
                repository=repo,
                package=module,
                module=path,
                qualified_name=module,
                kind="module",
                discriminator="",
            )
            syms.append(
                records.Symbol(
                    key=mod_key,
                    name=module.rsplit(".", 1)[-1],
                    qualified_name=module,
                    kind="module",
                    language="python",
                    repository=repo,
                    path=path,
                    start_line=1,
                    start_col=0,
                    end_line=400,
                    end_col=0,
                    package=module,
                    exported=True,
                )
            )
            count += 1
            for c in range(3):
                cls = f"Class{f}_{c}"
                cqn = f"{module}.{cls}"
                ckey = stable_key(
                    language="python",
                    repository=repo,
                    package=module,
                    module=path,
                    qualified_name=cqn,
                    kind="class",
                    discriminator="",
                )
                syms.append(
                    records.Symbol(
                        key=ckey,
                        name=cls,
                        qualified_name=cqn,
                        kind="class",
                        language="python",
                        repository=repo,
                        path=path,
                        start_line=line,
                        start_col=0,
                        end_line=line + 40,
                        end_col=0,
                        signature=f"class {cls}:",
                        exported=True,
                        container=mod_key,
                        package=module,
                    )
                )
                line += 1
                count += 1
                for m in range(8):
                    name = WORDS[(f + c + m) % len(WORDS)] + ("" if m < 4 else f"_{m}")
                    mqn = f"{cqn}.{name}"
                    mkey = stable_key(
                        language="python",
                        repository=repo,
                        package=module,
                        module=path,
                        qualified_name=mqn,
                        kind="method",
                        discriminator="",
                    )
                    syms.append(
                        records.Symbol(
                            key=mkey,
                            name=name,
                            qualified_name=mqn,
                            kind="method",
                            language="python",
                            repository=repo,
                            path=path,
                            start_line=line,
                            start_col=4,
                            end_line=line + 4,
                            end_col=0,
                            signature=f"def {name}(self)",
                            exported=True,
                            container=ckey,
                            package=module,
                        )
                    )
                    line += 5
                    count += 1
            f += 1
    n = len(syms)
    seen: set[tuple[int, int, int]] = set()
    out: list[records.Edge] = []
    kinds = (EdgeKind.CALLS_DIRECT,) * 6 + (EdgeKind.REFERENCES,) * 2 + (EdgeKind.TYPE_USES, EdgeKind.IMPORTS_SYMBOL)
    while len(out) < edges:
        src = rng.randrange(n)
        # Power law: a few symbols are called from everywhere.
        dst = min(int(rng.paretovariate(1.2)) * 97 % n, n - 1) if rng.random() < 0.3 else rng.randrange(n)
        if src == dst:
            continue
        kind = rng.choice(kinds)
        ident = (src, dst, int(kind))
        if ident in seen:
            continue
        seen.add(ident)
        conf = Confidence.EXACT_TYPECHECKED if rng.random() < 0.8 else Confidence.CANDIDATE
        prov = Provenance.PYTHON_INDEXER_USE if conf == Confidence.EXACT_TYPECHECKED else Provenance.PYTHON_SYNTAX_CALL
        out.append(
            records.Edge(
                kind=kind,
                source=syms[src].key,
                target=syms[dst].key,
                confidence=conf,
                provenance=prov,
                line=syms[src].start_line + 1,
                col=8,
            )
        )
    unresolved = [
        records.Unresolved(
            name=rng.choice(WORDS),
            reason="RECEIVER_NOT_RESOLVED",
            repository=rng.choice(repos),
            path=files[rng.randrange(len(files))].path,
            line=rng.randrange(1, 400),
            language="python",
        )
        for _ in range(symbols // 10)
    ]
    repo_records = [
        records.Repository(
            name=r, root=f"/synthetic/{r}", languages=("python",), files=sum(1 for fl in files if fl.repository == r)
        )
        for r in repos
    ]
    return GenerationContent(repositories=repo_records, files=files, symbols=syms, edges=out, unresolved=unresolved)


def build(out_dir: Path, symbols: int, edges: int) -> StateLayout:
    """Publish a synthetic generation under ``out_dir`` (skipped when one of that size exists)."""
    layout = resolve_layout(config=out_dir / "kivgraph.toml", state_dir=out_dir / "state")
    marker = out_dir / f".built-{symbols}-{edges}-feature{FEATURE_VERSION}"  # a new format: published again
    if marker.exists():
        return layout
    started = time.perf_counter()
    content = generate(symbols, edges)
    result = publish(layout, content, indexer_version="synthetic")
    marker.touch()
    print(
        f"synthetic generation {result.name}: {len(content.symbols)} symbols, {len(content.edges)} edges "
        f"in {time.perf_counter() - started:.1f}s"
    )
    return layout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symbols", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/kivgraph-synthetic"))
    args = parser.parse_args()
    build(args.out, args.symbols, args.edges)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
