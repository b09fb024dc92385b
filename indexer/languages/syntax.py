"""tree-sitter helpers every language module shares."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Language, Node, Parser

from indexer.facts import FileFacts, Site, SymbolFact

MAX_SIGNATURE = 200


def node_text(node: Node | None) -> str:
    """The node's source text (UTF-8, replacement for bad bytes); "" for no node."""
    return "" if node is None or node.text is None else node.text.decode("utf-8", "replace")


def collapse(text: str, limit: int = MAX_SIGNATURE) -> str:
    """Whitespace folded to single spaces, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_syntax_error(root: Node) -> str:
    """Where the first innermost ERROR or MISSING node is, as a message (line and column 1-based).

    Innermost, because tree-sitter may wrap a whole file in an ERROR node that starts at line 1.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing or (node.is_error and not any(c.has_error for c in node.children)):
            row, col = node.start_point
            return f"syntax error at line {row + 1}, column {col + 1}"
        if node.has_error:
            stack.extend(reversed(node.children))
    row, col = root.start_point
    return f"syntax error at line {row + 1}, column {col + 1}"


def extract_tree(
    grammar: Language,
    language: str,
    path: str,
    source: bytes,
    package: str,
    walk: Callable[[Node], tuple[tuple[SymbolFact, ...], tuple[Site, ...]]],
) -> FileFacts:
    """Parse ``source`` and run a language's ``walk`` over it; a syntax error or runaway nesting is a failed file."""
    root = Parser(grammar).parse(source).root_node
    if root.has_error:
        return FileFacts(path=path, language=language, package=package, status="parse_failed",
                         reason=first_syntax_error(root))
    try:
        symbols, sites = walk(root)
    except RecursionError:
        return FileFacts(path=path, language=language, package=package, status="parse_failed",
                         reason="nesting too deep to analyse")
    return FileFacts(path=path, language=language, package=package, symbols=symbols, sites=sites)
