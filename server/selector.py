"""Naming a symbol: ``stable_key`` xor ``qualified_name`` + ``repository?`` + ``path?`` (docs/surface.md §4).

A ``qualified_name`` is the stored, module-prefixed one (``src.queryClient.QueryClient.getQueryCache``) or,
when none is stored, the form a developer writes without the module (``QueryClient.getQueryCache``).

Every symbol tool also takes an unqualified ``name``, looked up among declaration kinds only (the
reference allows it on find_references alone). Ambiguity is never resolved silently, with one exception that
is no ambiguity: a stub and the implementation it stands for answer as one symbol (docs/surface.md §4.6), so
candidates that are all one such group resolve to the implementation, and a list of candidates names each
group once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from server import name_forms
from server.args import Args
from server.errors import AMBIGUOUS_SYMBOL, REPOSITORY_NOT_FOUND, SYMBOL_NOT_FOUND, ToolError, invalid
from server.queries import counterparts
from server.queries.close_names import close_names
from server.queries.symbols import first_named
from snapshot_format import keys
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import SYMBOL_KINDS

SELECTOR_FIELDS = ("name", "qualified_name", "stable_key", "repository", "path")

BINDING_KINDS = frozenset({"import", "export"})
# The kinds the `name` form looks among: every declaration kind of every language, not bindings or locals.
DECLARATION_KINDS = (
    SYMBOL_KINDS - BINDING_KINDS - {"local_variable", "parameter", "self_parameter", "type_parameter", "prefix"}
)
_MAX_CANDIDATES = 20
_MAX_SUGGESTIONS = 5  # declarations a did-you-mean lists
_MAX_CLOSE_NAMES = 12  # close names whose declarations it looks up


@dataclass(frozen=True)
class Selector:
    """A parsed selector; exactly one of stable_key, qualified_name and name is set."""

    stable_key: str | None = None
    qualified_name: str | None = None
    name: str | None = None
    repository: str | None = None
    path: str | None = None

    def identity(self) -> dict[str, str]:
        """The selector's part of a cursor identity."""
        return {k: v for k, v in vars(self).items() if v is not None}


def parse_selector(args: Args, *, allow_name: bool = True, repo_filter: str | None = None) -> Selector:
    """Read a selector from ``args``, applying the rejection rules in their documented order."""
    stable_key = args.string("stable_key")
    qualified_name = args.string("qualified_name")
    name = args.string("name") if allow_name else None
    repository = args.string("repository")
    path = args.path("path")
    given = [f for f, v in (("stable_key", stable_key), ("qualified_name", qualified_name), ("name", name)) if v]
    where = f"{args.where}: " if args.where else ""
    if not given:
        if allow_name:
            raise invalid(f"{where}one of stable_key, qualified_name or name is required")
        raise invalid(f"{where}one of stable_key or qualified_name is required")
    if len(given) > 1:
        if allow_name:
            raise invalid(f"{where}pass only one of stable_key, qualified_name or name, not {' and '.join(given)}")
        raise invalid(f"{where}pass either stable_key or qualified_name, not both")
    if stable_key is not None and (repository is not None or path is not None):
        raise invalid(f"{where}repository and path narrow a qualified_name; a stable_key already names one symbol")
    if path is not None and repository is None:
        message = f"{where}path is repository-relative, so it requires repository"
        if repo_filter is not None:
            message += "; in_repository only filters the answer, it does not pin the symbol: pass repository"
        raise invalid(message)
    if stable_key is not None:
        try:
            keys.key_to_bytes(stable_key)
        except ValueError:
            raise invalid(f"{where}stable_key {stable_key!r} is not a stable key (26 characters of base32)") from None
    return Selector(stable_key=stable_key, qualified_name=qualified_name, name=name, repository=repository, path=path)


def under_path(symbol_path: str, path: str | None) -> bool:
    """Whether a file path is the path itself or lies under it as a directory."""
    if not path:
        return True
    return symbol_path == path or symbol_path.startswith(path + "/")


def _where(selector: Selector) -> str:
    return f"{selector.repository}" + (f" {selector.path}" if selector.path else "")


def check_repository(gen: Generation, repository: str | None) -> None:
    """REPOSITORY_NOT_FOUND unless the repository is in the generation."""
    if repository is not None and gen.repository(repository) is None:
        raise ToolError(REPOSITORY_NOT_FOUND, f'repository "{repository}" is not in the published graph')


def _span(sym: Symbol) -> str:
    return f"{sym.start_line}-{sym.end_line}" if sym.end_line > sym.start_line else f"{sym.start_line}"


def _candidate_list(items: list[str]) -> str:
    shown = items[:_MAX_CANDIDATES]
    more = len(items) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more else "")


