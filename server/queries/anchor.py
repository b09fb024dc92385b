"""Where a declaration starts and ends in a file that changed since indexing, from the text alone.

The server never parses (no tree-sitter in ``serve``), so get_source re-anchors with two small scanners:

- Python, by indentation: the header runs to the ``:`` that closes it (brackets may wrap it over lines),
  the body is every following line indented deeper than the header; lines inside brackets, inside
  triple-quoted strings or after a backslash continue the line before them, whatever their indentation.
  Decorators directly above the header belong to the declaration. A statement that opens no block (an
  assignment) ends where its brackets close.
- the others (Go, TypeScript / JavaScript, Rust, Dart), by braces: from the declaring line, the first ``{`` outside
  strings, comments and character literals opens the body and its matching ``}`` ends the declaration; a
  declaration with no body (``type A = B;``, ``var x int``) ends at the ``;`` or the end of the line that
  closes its brackets.

Which scanner a language gets, and its string syntax, is its row's ``body`` in the language table
(``snapshot_format/languages.py``). A language without a row, or text the scanner cannot balance (a half-typed
edit), gets ``None``: the caller then keeps the indexed length and says the end is unchecked.
"""

from __future__ import annotations

import re

from snapshot_format.languages import BodySyntax, language

_CONTINUES = ("=", ",", "(", "[", "{", "|", "&", "+", "-", "*", "/", ".", "=>", ":", "?", "\\")
_PY_DECORATOR = re.compile(r"^\s*@")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


class _PythonLines:
    """Per line: whether it starts inside brackets or a string (a continuation), and its bracket depth after."""

    def __init__(self, lines: list[str]) -> None:
        self.continuation: list[bool] = []
        self.depth_after: list[int] = []
        depth = 0
        string: str | None = None  # the open quote of a string that spans lines
        backslash = False
        for line in lines:
            self.continuation.append(depth > 0 or string is not None or backslash)
            i, n = 0, len(line)
            while i < n:
                c = line[i]
                if string is not None:
                    if c == "\\":
                        i += 2
                        continue
                    if line.startswith(string, i):
                        i += len(string)
                        string = None
                        continue
                    i += 1
                    continue
                if c == "#":
                    break
                if c in "([{":
                    depth += 1
                elif c in ")]}":
                    depth = max(0, depth - 1)
                elif c in "'\"":
                    quote = line[i : i + 3] if line.startswith(c * 3, i) else c
                    string = quote
                    i += len(quote)
                    continue
                i += 1
            if string is not None and len(string) == 1:
                string = None  # an unterminated one-line string ends with its line
            backslash = line.rstrip("\n").endswith("\\") and string is None
            self.depth_after.append(depth)


def python_end(lines: list[str], start: int) -> int | None:
    """The last line (1-based) of the Python declaration whose header is on line ``start``."""
    scan = _PythonLines(lines)
    header_indent = _indent(lines[start - 1])
    index = start - 1
    # The header: up to the line where the brackets close.
    while index < len(lines) and scan.depth_after[index] > 0:
        index += 1
    if index >= len(lines):
        return None
    header_text = lines[index].split("#", 1)[0].rstrip()
    if not header_text.endswith(":"):
        return index + 1  # a one-line body (def f(): return 1) or a statement without a block
    end = index + 1
    for later in range(index + 1, len(lines)):
        text = lines[later]
        if scan.continuation[later]:
            end = later + 1
            continue
        if not text.strip():
            continue
        if _indent(text) <= header_indent:
            break
        end = later + 1
    return end


def python_start(lines: list[str], declaring: int) -> int:
    """The first line of the declaration: its decorators directly above the declaring line."""
    start = declaring
    indent = _indent(lines[declaring - 1])
    while start > 1 and _PY_DECORATOR.match(lines[start - 2]) and _indent(lines[start - 2]) == indent:
        start -= 1
    return start


def _char_literal(line: str, i: int) -> int:
    """Length of a character literal at ``i`` ('x', '\\n', '\\u{1F}'), or 0 (a Rust lifetime, a stray quote)."""
    m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", line[i:])
    return len(m.group(0)) if m else 0


def brace_end(lines: list[str], start: int, syntax: BodySyntax) -> int | None:
    """The last line (1-based) of the brace-language declaration that starts on line ``start``."""
    single_quote_strings = syntax.single_quote_strings
    raw_backticks = syntax.raw_backticks
    depth = 0  # (), [] and {} together
    opened = False
    in_block_comment = False
    string: str | None = None  # an open string delimiter: ", ', `, ''' or """
    templates: list[int] = []  # the bracket depth at each open ${ of a template literal
    for index in range(start - 1, len(lines)):
        line = lines[index]
        i, n = 0, len(line)
        while i < n:
            if in_block_comment:
                close = line.find("*/", i)
                if close < 0:
                    break
                in_block_comment = False
                i = close + 2
                continue
            c = line[i]
            if string is not None:
                if c == "\\" and not (string == "`" and raw_backticks):  # raw strings have no escapes
                    i += 2
                    continue
                if string == "`" and not raw_backticks and line.startswith("${", i):
                    templates.append(depth)
                    string = None
                    i += 2
                    continue
                if line.startswith(string, i):
                    i += len(string)
                    string = None
                    continue
                i += 1
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block_comment = True
                i += 2
                continue
            if c == '"' or c == "`" or (c == "'" and single_quote_strings):
                triple = line[i : i + 3]
                string = triple if syntax.triple_quote_strings and triple in ("'''", '"""') else c
                i += len(string)
                continue
            if c == "'":
                i += _char_literal(line, i) or 1
                continue
            if c == "}" and templates and depth == templates[-1]:
                templates.pop()
                string = "`"
                i += 1
                continue
            if c in "([{":
                depth += 1
                if c == "{":
                    opened = True
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    return None
                if depth == 0 and c == "}" and opened:
                    return index + 1
            elif c == ";" and depth == 0:
                return index + 1
            i += 1
        if string is not None and string in ("'", '"'):
            return None  # a one-line string left open: not text we can balance
        if depth == 0 and not opened and string is None and not in_block_comment:
            stripped = line.split("//", 1)[0].rstrip()
            if stripped and not stripped.endswith(_CONTINUES):
                return index + 1
    return None


def syntax_end(lines: list[str], start: int, language_id: str) -> int | None:
    """The declaration's last line by its syntax, or None when the language or the text is not covered."""
    row = language(language_id)
    if row is None or not 1 <= start <= len(lines):
        return None
    if row.body.blocks == "indent":
        return python_end(lines, start)
    return brace_end(lines, start, row.body)


def declaration_start(lines: list[str], declaring: int, language_id: str) -> int:
    """The first line of the declaration declared on ``declaring``: its decorators above, where the language has them."""
    row = language(language_id)
    return python_start(lines, declaring) if row is not None and row.body.blocks == "indent" else declaring
