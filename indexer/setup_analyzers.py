"""Install the analyzers kivgraph drives (pinned), cached outside the repository.

Nothing to install yet for the tree-sitter fallback; exact analyzers are added
language by language (see the issues) and each step skips work already done.
"""

from __future__ import annotations


def main() -> int:
    """Install every pinned analyzer that is missing; print one line per analyzer."""
    print("analyzers: tree-sitter grammars come from the Python wheels; no external analyzer pinned yet")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
