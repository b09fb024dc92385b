"""Term normalisation of the lexical index behind find_by_intent (shared by writer and reader).

Index time and query time must cut text into the same terms, so this lives in
the on-disk contract: identifiers are split into sub-words (snake_case,
camelCase, acronyms, digits), lowercased, stop words dropped, and reduced by a
small deterministic suffix stemmer. Changing any rule here changes the stored
terms: bump FEATURE_VERSION.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import msgspec

LEXICAL_VERSION = 2

# Field weights: a query word in a file's path or a declaration name says more than one in its body.
FIELD_WEIGHTS = {"path": 3.0, "name": 3.0, "doc": 2.0, "body": 1.0}

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "self",
        "cls",
        "none",
        "true",
        "false",
        "return",
        "def",
        "class",
        "import",
        "pass",
        "not",
        "else",
        "elif",
        "try",
        "except",
        "finally",
        "raise",
        "lambda",
        "yield",
        "async",
        "await",
        "var",
        "let",
        "const",
        "function",
        "new",
    ]
)

_SUFFIXES = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ities", ""),
    ("ness", ""),
    ("ments", ""),
    ("ment", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ions", ""),
    ("ion", ""),
    ("ers", ""),
    ("er", ""),
    ("ed", ""),
    ("es", ""),
    ("s", ""),
)


def stem(word: str) -> str:
    """A small suffix stemmer: generated, generates, generation and generate all become generat."""
    if len(word) <= 3:
        return word
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + repl
            break
    if word.endswith("e") and len(word) >= 4:  # rule and rules, make and makes meet
        word = word[:-1]
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # running -> runn -> run
    return word


def split_identifier(token: str) -> list[str]:
    """Sub-words of an identifier: parse_args, parseArgs and ParseARGS all give parse, args."""
    parts: list[str] = []
    for chunk in token.split("_"):
        if chunk:
            parts.extend(_CAMEL.findall(chunk))
    return parts


def terms(text: str) -> list[str]:
    """Index terms of free text or code: sub-words, lowercased, stemmed, without stop words."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        token = match.group(0)
        subwords = split_identifier(token)
        if len(subwords) > 1:
            whole = token.lower().replace("_", "")
            if whole not in STOP_WORDS and len(whole) > 1:
                out.append(stem(whole))
        for sub in subwords:
            low = sub.lower()
            if low in STOP_WORDS or len(low) < 2 or low.isdigit():
                continue
            out.append(stem(low))
    return out


def terms_among(text: str, wanted: frozenset[str] | set[str]) -> set[str]:
    """``set(terms(text)) & wanted``, without stemming a word that cannot give one of them.

    A stem keeps its word's first three letters (no suffix is cut below three), so a word whose first three
    letters begin no wanted term is skipped unstemmed: the query side's check of many declarations' names and
    docstrings costs their splitting, not their stemming.
    """
    heads = {t[:3] for t in wanted}
    found: set[str] = set()
    for match in _WORD.finditer(text):
        token = match.group(0)
        subwords = split_identifier(token)
        candidates = [token.lower().replace("_", "")] if len(subwords) > 1 else []
        candidates += [sub.lower() for sub in subwords]
        for low in candidates:
            if low[:3] not in heads or low in STOP_WORDS or len(low) < 2 or low.isdigit():
                continue
            term = stem(low)
            if term in wanted:
                found.add(term)
    return found


# --- the bytes of the lexicon sub-databases (writer and reader side by side) ---------------------------
#
# DB_LEXICON:      term -> msgpack flat list [doc, weight x100, doc, weight x100, ...]
# DB_LEXICON_DOCS: u32 doc -> msgpack [repository, path, language, weighted length x100]
# META_LEXICON_STATS: msgpack [LEXICAL_VERSION, documents, average weighted length x100]


class LexiconStats(NamedTuple):
    """What a generation's lexicon says about itself."""

    lexical_version: int
    documents: int
    average_length: float


class LexiconDocument(NamedTuple):
    repository: str
    path: str
    language: str
    length: float


def encode_postings(postings: list[int]) -> bytes:
    """``postings`` is flat: document, weight x100, document, weight x100, ..."""
    return msgspec.msgpack.encode(postings)


def decode_postings(raw: bytes | memoryview) -> list[tuple[int, float]]:
    flat: list[int] = msgspec.msgpack.decode(raw, type=list[int])
    return [(flat[i], flat[i + 1] / 100) for i in range(0, len(flat) - 1, 2)]


def encode_document(repository: str, path: str, language: str, length_x100: int) -> bytes:
    return msgspec.msgpack.encode([repository, path, language, length_x100])


def decode_document(raw: bytes | memoryview) -> LexiconDocument:
    repository, path, language, length = msgspec.msgpack.decode(raw, type=tuple[str, str, str, int])
    return LexiconDocument(repository, path, language, length / 100)


def encode_stats(documents: int, average_length_x100: int) -> bytes:
    return msgspec.msgpack.encode([LEXICAL_VERSION, documents, average_length_x100])


def decode_stats(raw: bytes | memoryview) -> LexiconStats:
    version, documents, average = msgspec.msgpack.decode(raw, type=tuple[int, int, int])
    return LexiconStats(version, documents, average / 100)
