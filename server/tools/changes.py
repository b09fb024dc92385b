"""get_blast_radius of a change: ``changes: {"base": rev}`` or ``{"diff": text}`` (docs/surface.md §11.9.1).

The roots are the declarations the changed lines fall in, and the declarations the change adds or removes
(``server/queries/changes.py`` decides, file by file and by content hash, which side of the diff the
generation holds). Each root in the generation is walked as a blast radius of its own (its counterparts
too); the answer lists the roots, each with its count and verdict, and one affected set: every symbol some
root reaches, at the fewest hops, with the edge of that walk. Completeness merges the roots' verdicts, and a
changed file the generation cannot map (edited since indexing) is ``pending``: named, never guessed at.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from server import gitdiff, views
from server.args import Args
from server.cursor import scope
from server.declarations import MAX_DIFF_TEXT, Changes
from server.errors import REPOSITORY_NOT_FOUND, TRAVERSAL_LIMIT_REACHED, ToolError, invalid
from server.queries import counterparts, traverse
from server.queries.changes import (
    MAX_FILES,
    Decided,
    DiffError,
    FileDiff,
    Root,
    SideHashes,
    all_lines_added,
    compress_lines,
    consistent,
    decide_side,
    language_of,
    other_side,
    parse_unified_diff,
    roots_of,
    sha256,
    whole_side,
)
from server.queries.repositories import is_derived
from server.queries.source import Refused, read_confined
from server.selector import SELECTOR_FIELDS
from server.tools.common import read_in_language, read_paging, read_symbol_kinds, read_view, wrap
from server.tools.tree import tree_answer
from server.tools.walk import (
    DEADLINE_SECONDS,
    Row,
    WalkArgs,
    blast_row_filter,
    compact_blast_head,
    compact_nodes,
    completeness_block,
    full_aggregates,
    full_node,
    kind_filters,
    load_rows,
    read_walk_args,
    rows_coverage,
    run_walk,
    tests_last,
    walk_guidance,
)
from snapshot_format import keys
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol, Unresolved
from snapshot_format.vocab import DECLARATION_ROWS

MAX_ROOTS = 200  # roots walked in one question; the rest are counted
MAX_UNTRACKED_BYTES = 1 << 20  # an untracked file larger than this is pending, not read


@dataclass
class ChangeSet:
    """The changed files of the question, each with the side of its diff the generation holds."""

    echo: dict[str, Any]
    identity: str  # what the cursor binds to: the diff itself and what each side's bytes were
    decided: list[Decided] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # repositories that could not be diffed
    files_left_out: int = 0  # changed files past MAX_FILES


def _diff_text(args: Args) -> str | None:
    value = args.raw("diff")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise invalid(f"{args.name('diff')} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise invalid(f"{args.name('diff')} must not contain a NUL character")
    if len(value) > MAX_DIFF_TEXT:
        raise invalid(
            f"{args.name('diff')} must be at most {MAX_DIFF_TEXT} characters; got {len(value)} "
            "(ask about fewer files at a time)"
        )
    return value


def _roots_by_repository(gen: Generation) -> dict[str, str]:
    return {r.name: r.root for r in gen.repositories()}


def _disk(root: str, path: str | None) -> bytes | None:
    if not root or not path:
        return None
    try:
        return read_confined(root, path)
    except Refused:
        return None


def read_changes(gen: Generation, raw: object) -> ChangeSet:
    """``changes`` read, diffed and decided; INVALID_ARGUMENT naming the field for what cannot be."""
    if not isinstance(raw, dict):
        raise invalid("changes must be an object: {base: a git revision} or {diff: unified diff text}")
    args = Args(raw, Changes, where="changes")
    base = args.string("base")
    text = _diff_text(args)
    repository = args.string("repository")
    if (base is None) == (text is None):
        raise invalid("changes takes exactly one of base (a git revision) or diff (unified diff text)")
    roots = _roots_by_repository(gen)
    if repository is not None and (repository not in roots or gen.repository(repository) is None):
        raise ToolError(REPOSITORY_NOT_FOUND, f"changes.repository: no repository named {repository!r} is indexed")
    if base is not None:
        return _from_base(gen, base, repository, roots)
    assert text is not None
    return _from_text(gen, text, repository, roots)


def _from_base(gen: Generation, base: str, repository: str | None, roots: dict[str, str]) -> ChangeSet:
    names = [repository] if repository is not None else [n for n in roots if not is_derived(n)]
    out = ChangeSet(echo={"base": base}, identity="")
    commits: dict[str, str] = {}
    digest = hashlib.sha256(f"base\0{base}".encode())
    for name in names:
        root = roots.get(name, "")
        try:
            if not root:
                raise gitdiff.GitError("the generation records no root directory for it")
            tree = gitdiff.working_tree_diff(root, base)
        except gitdiff.GitError as exc:
            if repository is not None:
                raise invalid(f"changes.base: {exc} (repository {name}, {root})") from None
            out.skipped.append({"repository": name, "reason": str(exc)})
            continue
        commits[name] = tree.commit
        digest.update(f"\0{name}\0{tree.commit}\0".encode() + tree.diff.encode())
        try:
            files = parse_unified_diff(tree.diff)
        except DiffError as exc:
            raise invalid(f"changes.base: git's diff of {name} could not be read: {exc}") from None
        record = gen.repository(name)
        languages = set(record.languages) if record is not None else set()
        for path in tree.untracked:
            if language_of(path) not in languages:
                continue
            data = _disk(root, path)
            files.append(
                all_lines_added(path, data)
                if data is not None and len(data) <= MAX_UNTRACKED_BYTES
                else FileDiff(old_path=None, new_path=path)
            )
        files = _bounded(out, files)
        new_bytes = {f.path: _disk(root, f.new_path) for f in files}
        for f in files:
            data = new_bytes[f.path]
            digest.update(f"\0{f.path}\0{sha256(data) if data is not None else '-'}".encode())
        # the base side's bytes, only where the working tree's are not what the generation indexed
        wanted = []
        for f in files:
            indexed = gen.file(name, f.old_path) if f.old_path else None
            data = new_bytes[f.path]
            if indexed is not None and (data is None or sha256(data) != indexed.content_hash):
                wanted.append(f.old_path or "")
        try:
            blobs = gitdiff.base_blobs(root, tree.commit, [p for p in wanted if p])
        except gitdiff.GitError as exc:
            if repository is not None:
                raise invalid(f"changes.base: {exc} (repository {name})") from None
            out.skipped.append({"repository": name, "reason": str(exc)})
            continue
        for f in files:
            data = new_bytes[f.path]
            blob = blobs.get(f.old_path or "")
            hashes = SideHashes(
                new=sha256(data) if data is not None and f.new_path else None,
                old=sha256(blob) if blob is not None else None,
            )
            out.decided.append(decide_side(gen, name, f, hashes))
    if not commits:
        reasons = "; ".join(f"{s['repository']}: {s['reason']}" for s in out.skipped) or "no repository is indexed"
        raise invalid(f"changes.base: no repository could be diffed against {base!r} ({reasons})")
    out.echo["commits"] = {n: c[:12] for n, c in commits.items()}
    out.identity = digest.hexdigest()
    return out


def _bounded(out: ChangeSet, files: list[FileDiff]) -> list[FileDiff]:
    room = MAX_FILES - len(out.decided)
    if len(files) > room:
        out.files_left_out += len(files) - max(room, 0)
        return files[: max(room, 0)]
    return files


def _from_text(gen: Generation, text: str, repository: str | None, roots: dict[str, str]) -> ChangeSet:
    try:
        files = parse_unified_diff(text)
    except DiffError as exc:
        raise invalid(f"changes.diff: {exc}") from None
    if not files:
        raise invalid("changes.diff holds no file of a unified diff (--- and +++ lines, then @@ hunks)")
    out = ChangeSet(echo={"diff": f"{len(files)} file(s)"}, identity=hashlib.sha256(text.encode()).hexdigest())
    files = _bounded(out, files)
    candidates = [repository] if repository is not None else [n for n in roots if not is_derived(n)]
    digest = hashlib.sha256(text.encode())
    for f in files:
        holders = [
            n
            for n in candidates
            if any(gen.file(n, p) is not None for p in (f.old_path, f.new_path) if p)
            or _disk(roots.get(n, ""), f.path) is not None
        ]
        if repository is None and len(holders) != 1:
            reason = (
                "several repositories hold this path (" + ", ".join(holders) + "): pass changes.repository"
                if holders
                else "no registered repository holds this path"
            )
            out.decided.append(
                Decided(holders[0] if holders else "", f, "pending" if holders else "not_indexed", None, reason)
            )
            continue
        name = holders[0] if holders else candidates[0]
        data = _disk(roots.get(name, ""), f.path)
        hashes = SideHashes()
        if data is not None:
            # the file on disk is one side (the diff applied, or not yet): the other is the hunks applied to it
            if consistent(data, f, new=True):
                hashes.new = sha256(data)
                if f.old_path is not None:
                    hashes.old = sha256(other_side(data, f, to_new=False))
            elif consistent(data, f, new=False):
                hashes.old = sha256(data)
                if f.new_path is not None:
                    hashes.new = sha256(other_side(data, f, to_new=True))
            digest.update(f"\0{name}\0{f.path}\0{sha256(data)}".encode())
        for new in (True, False):
            whole = whole_side(f, new=new)
            if whole is not None:
                if new and hashes.new is None:
                    hashes.new = sha256(whole)
                if not new and hashes.old is None:
                    hashes.old = sha256(whole)
        decided = decide_side(gen, name, f, hashes)
        indexed = decided.indexed
        if (
            decided.side == "pending"
            and data is not None
            and indexed is not None
            and indexed.content_hash == sha256(data)
        ):
            decided.reason = "the diff does not apply to the indexed file: its lines are not where the hunks say"
        out.decided.append(decided)
    out.identity = digest.hexdigest()
    return out


# --- walking the roots -----------------------------------------------------------------------------------------


@dataclass
class RootWalk:
    root: Root
    seeds: dict[bytes, Symbol] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    verdict: traverse.Completeness | None = None
    affected: int = 0
    uses: list[Unresolved] = field(default_factory=list)  # a removed declaration's uses that no longer bind
    walked: bool = False
    truncated: bool = False  # max_nodes stopped this root's walk


def _still_used(gen: Generation, root: Root) -> list[Unresolved]:
    """The uses of a removed declaration's name that nothing binds any more (same language family)."""
    language = language_of(root.path)
    return [
        u
        for u in gen.unresolved_by_name(root.name)
        if u.path
        and u.reason not in DECLARATION_ROWS
        and (not u.language or traverse.family(u.language) == traverse.family(language))
    ]


