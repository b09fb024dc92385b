"""Install the analyzers kivgraph drives (pinned), cached outside the repository.

tree-sitter grammars come from the Python wheels. Exact analyzers are
installed into ``$KIVGRAPH_CACHE/analyzers`` (default ``~/.cache/kivgraph``);
each step skips work already done, so ``make setup`` is cheap to re-run.
"""

from __future__ import annotations

from indexer.scip import python as scip_python
from indexer.scip.npm_tool import NpmTool

# Not an analyzer of indexed code: the type checker `make lint` runs on kivgraph itself.
PYRIGHT = NpmTool("pyright", "pyright", "1.1.414", "KIVGRAPH_PYRIGHT", "make lint cannot type-check")


def setup_go() -> str:
    """Build the go/types helper with the local toolchain into the cache (skipped when built)."""
    from indexer.languages.go import analyzer as go_analyzer

    return go_analyzer.install()


def setup_typescript() -> str:
    """Install the pinned scip-typescript with typescript 5.9.3 through npm into the cache (skipped when present)."""
    from indexer.scip import typescript as scip_typescript

    return scip_typescript.install()


def main() -> int:
    """Install every pinned analyzer that is missing; print one line per analyzer."""
    print("analyzers: tree-sitter grammars come from the Python wheels")
    status = scip_python.install()
    print(f"analyzers: {status}")
    go_status = setup_go()
    print(f"analyzers: {go_status}")
    ts_status = setup_typescript()
    print(f"analyzers: {ts_status}")
    print(f"tools: {PYRIGHT.install()}")
    return 1 if "FAILED" in status else 0


if __name__ == "__main__":
    raise SystemExit(main())
