"""TypeScript the grammar misreads, made parseable without moving a byte.

tree-sitter-typescript 0.23 lacks two things effect 3.12 uses on almost every page (186 of its 361
source files were partial for them, and the repair that blanks a line can leave a namespace's members
outside it):

- variance annotations (``interface Fiber<out A, in E>``, TypeScript 4.7): the modifiers carry no name
  and no span of their own, so they are replaced with spaces;
- a generic call signature on its own line after another member (``readonly x: A`` then
  ``<B>(b: B): B``), read as type arguments of the member before: a ``;`` takes the last column of its
  indentation, only where the parse went wrong there, and only when the file then parses better.

Same byte offsets, so every position the checker reports stays true; texts (signatures) are read from the
original bytes again (``restore``). Only code counts: strings, template literals, comments and regular
expressions are skipped. After both, 29 of effect's 361 files are still partial.
"""

from __future__ import annotations

import re

from tree_sitter import Language, Node, Parser

_IDENT = re.compile(rb"[A-Za-z_$][\w$]*")
_MODIFIERS = re.compile(rb"(?:in\s+out|in|out)(?=\s+[A-Za-z_$])")
_REGEX_AFTER = frozenset(b"(,=:[!&|?{};+-*%<>~^")


def _code_mask(source: bytes) -> bytearray:
    """``source`` with every byte of a comment replaced by NUL, and of a string, template or regex literal by
    ``.`` (an operand)."""
    mask = bytearray(source)
    i, n = 0, len(source)
    last = 0  # the last significant code byte (decides whether ``/`` starts a regex)
    while i < n:
        c = source[i]
        if c == 0x2F and i + 1 < n and source[i + 1] in (0x2F, 0x2A):  # // or /*
            end = source.find(b"\n", i) if source[i + 1] == 0x2F else source.find(b"*/", i + 2)
            end = n if end < 0 else (end if source[i + 1] == 0x2F else end + 2)
            mask[i:end] = b"\x00" * (end - i)
            i = end
            continue
        if c in (0x22, 0x27, 0x60) or (c == 0x2F and (last == 0 or last in _REGEX_AFTER)):
            end = _literal_end(source, i)
            mask[i:end] = b"." * (end - i)
            i, last = end, 0x29  # a literal is an operand: a ``/`` after it divides
            continue
        if c not in b" \t\r\n":
            last = c
        i += 1
    return mask


def _literal_end(source: bytes, start: int) -> int:
    """The offset just past the string, template or regex literal starting at ``start``."""
    quote, n, i = source[start], len(source), start + 1
    in_class = False
    while i < n:
        c = source[i]
        if c == 0x5C:  # backslash
            i += 2
            continue
        if quote == 0x2F:
            if c == 0x0A:
                return i  # no regex after all: stop at the line end
            if c == 0x5B:
                in_class = True
            elif c == 0x5D:
                in_class = False
            elif c == 0x2F and not in_class:
                return i + 1
        elif quote == 0x60 and c == 0x24 and i + 1 < n and source[i + 1] == 0x7B:  # ${ ... } in a template
            depth, i = 1, i + 2
            while i < n and depth:
                depth += {0x7B: 1, 0x7D: -1}.get(source[i], 0)
                i += 1
            continue
        elif c == quote:
            return i + 1
        elif c == 0x0A and quote != 0x60:
            return i
        i += 1
    return n


