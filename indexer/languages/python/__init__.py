"""The Python language module: tree-sitter extraction and a CANDIDATE-only resolver.

Implements ``indexer.corpus.LanguageModule``; the exact pass is scip-python behind
``indexer.languages.python.adapter.ADAPTER``. ``extract`` is per file and cached; ``resolve`` sees every
repository's files at once. The Site vocabulary passed between them is documented in ``sites.py``.
"""

from indexer.languages.python.extract import EXTRACTOR_VERSION, extract
from indexer.languages.python.modules import EXTENSIONS, LANGUAGE, package_for
from indexer.languages.python.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "resolve"]
