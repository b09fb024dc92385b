"""The TypeScript/JavaScript language module: tree-sitter extraction and a CANDIDATE-only resolver.

Implements ``indexer.corpus.LanguageModule`` for both "typescript" and
"javascript" (the registry maps both languages here; each file's language
comes from its extension). The Site vocabulary is documented in ``sites.py``;
the exact answers come from ``indexer.scip.typescript``.
"""

from indexer.languages.typescript.extract import EXTRACTOR_VERSION, extract
from indexer.languages.typescript.modules import EXTENSIONS, LANGUAGE, package_for
from indexer.languages.typescript.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "resolve"]
