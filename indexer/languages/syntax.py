"""tree-sitter helpers every language module shares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Language, Node, Parser, Tree

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


# How many regions of a file with syntax errors are blanked out, one re-parse (or two) each. A file whose
# errors outlast it (a grammar that lacks a construct used throughout) keeps tree-sitter's own recovery too.
MAX_REPAIRS = 12


@dataclass
class Repair:
    """A parse with the lines that would not parse blanked out (same byte offsets, so spans stay true)."""

    root: Node
    source: bytes  # the bytes ``root`` was parsed from (the original, or the blanked copy)
    first_error: str = ""  # "" when the original parsed cleanly
    blanked: list[int] = field(default_factory=list)  # 1-based lines, ascending
    unparsed: tuple[tuple[str, int, int], ...] = ()  # identifiers on blanked lines: (name, line, col)
    complete: bool = True  # False when errors remained after MAX_REPAIRS
    original: Node | None = None  # the first parse, when it had errors


def _culprit_line(node: Node) -> int | None:
    """0-based line of the earliest token that does not fit the grammar under ``node``.

    Inside an ERROR node, complete children that parsed cleanly are skipped: tree-sitter often wraps good
    declarations in the ERROR that follows them.
    """
    if node.is_missing:
        return node.start_point[0]
    if node.is_error and node.child_count == 0:
        return node.start_point[0]
    for child in node.children:
        if child.is_missing or child.has_error or child.is_error:
            return _culprit_line(child)
        if node.is_error and child.child_count == 0 and not child.is_extra:  # a comment inside is no culprit
            return child.start_point[0]
    return node.start_point[0] if node.is_error else None


def _line_spans(source: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for i, byte in enumerate(source):
        if byte == 0x0A:
            spans.append((start, i))
            start = i + 1
    spans.append((start, len(source)))
    return spans


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


def _blank(buf: bytearray, spans: list[tuple[int, int]], line: int, *, python: bool) -> list[int]:
    """Blank ``line`` (and, in Python, the indented block it opens); returns the 0-based lines blanked."""
    lines = [line]
    if python:
        own = _indent(bytes(buf[spans[line][0] : spans[line][1]]))
        nxt = line + 1
        while nxt < len(spans):
            text = bytes(buf[spans[nxt][0] : spans[nxt][1]])
            if text.strip() and _indent(text) <= own:
                break
            lines.append(nxt)
            nxt += 1
        while len(lines) > 1 and not bytes(buf[slice(*spans[lines[-1]])]).strip():
            lines.pop()  # blank lines after the block are not part of it
    for i in lines:
        start, end = spans[i]
        text = bytes(buf[start:end])
        width = _indent(text)
        filler = bytearray(b" " * (end - start))
        if python and i == line and text.strip() and end - start - width >= 4:
            filler[width : width + 4] = b"pass"  # keeps the enclosing block non-empty
        buf[start:end] = filler
    return lines


def _reparse(parser: Parser, tree: Tree, buf: bytearray, spans: list[tuple[int, int]], lines: list[int]) -> Tree:
    """Re-parse after blanking ``lines`` (same lengths), reusing ``tree`` for everything the edit did not touch."""
    edited = tree.copy()
    first, last = min(lines), max(lines)
    start, end = spans[first][0], spans[last][1]
    start_col, end_col = 0, spans[last][1] - spans[last][0]
    edited.edit(
        start_byte=start,
        old_end_byte=end,
        new_end_byte=end,
        start_point=(first, start_col),
        old_end_point=(last, end_col),
        new_end_point=(last, end_col),
    )
    return parser.parse(bytes(buf), edited)


def repair(grammar: Language, source: bytes, *, python: bool = False) -> Repair:
    """Parse ``source``; on a syntax error, blank the offending lines one region at a time and re-parse.

    Whatever parses outside the blanked lines is kept; the identifiers on the blanked lines (taken from the
    original parse) are returned so that answers touching them can say they are blind there. Re-parses are
    incremental (the previous tree is reused), so a repair costs about the edited region, not the file.
    """
    parser = Parser(grammar)
    original_tree = parser.parse(source)
    original = original_tree.root_node
    if not original.has_error:
        return Repair(original, source)
    culprit = _culprit_line(original)
    first = f"syntax error at line {culprit + 1}" if culprit is not None else first_syntax_error(original)
    spans = _line_spans(source)
    buf = bytearray(source)
    blanked: set[int] = set()
    tree = original_tree
    for _ in range(MAX_REPAIRS):
        line = _culprit_line(tree.root_node)
        if line is None:
            break
        if line in blanked:  # the same line again: blank the next line of the error that is still there
            line = next(
                (n for n in range(line + 1, len(spans)) if n not in blanked and buf[slice(*spans[n])].strip()), None
            )
            if line is None:
                break
        # The token that does not fit is often the one after the mistake (a ``}`` after an unfinished call):
        # try the line before it too and keep whichever blanking lets the parse get further.
        before = next((n for n in range(line - 1, -1, -1) if n not in blanked and buf[slice(*spans[n])].strip()), None)
        best: tuple[tuple[bool, int], bytearray, list[int], Tree] | None = None
        for candidate in (line, before):
            if candidate is None:
                continue
            trial = bytearray(buf)
            lines = _blank(trial, spans, candidate, python=python)
            parsed = _reparse(parser, tree, trial, spans, lines)
            after = _culprit_line(parsed.root_node) if parsed.root_node.has_error else None
            score = (after is None, -1 if after is None else after)
            if best is None or score > best[0]:
                best = (score, trial, lines, parsed)
        assert best is not None
        _score, buf, lines, tree = best
        blanked.update(lines)
        if not tree.root_node.has_error:
            break
    root = tree.root_node
    names: dict[tuple[str, int, int], None] = {}
    stack = [original]
    while stack:
        node = stack.pop()
        if node.start_point[0] > max(blanked, default=-1) or node.end_point[0] < min(blanked, default=0):
            continue
        if node.child_count == 0:
            if node.start_point[0] in blanked and "identifier" in node.type:
                names[(node_text(node), node.start_point[0] + 1, node.start_point[1])] = None
            continue
        stack.extend(node.children)
    return Repair(
        root,
        bytes(buf),
        first,
        sorted(n + 1 for n in blanked),
        tuple(sorted(names, key=lambda n: (n[1], n[2]))),
        complete=not root.has_error,
        original=original,
    )


def describe_lines(lines: list[int]) -> str:
    """``[3, 4, 5, 9]`` → ``"3-5, 9"``."""
    parts: list[str] = []
    for n in lines:
        if parts and n == int(parts[-1].rsplit("-", 1)[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{n}"
        else:
            parts.append(str(n))
    return ", ".join(parts)


def partial_reason(fixed: Repair) -> str:
    """The file record's reason for a file that parsed only in part."""
    where = describe_lines(fixed.blanked) if fixed.blanked else "?"
    rest = "" if fixed.complete else "; errors remain after the repair budget"
    noun = "line" if len(fixed.blanked) == 1 else "lines"
    return f"{fixed.first_error}; {noun} {where} not parsed, the rest indexed{rest}"


