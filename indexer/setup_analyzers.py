"""Install the analyzers kivgraph drives (pinned), cached outside the repository.

tree-sitter grammars come from the Python wheels. Each language's exact analyzer is installed (or built) by
its adapter into ``$KIVGRAPH_CACHE/analyzers`` (default ``~/.cache/kivgraph``); each step skips work already
done, so ``make setup`` is cheap to re-run.
"""

from __future__ import annotations

from indexer.languages import registry
from indexer.languages.npm_tool import NpmTool

# Not an analyzer of indexed code: the type checker `make lint` runs on kivgraph itself.
PYRIGHT = NpmTool("pyright", "pyright", "1.1.414", "KIVGRAPH_PYRIGHT", "make lint cannot type-check")


def main() -> int:
    """Install every pinned analyzer that is missing; print one line per analyzer."""
    print("analyzers: tree-sitter grammars come from the Python wheels")
    failed = False
    for spec in registry.LANGUAGES:
        adapter = spec.adapter()
        if adapter is None:
            continue
        status = adapter.install()
        failed |= "FAILED" in status
        print(f"analyzers: {status}")
    print(f"tools: {PYRIGHT.install()}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