def resolve(gen: Generation, selector: Selector) -> Symbol:
    """The one symbol the selector names, or the documented error."""
    if selector.stable_key is not None:
        found = gen.symbol(selector.stable_key)
        if found is None:
            raise ToolError(
                SYMBOL_NOT_FOUND, f'stable key "{selector.stable_key}" was not found in the published graph'
            )
        return found
    check_repository(gen, selector.repository)
    if selector.name is not None:
        return _resolve_name(gen, selector)
    qn = selector.qualified_name or ""
    matches = _qualified_matches(gen, qn, selector)
    if not matches:
        raise _not_found(gen, selector, f'qualified name "{qn}" was not found', qn)
    if len(matches) == 1:
        return matches[0]
    matches.sort(key=lambda s: (s.repository, s.path, s.start_line, s.key))
    groups = stub_groups(gen, matches)
    if len(groups) == 1:
        return counterparts.implementation_of(gen, groups[0])
    if selector.repository is not None and selector.path is not None:
        listed = _candidate_list([s.key for s in matches])
        raise ToolError(
            AMBIGUOUS_SYMBOL,
            f'qualified name "{qn}" names {len(matches)} symbols under {_where(selector)}; '
            f"pass one of these stable_key values: {listed}",
        )
    listed = _candidate_list(
        [
            _grouped(gen, group, lambda s: f"{s.repository} {s.path}:{_span(s)} {s.qualified_name}" + _package_note(s))
            for group in groups
        ]
    )
    raise ToolError(
        AMBIGUOUS_SYMBOL,
        f'qualified name "{qn}" names {len(matches)} symbols: {listed}; narrow with repository and path',
    )


def stub_groups(gen: Generation, found: list[Symbol]) -> list[list[Symbol]]:
    """``found`` split into the groups that answer as one symbol (a stub and its implementation), each group in
    ``found``'s order, the groups in the order of their first member."""
    group_of: dict[str, int] = {}
    groups: list[list[Symbol]] = []
    for sym in found:
        index = group_of.get(sym.key)
        if index is None:
            index = len(groups)
            groups.append([])
            for other in counterparts.counterparts(gen, sym):
                group_of.setdefault(other.key, index)
        groups[index].append(sym)
    return groups


def _grouped(gen: Generation, group: list[Symbol], describe: Callable[[Symbol], str]) -> str:
    """One candidate of an ambiguity: a declaration, or a group named by its implementation with the others and
    how many uses are bound to each (the checker binds them to a stub; either answers for all)."""
    if len(group) == 1:
        return describe(group[0])
    main = counterparts.implementation_of(gen, group)
    others = [s for s in group if s is not main]
    rest = ", ".join(
        f"its {counterparts.role(gen, s)} {s.repository}:{s.path}:{s.start_line} {s.qualified_name}" for s in others
    )
    bound = ", ".join(
        f"{n} to {counterparts.label(s, main) if s is not main else 'it'}"
        for s in (main, *others)
        for n in (counterparts.uses(gen, s),)
    )
    return f"{describe(main)} answering as one symbol with {rest} (uses bound {bound})"


def _qualified_matches(gen: Generation, qn: str, selector: Selector) -> list[Symbol]:
    """What a qualified name names within the selector's repository and path: exactly, else a typed form."""
    matches = [
        s
        for s in gen.symbols_by_qualified_name(qn, selector.repository, selector.path)
        if under_path(s.path, selector.path)
    ]
    return matches or _typed(gen, qn, selector)  # the names a developer types (server/name_forms.py)


def _not_found(gen: Generation, selector: Selector, missed: str, text: str, anywhere: str = "") -> ToolError:
    """SYMBOL_NOT_FOUND for a qualified name or name that matched nothing (docs/surface.md §4.2, §4.7).

    Narrowed by repository or path, the message says to retry without them only when that finds something,
    and lists what it finds; otherwise it names the closest declarations within the narrowing, if any.
    """
    narrowed = selector.repository is not None
    where = f" under {_where(selector)}" if narrowed else anywhere
    if narrowed:
        wide = Selector(qualified_name=selector.qualified_name, name=selector.name)
        elsewhere = _qualified_matches(gen, text, wide) if selector.name is None else _name_declarations(gen, wide)
        if elsewhere:
            elsewhere.sort(key=lambda s: (s.repository, s.path, s.start_line, s.key))
            listed = _candidate_list([name_forms.candidate_label(s) for s in elsewhere])
            return ToolError(
                SYMBOL_NOT_FOUND,
                f"{missed}{where}; retry without repository and path, where it names "
                f"{len(elsewhere)} symbol{'s' if len(elsewhere) > 1 else ''}: {listed}",
            )
    close = did_you_mean(gen, text, lambda name, limit: _declared_within(gen, name, selector, limit))
    return ToolError(SYMBOL_NOT_FOUND, f"{missed}{where}" + (f"; did you mean {close}?" if close else ""))