def blast_radius_of_changes(gen: Generation, args: Args) -> dict[str, Any]:
    """What a change breaks: the blast radius of every declaration it touches, merged (module docstring)."""
    given = [f for f in SELECTOR_FIELDS if args.raw(f) not in (None, "")]
    if given:
        raise invalid(f"changes replaces the symbol: pass changes or {given[0]}, not both")
    repo = args.string("in_repository")
    walk_args = read_walk_args(args)
    kinds, kinds_echo = read_symbol_kinds(args)
    language = read_in_language(args, gen)
    include_derived = args.boolean("include_derived")
    view = read_view(args, files_allowed=False, tree_allowed=True)
    paging = read_paging(args, gen)
    if repo is not None and gen.repository(repo) is None:
        raise ToolError(REPOSITORY_NOT_FOUND, f"in_repository: no repository named {repo!r} is indexed")
    changes = read_changes(gen, args.raw("changes"))
    roots = [r for d in changes.decided for r in roots_of(gen, d)]
    walks = _walk_roots(gen, roots, walk_args)
    kept = blast_row_filter(kinds, kinds_echo, repo, language, include_derived)

    # A root another root reaches is affected too (an edited caller of a removed function): it is a row.
    merged: dict[bytes, Row] = {}
    relations: dict[bytes, set[int]] = {}
    for w in walks:
        mine = [r for r in w.rows if r.reached.key16 not in w.seeds and kept(r)]
        w.affected = len(mine)
        for r in mine:
            best = merged.get(r.reached.key16)
            if best is None or r.reached.depth < best.reached.depth:
                merged[r.reached.key16] = r
    for w in walks:
        for r in w.rows:
            relations.setdefault(r.reached.key16, set()).add(r.reached.via_kind)
    rows, in_tests = tests_last(gen, list(merged.values()))
    agg = traverse.aggregate([(r.reached, r.symbol) for r in rows], relations)
    verdict = _merged_verdict(gen, changes, walks)
    cursor_scope = scope(
        "get_blast_radius",
        "blast-radius-changes-v1",
        changes=changes.identity,
        depth=walk_args.depth,
        max_nodes=walk_args.max_nodes,
        edge_kinds=walk_args.kinds_identity,
        confidence=walk_args.confidence,
        kinds=kinds_echo,
        repo=repo,
        language=language,
        include_derived=include_derived,
    )
    total = len(rows)
    truncated_walk = any(w.truncated for w in walks)
    if view == "tree":
        return tree_answer(
            gen,
            roots=[w.seeds for w in walks if w.walked],
            rows=rows,
            outgoing=False,
            walk_args=walk_args,
            extra=_described(gen, changes, walks, compact=True),
            completeness=_completeness(verdict, gen, changes, walks, compact=True),
            cursor_given=args.raw("cursor") is not None,
            truncated_walk=truncated_walk,
        )

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = rows[start:end]
        page_main = [r for r in page if id(r) not in in_tests]
        page_tests = [r for r in page if id(r) in in_tests]
        filters = kind_filters(kinds_echo, view)
        deepest = max((r.reached.depth for r in rows), default=0)
        described = _described(gen, changes, walks, compact=view != "full")
        if view == "full":
            results: dict[str, Any] = {
                **described,
                "depth": walk_args.depth,
                "max_nodes": walk_args.max_nodes,
                **filters,
                "affected": total,
                "affected_in_tests": len(in_tests),
                "deepest_depth": deepest,
                "traversal_truncated": truncated_walk,
                "symbols": [full_node(r) for r in page_main],
                "tests": [full_node(r) for r in page_tests],
                **full_aggregates(agg),
            }
        else:
            first = next((w.root.symbol for w in walks if w.root.symbol is not None), None)
            head: dict[str, Any] = {}
            if first is not None:
                head = compact_blast_head(first, walk_args, filters, rows, len(page), deepest, truncated_walk, agg)
                head.pop("root", None)
                head.pop("by_package", None)
            results = {**described, **head}
            header, body = compact_nodes(page_main, tests=page_tests)
            results = views.finish({**results, **header, **body})
        coverage = rows_coverage(rows)
        coverage.unresolved_related += verdict.unresolved_count
        guidance = walk_guidance(total, len(page), truncated_walk, walk_args.max_nodes)
        if not roots:
            guidance = "the change touches no declaration the graph holds" + (
                "; pending files are named in results.pending"
                if any(d.side == "pending" for d in changes.decided)
                else ""
            )
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=coverage,
            results=results,
            completeness=_completeness(verdict, gen, changes, walks, compact=view != "full"),
            guidance=guidance,
        )

    return paging.fit(
        gen,
        total,
        cursor_scope,
        answer,
        tool="get_blast_radius",
        narrow_with="depth, max_nodes, edge_kinds or confidence",
    )


