"""get_source: the bytes of declarations, confined to their repository, checked against the indexed hash.

A file is read only if the generation publishes it, through directory file
descriptors opened with O_NOFOLLOW from the repository root down, so no
symlink component (and no ``..``) can lead outside the repository, even if the
tree changes while it is read. When the file's SHA-256 differs from the one
indexed, the file is the authority: the declaration is re-anchored to the
nearest line that declares its name, its end is found again from its syntax
(server/queries/anchor.py: indentation for Python, braces for Go, TypeScript,
JavaScript, Rust and Dart), and the shift is declared, so a function that grew
is served whole. Re-anchoring never creates graph facts.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field

from server.queries.anchor import declaration_start, syntax_end
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol

BYTE_CEILING = 262_144
MAX_FILE_BYTES = 32 << 20
_COMMENT_PREFIXES = ("//", "*", "/*", "#")
_DECLARING = (
    "def",
    "class",
    "func",
    "function",
    "fn",
    "struct",
    "type",
    "interface",
    "enum",
    "trait",
    "const",
    "let",
    "var",
    "static",
    "impl",
    "mod",
    "module",
    "namespace",
    "async",
    "pub",
    "export",
    "abstract",
    "final",
)


class Refused(Exception):
    """A row whose bytes cannot be served; the message is the reason shown to the agent."""


@dataclass(frozen=True)
class Body:
    """Served bytes of one declaration; ``shift`` is set when the file changed since indexing."""

    symbol: Symbol
    start: int  # served declaration range (without context), 1-based inclusive
    end: int
    text: str  # the bytes served, context included
    shift: int | None = None
    trimmed: bool = False
    note: str = ""  # what re-anchoring found about the end: "" (as indexed), a new length, or unchecked


@dataclass(frozen=True)
class Refusal:
    symbol: Symbol
    reason: str


@dataclass
class SourceAnswer:
    items: list[Body | Refusal] = field(default_factory=list)
    trimmed: int = 0

    @property
    def bodies(self) -> int:
        return sum(1 for i in self.items if isinstance(i, Body))


def read_confined(root: str, relative: str) -> bytes:
    """The bytes of ``root/relative``, refusing absolute paths, ``..`` and any symlink component."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise Refused("the path escapes the repository")
    try:
        dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(f"the repository root cannot be opened: {exc.strerror}") from None
    try:
        for part in parts[:-1]:
            _check_component(dir_fd, part, want_dir=True)
            try:
                next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            except OSError as exc:
                raise Refused(f"{part}: {exc.strerror}") from None
            os.close(dir_fd)
            dir_fd = next_fd
        _check_component(dir_fd, parts[-1], want_dir=False)
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            raise Refused(f"the file cannot be opened: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise Refused("not a regular file")
            if info.st_size > MAX_FILE_BYTES:
                raise Refused(f"the file is larger than {MAX_FILE_BYTES} bytes")
            chunks = []
            remaining = MAX_FILE_BYTES + 1
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            data = b"".join(chunks)
            if len(data) > MAX_FILE_BYTES:
                raise Refused(f"the file is larger than {MAX_FILE_BYTES} bytes")
            return data
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def _check_component(dir_fd: int, part: str, *, want_dir: bool) -> None:
    try:
        info = os.stat(part, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise Refused("the file is not on disk any more (deleted or moved since indexing)") from None
    except OSError as exc:
        raise Refused(f"{part}: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise Refused("the path has a symlink component, which is never followed")
    if want_dir and not stat.S_ISDIR(info.st_mode):
        raise Refused(f"{part} is not a directory")


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith(_COMMENT_PREFIXES)


def reanchor(lines: list[str], sym: Symbol) -> int:
    """The signed shift from the indexed start line to the nearest line declaring the name."""
    name = sym.name
    if not name or not re.fullmatch(r"[\w$]+", name):
        raise Refused("the file changed and the name cannot be searched for")
    word = re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")
    keyword = re.compile(r"(?:^|\s)(?:" + "|".join(_DECLARING) + r")\s+[*&]?" + re.escape(name) + r"(?![\w$])")
    assignment = re.compile(r"^\s*" + re.escape(name) + r"\s*(?::[^=]*)?=(?!=)")
    strong: list[int] = []
    weak: list[int] = []
    for number, line in enumerate(lines, start=1):
        if _is_comment(line) or not word.search(line):
            continue
        (strong if keyword.search(line) or assignment.search(line) else weak).append(number)
    candidates = strong or weak
    if not candidates:
        raise Refused("the file changed and no line declares the name any more")
    best = min(abs(n - sym.start_line) for n in candidates)
    nearest = [n for n in candidates if abs(n - sym.start_line) == best]
    if len(nearest) > 1:
        raise Refused("the file changed and two lines declaring the name are equally near")
    return nearest[0] - sym.start_line


def _serve(sym: Symbol, data: bytes, fresh: bool, context: int) -> Body:
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    if sym.start_line <= 0:
        raise Refused("the generation recorded no line range")
    start, end = sym.start_line, max(sym.end_line, sym.start_line)
    shift: int | None = None
    note = ""
    if not fresh:
        if sym.kind == "module" and start == 1:
            shift = 0
            end = max(len(lines), 1)
        else:
            declaring = sym.start_line + reanchor(lines, sym)
            new_start = declaration_start(lines, declaring, sym.language)
            # A decorated declaration was indexed from its first decorator: keep that distance when the
            # decorators cannot be seen (a language without them, an edit that removed them).
            shift = new_start - sym.start_line
            found_end = syntax_end(lines, declaring, sym.language)
            indexed_length = end - start
            start = new_start
            if found_end is None:
                end = start + indexed_length
                note = "end unchecked"
            else:
                end = max(found_end, start)
                if end - start != indexed_length:
                    note = f"{end - start + 1} lines, indexed {indexed_length + 1}"
    if end > len(lines):
        raise Refused("the declaration runs past the end of the file" + (" after re-anchoring" if shift else ""))
    first, last = max(1, start - context), min(len(lines), end + context)
    text = "".join(lines[first - 1 : last])
    if text and not text.endswith("\n"):
        text += "\n"
    return Body(symbol=sym, start=start, end=end, text=text, shift=shift, note=note)


def _cut(body: Body, budget: int) -> Body | None:
    """The body cut at the last line boundary within ``budget`` bytes, or None when not even a line fits."""
    raw = body.text.encode("utf-8")[:budget]
    cut = raw.rfind(b"\n")
    if cut < 0:
        return None
    return Body(
        body.symbol,
        body.start,
        body.end,
        raw[: cut + 1].decode("utf-8", "ignore"),
        body.shift,
        trimmed=True,
        note=body.note,
    )


def get_sources(
    gen: Generation, symbols: list[Symbol], *, context_lines: int = 0, ceiling: int = BYTE_CEILING
) -> SourceAnswer:
    """Bodies in request order; a refused row never stops the others; files are read once."""
    answer = SourceAnswer()
    cache: dict[tuple[str, str], tuple[bytes, bool] | Refused] = {}
    used = 0
    for sym in symbols:
        try:
            key = (sym.repository, sym.path)
            entry = cache.get(key)
            if entry is None:
                entry = cache[key] = _load(gen, sym)
            if isinstance(entry, Refused):
                raise entry
            data, fresh = entry
            body = _serve(sym, data, fresh, context_lines)
        except Refused as exc:
            answer.items.append(Refusal(sym, str(exc)))
            continue
        size = len(body.text.encode("utf-8"))
        if used + size > ceiling:
            answer.trimmed += 1
            partial = _cut(body, ceiling - used)
            if partial is None:
                answer.items.append(
                    Refusal(sym, f"trimmed: the answer reached the {ceiling} byte ceiling; ask for it alone")
                )
                used = ceiling
                continue
            body = partial
            size = len(body.text.encode("utf-8"))
        used += size
        answer.items.append(body)
    return answer


def _load(gen: Generation, sym: Symbol) -> tuple[bytes, bool] | Refused:
    record = gen.file(sym.repository, sym.path)
    if record is None:
        return Refused("the generation publishes no such file")
    repo = gen.repository(sym.repository)
    if repo is None or not repo.root:
        return Refused("the repository has no recorded root")
    try:
        data = read_confined(repo.root, sym.path)
    except Refused as exc:
        return exc
    fresh = bool(record.content_hash) and hashlib.sha256(data).hexdigest() == record.content_hash
    return data, fresh
