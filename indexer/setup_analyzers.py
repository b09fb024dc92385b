"""Install the analyzers kivgraph drives (pinned), cached outside the repository; exit 1 if one cannot be.

tree-sitter grammars come from the Python wheels. Each language's exact analyzer is installed (or built) by
its adapter into ``$KIVGRAPH_CACHE/analyzers`` (default ``~/.cache/kivgraph``); each step skips work already
done, so ``make setup`` is cheap to re-run.
"""

from __future__ import annotations

import shutil
import sys

from indexer.languages import registry
from indexer.languages.npm_tool import NpmTool

# Not an analyzer of indexed code: the type checker `make lint` runs on kivgraph itself.
PYRIGHT = NpmTool("pyright", "pyright", "1.1.414", "KIVGRAPH_PYRIGHT", "make lint cannot type-check")


# A line of an install that did not happen; Dart's "skipped" (no SDK can be installed here) is not one.
_NOT_INSTALLED = ("FAILED", "NOT installed", "NOT built")
PREREQUISITES = {
    "node": "Node.js (20 or newer) runs scip-python, scip-typescript and pyright",
    "npm": "npm installs scip-python, scip-typescript and pyright",
    "go": "the Go toolchain builds kivgraph's go/types helper",
}


def failed(status: str) -> bool:
    """Whether a setup line reports an analyzer that could not be installed."""
    return any(word in status for word in _NOT_INSTALLED)


def main() -> int:
    """Install every pinned analyzer that is missing; one line per analyzer; exit 1 naming what is missing."""
    missing = [f"{tool} ({why})" for tool, why in PREREQUISITES.items() if shutil.which(tool) is None]
    for line in missing:
        print(f"analyzers: prerequisite missing: {line}")
    print("analyzers: tree-sitter grammars come from the Python wheels")
    failures: list[str] = []
    for spec in registry.LANGUAGES:
        adapter = spec.adapter()
        if adapter is None:
            continue
        status = adapter.install()
        if failed(status):
            failures.append(f"{spec.name}: {status}")
        print(f"analyzers: {status}")
    status = PYRIGHT.install()
    if failed(status):
        failures.append(f"pyright: {status}")
    print(f"tools: {status}")
    if failures or missing:
        # An analyzer that can be installed here but is not (or whose toolchain is missing, so it cannot run)
        # would silently leave its language on CANDIDATE edges: setup says so and fails.
        print(
            "make setup FAILED: these analyzers can be installed on this machine but are not usable:", file=sys.stderr
        )
        for line in failures:
            print(f"  {line}", file=sys.stderr)
        if missing:
            print(f"  install first: {', '.join(missing)} (see the README's prerequisites)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
