"""The Go language module: tree-sitter extraction and a CANDIDATE resolver on syntax.

Implements ``indexer.corpus.LanguageModule``; the exact pass is the go/types helper behind
``indexer.languages.go.adapter.ADAPTER``. The Site vocabulary is in ``sites.py``.
"""

from indexer.languages.go.extract import EXTRACTOR_VERSION, extract
from indexer.languages.go.modules import EXTENSIONS, LANGUAGE, package_for, package_for_root
from indexer.languages.go.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "package_for_root", "resolve"]