def did_you_mean(gen: Generation, text: str, declared: Callable[[str, int], list[Symbol]]) -> str:
    """The closest declarations to a name or qualified name that matched nothing, as candidate labels, or "".

    First the declarations of the qualified name's last element itself (``lru.NewLRU`` when ``NewLRU`` is in
    another package), else those of the nearest names (server/queries/close_names.py): only the nearest
    names that have a declaration within the caller's filters, all at one distance, at most
    ``_MAX_SUGGESTIONS`` declarations. ``declared`` gives a name's first declarations within those filters.
    """
    last = name_forms.last_element(text)
    candidates: Iterator[tuple[int, str]] = close_names(gen, last)
    if last != text:
        candidates = itertools.chain([(-1, last)], candidates)
    shown: list[Symbol] = []
    nearest: int | None = None
    for checked, (distance, name) in enumerate(candidates):
        if checked >= _MAX_CLOSE_NAMES or (nearest is not None and distance > nearest):
            break
        found = declared(name, _MAX_SUGGESTIONS - len(shown))
        if found and nearest is None:
            nearest = distance
        shown.extend(found)
        if len(shown) >= _MAX_SUGGESTIONS:
            break
    return "; ".join(name_forms.candidate_label(s) for s in shown)


def _declared_within(gen: Generation, name: str, selector: Selector, limit: int) -> list[Symbol]:
    """The first declarations named ``name`` within the selector's repository and path."""
    return first_named(
        gen,
        name,
        limit,
        kinds=DECLARATION_KINDS,
        repo=selector.repository,
        path_prefix=selector.path,
        include_derived=True,
        keep_file=(lambda _repository, path: under_path(path, selector.path)) if selector.path else None,
    )


def _typed(gen: Generation, text: str, selector: Selector) -> list[Symbol]:
    """The symbols ``text`` names in a typed form, narrowed by the selector's repository and path."""
    out = []
    for sym, pinned in name_forms.typed_forms(gen, text, selector.repository):
        if under_path(sym.path, selector.path) and (pinned is None or sym.path == pinned):
            out.append(sym)
    return out


def _package_note(sym: Symbol) -> str:
    return "" if name_forms.spells_package(sym) else f" (package {sym.package})"


def _name_found(gen: Generation, selector: Selector) -> list[Symbol]:
    """Every symbol (bindings included) a ``name`` names within the selector's repository and path."""
    name = selector.name or ""
    found = [
        s for s in gen.symbols_by_name(name, selector.repository, selector.path) if under_path(s.path, selector.path)
    ]
    if not found and name_forms.is_qualified(name):  # a qualified name is typed (pflag.NewFlagSet, Type::method)
        found = _typed(gen, name, selector)
    return found


def _name_declarations(gen: Generation, selector: Selector, found: list[Symbol] | None = None) -> list[Symbol]:
    """The declarations a ``name`` names (a module named after the declaration it holds left out)."""
    declarations = [s for s in (_name_found(gen, selector) if found is None else found) if s.kind in DECLARATION_KINDS]
    # A module named after the declaration it holds (finalize.ts exporting finalize) is not what a bare name
    # means: the declaration is; the module is one qualified_name away, and the answer's qn says which it is.
    files = {(s.repository, s.path) for s in declarations if s.kind != "module"}
    return [s for s in declarations if s.kind != "module" or (s.repository, s.path) not in files]


def _resolve_name(gen: Generation, selector: Selector) -> Symbol:
    name = selector.name or ""
    found = _name_found(gen, selector)
    declarations = _name_declarations(gen, selector, found)
    if len(declarations) == 1:
        return declarations[0]
    if len(declarations) > 1:
        declarations.sort(key=lambda s: (s.repository, s.path, s.start_line, s.key))
        groups = stub_groups(gen, declarations)
        if len(groups) == 1:  # a stub and its implementation are one symbol: the implementation answers
            return counterparts.implementation_of(gen, groups[0])
        # The qualified name and kind ride along: two candidates can share a file (two classes' methods of
        # one name), and then only the qualified name separates them.
        listed = _candidate_list([_grouped(gen, group, name_forms.candidate_label) for group in groups])
        raise ToolError(
            AMBIGUOUS_SYMBOL,
            f'name "{name}" is declared {len(declarations)} times: {listed}; '
            "repeat with the repository and path of the one you mean, or pass its qualified_name",
        )
    if any(s.kind in BINDING_KINDS for s in found):
        if selector.repository is not None:
            raise _not_found(gen, selector, f'name "{name}" is only imported or re-exported, never declared', name)
        raise ToolError(
            SYMBOL_NOT_FOUND,
            f'name "{name}" is only imported or re-exported, never declared in the published graph; '
            "pass the repository and path of the declaring file",
        )
    raise _not_found(gen, selector, f'name "{name}" is not declared', name, " in the published graph")