def neutralize(source: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """``source`` with the variance modifiers blanked, and their (start, end) byte spans."""
    if b"in " not in source and b"out " not in source and b"in\t" not in source and b"out\t" not in source:
        return source, []
    mask = _code_mask(source)
    spans: list[tuple[int, int]] = []
    i, n = 0, len(mask)
    while True:
        i = mask.find(b"<", i)
        if i < 0:
            break
        j = i - 1
        while j >= 0 and mask[j] in b" \t":
            j -= 1
        if j < 0 or not (mask[j : j + 1].isalnum() or mask[j] in b"_$"):
            i += 1
            continue  # not ``Name<``: a comparison, JSX, an arrow's own generic list keeps its syntax
        depth, k, start = 0, i, True
        while k < n:
            c = mask[k]
            if c == 0x3C:  # <
                depth += 1
                start = depth == 1
            elif c == 0x3E and mask[k - 1] != 0x3D:  # > (not =>)
                depth -= 1
                if depth == 0:
                    break
            elif c == 0x2C and depth == 1:  # ,
                start = True
            elif c in b";{}()":
                break  # not a type parameter list after all
            elif start and c not in b" \t\r\n":
                start = False
                m = _MODIFIERS.match(bytes(mask[k : k + 16]))
                if m is not None:
                    after = mask[k + m.end() :].lstrip()
                    if _IDENT.match(bytes(after[:64])):
                        spans.append((k, k + m.end()))
                        k += m.end()
                        continue
            k += 1
        i += 1
    if not spans:
        return source, []
    out = bytearray(source)
    for a, b in spans:
        out[a:b] = b" " * (b - a)
    return bytes(out), spans


_MEMBER_LINE = re.compile(rb"^([ \t]+)<", re.MULTILINE)
_ROUNDS = 8


def _errors(node: Node) -> int:
    """How many ERROR or MISSING nodes a tree holds."""
    count, stack = 0, [node]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            count += 1
        if n.has_error:
            stack.extend(n.children)
    return count


_MEMBER_LISTS = frozenset({"object_type", "interface_body"})
_STATEMENTS = frozenset({"program", "statement_block", "class_body", "expression_statement", "arguments"})


def _misread_member(root: Node, offset: int) -> bool:
    """Whether the ``<`` at ``offset`` (first on its line) was read as type arguments of the line before or
    lies in an error, inside an object type or an interface body (or in an error tree-sitter could not place
    in any statement)."""
    node: Node | None = root.descendant_for_byte_range(offset, offset + 1)
    misread = node is not None and node.parent is not None and node.parent.type == "type_arguments"
    in_members = False
    while node is not None:
        misread = misread or node.is_error
        in_members = in_members or node.type in _MEMBER_LISTS
        if node.type in _STATEMENTS and not node.is_error:
            break
        node = node.parent
    return misread and (in_members or node is None or node.type == "program")


def _ends_member(mask: bytearray, at: int) -> bool:
    """Whether the code before ``at`` (comments skipped) ends a member: a name, a closing bracket or ``>``."""
    i = at - 1
    while i >= 0 and mask[i] in b" \t\r\n\x00":
        i -= 1
    return i >= 0 and (mask[i : i + 1].isalnum() or mask[i] in b"_$>)]}")


def separate_signatures(grammar: Language, source: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """A generic call signature on its own line after another member (``x: A`` then ``<B>(b: B): B``):
    TypeScript starts a new member there (type arguments never follow a line break), the grammar reads
    ``A<B>(...)`` and fails. Where a member list holds such a misread line, a ``;`` takes the indentation's
    last column (same offsets); kept only when the file parses with fewer errors."""
    mask = _code_mask(source)
    lines = [at for at in (m.end() - 1 for m in _MEMBER_LINE.finditer(source)) if _ends_member(mask, at)]
    if not lines:
        return source, []
    parser = Parser(grammar)
    tree = parser.parse(source)
    out, fixes = bytearray(source), []
    for _round in range(_ROUNDS):  # a fix can uncover the next misread member further down
        if not tree.root_node.has_error:
            break
        found = [(at - 1, at) for at in lines if out[at - 1] != 0x3B and _misread_member(tree.root_node, at)]
        if not found:
            break
        trial = bytearray(out)
        for a, _b in found:
            trial[a] = 0x3B  # ;
        parsed = parser.parse(bytes(trial))
        if _errors(parsed.root_node) >= _errors(tree.root_node):
            break
        out, tree, fixes = trial, parsed, fixes + found
    return (bytes(out), sorted(fixes)) if fixes else (source, [])


def prepare(grammar: Language, source: bytes, *, jsx: bool) -> tuple[bytes, list[tuple[int, int]]]:
    """The bytes to parse (variance modifiers blanked, misread call signatures separated; never for JSX,
    where a line may well start with ``<``) and the changed spans, for ``restore``."""
    parsed, spans = neutralize(source)
    if not jsx:
        parsed, fixes = separate_signatures(grammar, parsed)
        spans = sorted(spans + fixes)
    return parsed, spans


def restore(text: bytes, original: bytes, spans: list[tuple[int, int]]) -> bytes:
    """``text`` (a blanked copy of ``original``, same length) with the modifiers' bytes put back."""
    if not spans:
        return text
    out = bytearray(text)
    for a, b in spans:
        out[a:b] = original[a:b]
    return bytes(out)
