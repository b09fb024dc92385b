"""Version constants of the on-disk contract, each with a one-line log per bump.

FORMAT_VERSION changes when bytes written by this build would be misread by an
older reader (a record field changes meaning, a key layout changes): a reader
refuses a generation whose minimum reader version is above its own format.
FEATURE_VERSION changes when something is added that older readers can
safely ignore (a new sub-database, a field appended with a default).
"""

# The kivgraph release: the one version number (pyproject.toml reads it; indexer, server and manifests use it).
RELEASE = "0.1.0"

FORMAT_VERSION = 1
FEATURE_VERSION = 11
# The oldest reader format that can read what this build writes.
MIN_READER_VERSION = 1
# Generations this build can read (the writer of each must not need a newer reader).
READABLE_FORMATS = frozenset({1})

FORMAT_LOG: dict[int, str] = {
    1: "initial layout: msgspec array-like records, 16-byte symbol keys, NUL-separated index keys"
}

FEATURE_LOG: dict[int, str] = {
    1: "repositories, files, symbols, edges in/out, unresolved by name and by file, package dependencies",
    2: "lexicon and lexicon_docs sub-databases: the BM25 index behind find_by_intent",
    3: "lexical terms v2: a final e is dropped from four-letter words too (rule and rules stem alike); no -ly stripping (apply stays apply)",
    4: "file status partial (a syntax error; the rest indexed), Counts.partial_files, unresolved reason SYNTAX_ERROR",
    5: "File.test: the indexer marks test files (its language's test patterns), so answers can count them apart",
    6: "File.analysis and LanguageAnalysis.mode pending: a CANDIDATE generation published before the exact pass (issue 15)",
    7: "edge kind STANDS_FOR and provenance PYTHON_IMPORT_SYSTEM: a stub and the implementation it stands for answer as one symbol (issue 23)",
    8: "Symbol.callable: a variable whose value is a function, a class or a callable (issue 23); older ones read False",
    9: "provenances JAVA_INDEXER_DEF/USE (scip-java) and SCIP_INDEX_DEF/USE (a SCIP index a repository names) (issue 26)",
    10: "layers (issue 24): one LMDB environment per repository under layers/, the link layer in data.mdb, Manifest.layers",
    11: "provenance JAVA_IMPLICIT_CALL: a call javac makes that no line writes (implicit super(), an enum constant's body) (issue 26)",
}

# The oldest FEATURE_VERSION at which a reader uses a feature. Below it the feature is refused with a
# message naming the generation and the remedy, never used under rules the generation was not written
# with (a lexicon of feature 2 was stemmed differently: ranking it with today's terms would be silently
# wrong).
MIN_FEATURE_FOR: dict[str, int] = {
    "lexicon": 3,
    "file_test_flag": 5,  # before it File.test reads False: readers use the path patterns instead
    "callable_flag": 8,  # before it Symbol.callable reads False: callable variables stay behind symbol_kinds
}

# Stable keys are permanent identities; the algorithm version is part of every key's input.
STABLE_KEY_VERSION = 1

# Version of the fact-cache entry encoding (indexer-only, but recorded so doctor can report it).
# 2: every value carries a checksum of its payload (a flipped byte is damage, never a fact).
FACT_CACHE_VERSION = 2
