"""find_by_intent: which files to open for a task described in words (BM25 over the stored lexicon)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from server.testfiles import FileRoles
from server.views import module_relative
from snapshot_format.lexical import terms, terms_among
from snapshot_format.reader import Generation

K1 = 1.2
B = 0.75
SYMBOLS_PER_FILE = 2  # the declarations that matched best: one, or two when the second is nearly as good
SECOND_AT_LEAST = 0.6  # of the best declaration's score, for the second to be listed
RERANK = 20  # files whose declarations can move them: the best few by BM25
DECLARATION_BONUS = 0.5  # per unit of the best declaration's name score
NAME_WEIGHT, CONTAINER_WEIGHT, DOC_WEIGHT = 2.0, 1.0, 0.75
# Data (fields, properties, constants) answer "which declaration do I open" less often than code does.
DATA_KINDS = frozenset(
    {"field", "property", "variable", "var", "const", "constant", "attribute", "enum_member", "static", "variant"}
)
DATA_WEIGHT = 0.5
CALLABLE_KINDS = frozenset({"function", "func", "method", "constructor", "getter", "setter", "static_method"})
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
    weights: dict[str, float] = field(default_factory=dict)  # each matched term's idf


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
        weights = {t: idfs[t] for t in matched[doc]}
        out.append(FileMatch(repo, path, lang, round(score, 4), matched[doc], test=test, weights=weights))
    out.sort(key=lambda m: (-m.score, m.repository, m.path))
    return _reranked(gen, out)


def _reranked(gen: Generation, ranked: list[FileMatch]) -> list[FileMatch]:
    """The best few files by BM25 moved by their best declaration: a file declaring something named for the
    task outranks one that only mentions its words (BM25 over a file's bag of words cannot tell them apart)."""
    head = ranked[:RERANK]
    for match in head:
        named = _scored_declarations(gen, match, with_docs=False)  # docstrings move no file: BM25 has them
        match.score = round(match.score + DECLARATION_BONUS * max((n for _s, _m, n in named), default=0.0), 4)
    head.sort(key=lambda m: (-m.score, m.repository, m.path))
    return head + ranked[RERANK:]


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


def _name_terms(name: str) -> frozenset[str]:
    """The terms of a declaration's name (cached: names repeat across files and questions)."""
    found = _name_cache.get(name)
    if found is None:
        if len(_name_cache) > 200_000:
            _name_cache.clear()
        found = _name_cache[name] = frozenset(terms(name))
    return found


_name_cache: dict[str, frozenset[str]] = {}


def _scored_declarations(
    gen: Generation, match: FileMatch, *, kinds: frozenset[str] | None = None, with_docs: bool = True
) -> list[tuple[float, SymbolMatch, float]]:
    """(score, match, name part of the score) of each declaration of the file carrying a matched term, best
    first: a term's idf counts most in the declaration's own name, less in its container's (the class of a
    method), least in its docstring; a name made mostly of the task's words scores higher, data lower."""
    weights = match.weights or {t: 1.0 for t in match.matched}
    wanted = frozenset(match.matched)
    found: list[tuple[float, SymbolMatch, float]] = []
    declarations = list(gen.declarations(match.repository, match.path))
    callables = {sym.key: sym.kind in CALLABLE_KINDS for sym in declarations}
    for sym in declarations:
        if sym.kind == "module" or (kinds is not None and sym.kind not in kinds):
            continue
        name_terms = _name_terms(sym.name)
        relative = module_relative(sym)
        container = relative[: -len(sym.name)].rstrip(".:") if relative.endswith(sym.name) else ""
        container_terms = terms_among(container, wanted) - name_terms if container else set()
        doc_terms = terms_among(sym.doc, wanted) - name_terms - container_terms if sym.doc and with_docs else set()
        in_name = [t for t in match.matched if t in name_terms]
        in_container = [t for t in match.matched if t in container_terms]
        in_doc = [t for t in match.matched if t in doc_terms]
        if not (in_name or in_container or in_doc):
            continue
        named = NAME_WEIGHT * sum(weights.get(t, 1.0) for t in in_name)
        named += CONTAINER_WEIGHT * sum(weights.get(t, 1.0) for t in in_container)
        coverage = len(in_name) / len(name_terms) if name_terms else 0.0
        score = (named + DOC_WEIGHT * sum(weights.get(t, 1.0) for t in in_doc)) * (0.75 + 0.25 * coverage)
        if sym.kind in DATA_KINDS:
            score *= DATA_WEIGHT
            named *= DATA_WEIGHT
        if sym.container and callables.get(sym.container, False):
            score *= DATA_WEIGHT  # a function local to another is the other's detail
            named *= DATA_WEIGHT
        hits = [t for t in match.matched if t in name_terms or t in container_terms or t in doc_terms]
        item = SymbolMatch(sym.qualified_name, sym.kind, sym.start_line, sym.end_line, hits, relative)
        # a name made of several of the task's words is what moves a file (one word, BM25 has counted)
        several = len(set(in_name) | set(in_container)) >= 2
        found.append((score, item, named * (0.75 + 0.25 * coverage) if several else 0.0))
    found.sort(key=lambda entry: (-entry[0], entry[1].kind not in CALLABLE_KINDS, entry[1].start_line))
    return found


def matching_symbols(gen: Generation, match: FileMatch, *, kinds: frozenset[str] | None = None) -> list[SymbolMatch]:
    """The one or two declarations of a file that matched the task best (``_scored_declarations``)."""
    scored = _scored_declarations(gen, match, kinds=kinds)
    if not scored:
        return []
    best = scored[0][0]
    return [s for score, s, _n in scored[:SYMBOLS_PER_FILE] if score >= SECOND_AT_LEAST * best]


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
