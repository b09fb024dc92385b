"""The TypeScript/JavaScript language module: tree-sitter extraction and a CANDIDATE-only resolver.

Implements ``indexer.corpus.LanguageModule`` for both "typescript" and "javascript" (one folder serves both
language ids; each file's language comes from its extension). The exact pass is scip-typescript behind
``indexer.languages.typescript.adapter.ADAPTER``. The Site vocabulary is documented in ``sites.py``.
"""

from indexer.languages.typescript.extract import EXTRACTOR_VERSION, extract
from indexer.languages.typescript.modules import EXTENSIONS, LANGUAGE, package_for
from indexer.languages.typescript.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "resolve"]