def _completeness(
    verdict: traverse.Completeness, gen: Generation, changes: ChangeSet, walks: list[RootWalk], *, compact: bool
) -> dict[str, Any]:
    """The merged verdict, with what only a change can add: files pending, declarations removed before
    indexing (known by name only), roots past the number one question walks, files past the diff's bound."""
    block = completeness_block(verdict, gen, compact=compact)
    extra = {
        "pending_files": sum(1 for d in changes.decided if d.side == "pending"),
        "removed_not_indexed": sum(1 for w in walks if w.root.symbol is None and w.root.change == "removed"),
        "roots_not_walked": sum(1 for w in walks if w.root.symbol is not None and not w.walked),
        "files_left_out": changes.files_left_out,
    }
    block.update({k: v for k, v in extra.items() if v})
    return block


def _walk_roots(gen: Generation, roots: list[Root], walk_args: WalkArgs) -> list[RootWalk]:
    deadline = time.monotonic() + DEADLINE_SECONDS
    out: list[RootWalk] = []
    walked = 0
    for root in roots:
        w = RootWalk(root)
        out.append(w)
        if root.symbol is None:
            if root.change == "removed":
                w.uses = _still_used(gen, root)
            continue
        if walked >= MAX_ROOTS:
            continue
        walked += 1
        sym = root.symbol
        group = counterparts.counterparts(gen, sym)
        w.seeds = {keys.key_to_bytes(sym.key): sym, **{keys.key_to_bytes(s.key): s for s in group}}
        result = run_walk(gen, list(w.seeds), outgoing=False, walk_args=walk_args, deadline=deadline)
        w.rows = load_rows(gen, result, w.seeds)
        w.verdict = traverse.completeness(gen, sym, result, walk_args.depth, also=group)
        w.walked = True
        w.truncated = result.truncated
        if time.monotonic() > deadline:
            raise ToolError(
                TRAVERSAL_LIMIT_REACHED,
                f"the walks of the change's roots did not finish within {DEADLINE_SECONDS:g} seconds; lower depth "
                "or max_nodes, or ask about fewer files (changes.repository, or a smaller changes.diff)",
            )
    return out


