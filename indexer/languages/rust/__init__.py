"""The Rust language module: tree-sitter extraction and a CANDIDATE resolver on syntax.

Implements ``indexer.corpus.LanguageModule``. Module paths come from Cargo.toml and file paths
(``modules.py``); the Site vocabulary is in ``sites.py``. The exact pass is ``rust-analyzer scip``, once per
Cargo workspace (``analyzer.py``).
"""

from indexer.languages.rust.extract import EXTRACTOR_VERSION, extract
from indexer.languages.rust.modules import EXTENSIONS, LANGUAGE, package_for, package_for_root
from indexer.languages.rust.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "package_for_root", "resolve"]
