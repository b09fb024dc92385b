"""Which language modules exist, imported only when a registered repository needs them."""

from __future__ import annotations

import importlib
from typing import cast

from indexer.corpus import LanguageModule

# language -> module implementing indexer.corpus.LanguageModule
_MODULES: dict[str, str] = {
    "python": "indexer.languages.python",
    "typescript": "indexer.languages.typescript", "javascript": "indexer.languages.typescript",
    "go": "indexer.languages.go",
}

# Extensions discovered per language even when no extractor exists yet (reported as skipped).
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "go": (".go",),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "javascript": (".js", ".jsx", ".mjs", ".cjs"),
    "rust": (".rs",),
    "dart": (".dart",),
}


def module_for(language: str) -> LanguageModule | None:
    """The language module, or None when this build has no extractor for the language."""
    name = _MODULES.get(language)
    if name is None:
        return None
    return cast(LanguageModule, importlib.import_module(name))


def supported() -> tuple[str, ...]:
    return tuple(_MODULES)
