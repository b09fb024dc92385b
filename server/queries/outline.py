"""get_file_outline: the declarations under a file or a directory, in file and source order."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.errors import SYMBOL_NOT_FOUND, ToolError
from server.selector import check_repository
from snapshot_format.reader import Generation
from snapshot_format.records import PARSED_STATUSES, File, Symbol

MEMBER_KINDS = frozenset({"field", "property", "enum_member", "variant"})


@dataclass
class Outline:
    """The files a path names and the declarations under them (after the filters)."""

    files: list[File]
    symbols: list[Symbol] = field(default_factory=list)


def outline(
    gen: Generation, repository: str, path: str, *, kinds: frozenset[str] | None = None, include_members: bool = False
) -> Outline:
    """Declarations of a file, or of every file under a directory ("" is the repository root)."""
    check_repository(gen, repository)
    single = gen.file(repository, path) if path else None
    if single is not None:
        files = [single]
    else:
        files = list(gen.files(repository, path + "/" if path else ""))
    indexed = [f for f in files if f.status in PARSED_STATUSES]
    if not indexed:
        where = f"{repository} {path or '.'}"
        if files:
            reasons = "; ".join(f"{f.path}: {f.status}" + (f" ({f.reason})" if f.reason else "") for f in files[:5])
            raise ToolError(SYMBOL_NOT_FOUND, f"no indexed file at {where}: {reasons}")
        raise ToolError(
            SYMBOL_NOT_FOUND, f"no indexed file at {where}; list what is indexed with find_symbol or check graph_status"
        )
    symbols = [
        s
        for s in gen.declarations(repository, path, directory=single is None)
        if (kinds is None or s.kind in kinds) and (include_members or kinds is not None or s.kind not in MEMBER_KINDS)
    ]
    return Outline(files=indexed, symbols=symbols)