# --- merging the verdicts ------------------------------------------------------------------------------------


def _fallback_names(fallback: dict[str, object] | None) -> list[str]:
    if not fallback:
        return []
    pattern = str(fallback.get("pattern", ""))
    inner = pattern.removeprefix(r"\b").removesuffix(r"\b")
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    return [n for n in inner.split("|") if n]


def _merged_verdict(gen: Generation, changes: ChangeSet, walks: list[RootWalk]) -> traverse.Completeness:
    spots: dict[tuple[str, str, int, int, str, str], Unresolved] = {}
    scopes: dict[tuple[str, str, str, str], Unresolved] = {}
    more_spots = more_scopes = candidates = 0
    missing: list[tuple[str, str, str]] = []
    dispatch = ""
    names: list[str] = []
    paths: dict[str, None] = {}
    lower = False
    roots_dir = _roots_by_repository(gen)
    for w in walks:
        c = w.verdict
        if c is not None:
            lower = lower or c.verdict == "LOWER_BOUND"
            for u in c.blind_spots:
                spots.setdefault((u.repository, u.path, u.line, u.col, u.reason, u.name), u)
            for u in c.invisible_scopes:
                scopes.setdefault((u.repository, u.package, u.reason, u.detail), u)
            more_spots += c.more_blind_spots
            more_scopes += c.more_invisible_scopes
            candidates += c.candidate_edges
            missing += [m for m in c.missing_analyzers if m not in missing]
            dispatch = dispatch or c.dispatch_unknown
            names += _fallback_names(c.fallback)
            if c.fallback:
                paths.update(dict.fromkeys(c.fallback.get("paths", [])))  # type: ignore[arg-type]
        elif w.root.symbol is None and w.root.change == "removed":
            # removed before indexing: its former users are known only by the uses of its name that fail to bind
            lower = True
            names.append(w.root.name)
            for u in w.uses:
                spots.setdefault((u.repository, u.path, u.line, u.col, u.reason, u.name), u)
                paths.setdefault(traverse.on_disk(roots_dir, u.repository, u.path), None)
            if not w.uses:
                paths.setdefault(traverse.on_disk(roots_dir, w.root.repository, ""), None)
        elif w.root.symbol is not None and not w.walked:
            lower = True
    pending = any(d.side == "pending" for d in changes.decided)
    lower = lower or pending or changes.files_left_out > 0
    listed = sorted(spots.values(), key=lambda u: (u.repository, u.path, u.line, u.col, u.name))
    cap = traverse.COMPLETENESS_LIST_CAP
    fallback = None
    if lower and (names or paths):
        unique = list(dict.fromkeys(n for n in names if n))
        for d in changes.decided:
            if d.side == "pending":
                paths.setdefault(traverse.on_disk(roots_dir, d.repository, d.diff.path), None)
        if unique:
            pattern = unique[0] if len(unique) == 1 else "(" + "|".join(unique) + ")"
            fallback = {"pattern": rf"\b{pattern}\b", "paths": list(paths)}
    return traverse.Completeness(
        verdict="LOWER_BOUND" if lower else "COMPLETE",
        blind_spots=listed[:cap],
        more_blind_spots=more_spots + max(len(listed) - cap, 0),
        invisible_scopes=list(scopes.values())[:cap],
        more_invisible_scopes=more_scopes + max(len(scopes) - cap, 0),
        candidate_edges=candidates,
        missing_analyzers=missing,
        fallback=fallback,
        dispatch_unknown=dispatch,
    )


