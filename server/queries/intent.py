"""find_by_intent: which files to open for a task described in words (BM25 over the stored lexicon)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from server.testfiles import FileRoles
from server.views import module_relative
from snapshot_format.lexical import terms
from snapshot_format.reader import Generation

K1 = 1.2
B = 0.75
SYMBOLS_PER_FILE = 3
# A task described in words is usually about the code, not its tests: when tests are listed too
# (include_tests), those that merely exercise the same words rank below the source they test.
TEST_FILE_WEIGHT = 0.6
PATH_BONUS = 2.0  # per query term (times its idf) found in the path
IsTest = Callable[[str, str, str], bool]  # (repository, path, language) -> in a test file


@dataclass
class SymbolMatch:
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    matched: list[str]
    relative_name: str = ""  # the qualified name without the module its file implies (compact labels)


@dataclass
class FileMatch:
    repository: str
    path: str
    language: str
    score: float
    matched: list[str]
    symbols: list[SymbolMatch] = field(default_factory=list)
    test: bool = False


def query_terms(query: str) -> list[str]:
    """The distinct index terms of a query, in order of first appearance."""
    seen: dict[str, None] = {}
    for term in terms(query):
        seen.setdefault(term, None)
    return list(seen)


def rank_files(
    gen: Generation,
    query: str,
    *,
    repository: str | None = None,
    language: str | None = None,
    is_test: IsTest | None = None,
) -> list[FileMatch]:
    """Every file matching at least one query term, best first (ties broken by repository and path)."""
    stats = gen.lexicon_stats()
    wanted = query_terms(query)
    if stats is None or not wanted or gen.lexicon_unusable() is not None:
        return []
    n_docs, avg_len = stats.documents, stats.average_length
    if is_test is None:
        is_test = FileRoles(gen).is_test
    scores: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    idfs: dict[str, float] = {}
    for term in wanted:
        postings = gen.lexicon_postings(term)
        if not postings:
            continue
        idf = math.log(1 + (n_docs - len(postings) + 0.5) / (len(postings) + 0.5))
        idfs[term] = idf
        for doc, tf in postings:
            length = _doc_length(gen, doc)
            norm = K1 * (1 - B + B * length / avg_len) if avg_len else K1
            scores[doc] = scores.get(doc, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
            matched.setdefault(doc, []).append(term)
    out: list[FileMatch] = []
    for doc, score in scores.items():
        info = gen.lexicon_document(doc)
        if info is None:
            continue
        repo, path, lang = info.repository, info.path, info.language
        if (repository is not None and repo != repository) or (language is not None and lang != language):
            continue
        # A word of the task in the file's own path is the strongest hint of all (BM25 over one bag of
        # weighted fields lets a long file that mentions everything outrank the file named for it).
        path_terms = set(terms(path))
        score += PATH_BONUS * sum(idf for term, idf in idfs.items() if term in path_terms)
        test = is_test is not None and is_test(repo, path, lang)
        if test:
            score *= TEST_FILE_WEIGHT
        out.append(FileMatch(repo, path, lang, round(score, 4), matched[doc], test=test))
    out.sort(key=lambda m: (-m.score, m.repository, m.path))
    return out


# Document lengths by (generation directory, document): generations are immutable, and ids alone repeat
# across state directories.
_length_cache: dict[tuple[str, int], float] = {}


def _doc_length(gen: Generation, doc: int) -> float:
    key = (str(gen.path), doc)
    cached = _length_cache.get(key)
    if cached is None:
        info = gen.lexicon_document(doc)
        cached = info.length if info else 0.0
        if len(_length_cache) > 500_000:
            _length_cache.clear()
        _length_cache[key] = cached
    return cached


def matching_symbols(gen: Generation, match: FileMatch, *, kinds: frozenset[str] | None = None) -> list[SymbolMatch]:
    """The few declarations of a file whose name or docstring carries a matched term, best first."""
    wanted = set(match.matched)
    found: list[tuple[int, SymbolMatch]] = []
    for sym in gen.declarations(match.repository, match.path):
        if sym.kind == "module" or (kinds is not None and sym.kind not in kinds):
            continue
        name_terms = set(terms(sym.name))
        doc_terms = set(terms(sym.doc)) if sym.doc else set()
        hits = [t for t in match.matched if t in name_terms or t in doc_terms]
        if not hits:
            continue
        # Name hits outrank docstring hits; more distinct terms first.
        rank = 2 * len(wanted & name_terms) + len(wanted & doc_terms)
        found.append(
            (rank, SymbolMatch(sym.qualified_name, sym.kind, sym.start_line, sym.end_line, hits, module_relative(sym)))
        )
    found.sort(key=lambda item: (-item[0], item[1].start_line))
    return [s for _rank, s in found[:SYMBOLS_PER_FILE]]


def find_by_intent(
    gen: Generation,
    query: str,
    *,
    repository: str | None = None,
    language: str | None = None,
    kinds: frozenset[str] | None = None,
    is_test: IsTest | None = None,
) -> list[FileMatch]:
    """Ranked files for a task; with ``kinds``, only files declaring a matching symbol of those kinds."""
    ranked = rank_files(gen, query, repository=repository, language=language, is_test=is_test)
    if kinds is None:
        return ranked
    kept = []
    for match in ranked:
        symbols = matching_symbols(gen, match, kinds=kinds)
        if symbols:
            match.symbols = symbols
            kept.append(match)
    return kept
