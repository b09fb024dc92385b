"""Where a reference answer is blind: the uses of the subject's name that no analyzer could bind.

A find_references answer lists bound edges; a use the indexer saw but could not bind (an untyped receiver,
a file that does not parse, a failed analyzer run) may be one more caller. Counting them in
``coverage.unresolved_related`` says that the answer is blind but not where, so the answer lists them, grouped
by what was written there (``ctx.invoke``) and why it failed: a small group names each use by the declaration
it is written in (a label in its file group, ready for the next call); a large one says how many uses in how
many files. At most MAX_GROUPS groups are listed, the largest; ``unbound_more`` counts the others. Uses in
test files follow ``include_tests`` as rows do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server import views
from server.testfiles import FileRoles
from snapshot_format.reader import Generation
from snapshot_format.records import Unresolved

LISTED = 5  # a group of at most this many uses names each one; a larger one is counted
MAX_GROUPS = 20  # groups listed (larger first); the rest are counted in ``more``


@dataclass
class Unbound:
    groups: dict[str, dict[str, dict[str, Any]]]  # reason -> what was written -> its uses
    in_tests: int  # uses left out because they are in test files (include_tests=false)
    more: dict[str, int] | None = None  # {groups, uses} past MAX_GROUPS

    def fields(self, *, compact: bool) -> dict[str, Any]:
        """What an answer's results carry: ``unbound`` and ``unbound_more``, each only when there is any.

        In the compact view a listed group is its file groups alone (``{"ctx.invoke": {path: [label, …]}}``;
        the uses are counted in ``coverage.unresolved_related``); a counted one keeps ``{uses, files}``.
        """
        groups: dict[str, Any] = self.groups
        if compact:
            groups = {
                reason: {written: group.get("in", group) for written, group in by_written.items()}
                for reason, by_written in self.groups.items()
            }
        return {**({"unbound": groups} if groups else {}), **({"unbound_more": self.more} if self.more else {})}


def unbound_groups(
    gen: Generation, records: list[Unresolved], *, include_tests: bool, repository: str | None
) -> Unbound:
    """``records`` by reason, then by what was written (larger groups first); ``repository`` is the answer's
    hoisted repository (a file group names its ``repo`` only when it differs)."""
    roles = FileRoles(gen)
    kept: list[Unresolved] = []
    in_tests = 0
    for u in records:
        if not include_tests and u.path and roles.is_test(u.repository, u.path, u.language):
            in_tests += 1
        else:
            kept.append(u)
    buckets: dict[tuple[str, str], list[Unresolved]] = {}
    for u in sorted(kept, key=lambda u: (u.repository, u.path, u.line, u.col)):
        buckets.setdefault((u.reason, u.detail or u.name), []).append(u)
    ordered = sorted(buckets.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    listed, rest = ordered[:MAX_GROUPS], ordered[MAX_GROUPS:]
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for (reason, written), uses in sorted(listed, key=lambda kv: (kv[0][0], -len(kv[1]), kv[0][1])):
        group: dict[str, Any] = {"uses": len(uses)}
        if len(uses) <= LISTED:
            group["in"] = _where(gen, uses, repository)
        else:
            group["files"] = len({(u.repository, u.path) for u in uses})
        groups.setdefault(reason, {})[written] = group
    more = {"groups": len(rest), "uses": sum(len(uses) for _key, uses in rest)} if rest else None
    return Unbound(groups, in_tests, more)


def _where(gen: Generation, uses: list[Unresolved], repository: str | None) -> dict[str, list[Any]]:
    """File groups of the declarations the uses are written in (``@line`` where the indexer kept none)."""
    rows, entries = [], []
    for u in uses:
        holder = gen.symbol(u.source) if u.source else None
        rows.append({"repository": u.repository, "file_path": u.path or "(no file)"})
        entries.append(views.module_label(holder) if holder is not None and holder.path == u.path else f"@{u.line}")
    groups = views.file_groups(rows, entries, repository)
    return {key: list(dict.fromkeys(at)) for key, at in groups.items()}  # two uses in one declaration: once