def extract_tree(
    grammar: Language,
    language: str,
    path: str,
    source: bytes,
    package: str,
    walk: Callable[[Node, bytes], tuple[tuple[SymbolFact, ...], tuple[Site, ...]]],
    *,
    python: bool = False,
) -> FileFacts:
    """Parse ``source`` and run a language's ``walk`` over it.

    A syntax error makes the file ``partial``: the lines that do not parse are blanked, everything else is
    walked, and the identifiers on the blanked lines are kept as ``unparsed`` (blind spots). Runaway nesting
    is a failed file.
    """
    fixed = repair(grammar, source, python=python)
    try:
        symbols, sites = walk(fixed.root, fixed.source)
        if not fixed.complete and fixed.original is not None:
            # errors remain: what tree-sitter's own recovery kept of declarations on blanked lines counts too
            found = {(s.qualified_name, s.kind) for s in symbols}
            recovered, _sites = walk(fixed.original, source)
            symbols = (*symbols, *(s for s in recovered if (s.qualified_name, s.kind) not in found))
    except RecursionError:
        return FileFacts(
            path=path, language=language, package=package, status="parse_failed", reason="nesting too deep to analyse"
        )
    if not fixed.first_error:
        return FileFacts(path=path, language=language, package=package, symbols=symbols, sites=sites)
    return FileFacts(
        path=path,
        language=language,
        package=package,
        status="partial",
        reason=partial_reason(fixed),
        symbols=symbols,
        sites=sites,
        unparsed=fixed.unparsed,
    )