# --- what the answer says about the change ---------------------------------------------------------------------


def _root_entry(gen: Generation, w: RootWalk, *, compact: bool) -> dict[str, Any]:
    r = w.root
    entry: dict[str, Any] = {}
    if r.symbol is not None:
        s = r.symbol
        entry["at"] = f"{s.repository}:{s.path}:{s.start_line}"
        entry["qn"] = s.qualified_name
        if not compact:
            entry.update(
                {
                    "stable_key": s.key,
                    "kind": s.kind,
                    "start_line": s.start_line,
                    "end_line": s.end_line,
                    "generation_side": r.side,
                }
            )
    else:
        entry["at"] = f"{r.repository}:{r.path}:{r.line}"
        entry["name"] = r.name
        entry["indexed"] = False
        if r.change == "removed":
            entry["verdict"] = "LOWER_BOUND"  # its former users are known by name only
        if not compact:
            entry["generation_side"] = r.side
    entry["change"] = r.change
    entry["lines"] = compress_lines(r.lines)
    if w.walked:
        entry["affected"] = w.affected
        if w.verdict is not None:
            entry["verdict"] = w.verdict.verdict
    elif r.symbol is not None:
        entry["walked"] = False  # past the number of roots one question walks
    if w.uses:
        by_file: dict[str, list[str]] = {}
        for u in w.uses:
            holder = gen.symbol(u.source) if u.source else None
            where = views.module_label(holder) if holder is not None else f"@{u.line}"
            by_file.setdefault(f"{u.repository}:{u.path}", []).append(where)
        entry["unbound_uses"] = by_file
    return entry


def _described(gen: Generation, changes: ChangeSet, walks: list[RootWalk], *, compact: bool) -> dict[str, Any]:
    sides = Counter(d.side for d in changes.decided)
    echo = {**changes.echo, "files": len(changes.decided) + changes.files_left_out}
    if sides["new"]:
        echo["indexed_after"] = sides["new"]  # files whose indexed bytes are the change's new side
    if sides["old"]:
        echo["indexed_before"] = sides["old"]
    if changes.files_left_out:
        echo["files_left_out"] = changes.files_left_out
    out: dict[str, Any] = {"changes": echo, "roots": [_root_entry(gen, w, compact=compact) for w in walks]}
    pending = [
        {
            "at": f"{d.repository}:{d.diff.path}" if d.repository else d.diff.path,
            "lines": compress_lines(d.diff.added or d.diff.removed) or "-",
            "reason": d.reason,
        }
        for d in changes.decided
        if d.side == "pending"
    ]
    if pending:
        out["pending"] = pending
    others = [
        f"{d.repository}:{d.diff.path}" if d.repository else d.diff.path
        for d in changes.decided
        if d.side == "not_indexed"
    ]
    if others:
        out["not_indexed"] = others
    if changes.skipped:
        out["skipped"] = changes.skipped
    return out
