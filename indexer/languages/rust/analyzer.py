"""The exact Rust adapter: ``rust-analyzer scip`` once per Cargo workspace, offline, joined with tree-sitter.

Running (``run_workspace``): one ``rust-analyzer scip <workspace>`` per Cargo
workspace of the repository (``workspace.workspaces``), cwd and ``TMPDIR`` in
the run's scratch directory, bounded by the configured timeout, its process
group killed on every way out. cargo is kivgraph's shim (``cargo_shim.py``)
in a cargo home of our own, offline, with the target directory in the state
directory and registered providers patched in; nothing is written into the
repository. Before it runs, the workspace's crate graph is settled
(``dependencies.resolve``: fetched into kivgraph's cargo home when the config
allows the network, a registered provider's patch that cargo would leave
unused fixed by pinning what requires another version, else every use of
that crate a CRATE_PATCH_NOT_USED row). When cargo cannot resolve the
workspace's dependencies offline even so, rust-analyzer loads none of them: the
run still counts for what it resolved, and every reference site it left
unresolved there becomes a DEPENDENCIES_NOT_LOADED row, so that no answer
about a dependency's symbol is called complete. When the standard library's
own crate graph cannot be resolved (its dependencies are not in the cargo
cache: ``make setup`` fetches them, or the index with the network allowed),
the run says SYSROOT_NOT_LOADED.

Joining (``join_repository``, repository-local and cacheable) is the SCIP
route's (``indexer.scip.route``: ``first_definitions`` keeping every
definition of a symbol, ``document_uses``) with Rust's hooks (``RustHooks``),
then the passes over what the index does not record (impl headers, macro
arguments, blind sites):

- a definition occurrence names the tree-sitter declaration whose span holds it
  and whose name it spells (never a declaration found by name alone). Where
  tree-sitter has none, rust-analyzer's stands in (``analyzer_declaration``):
  on a line that did not parse, at a name a macro's arguments give an item
  (``forward_to_deserialize_any! { bool i8 .. }``), or at the invocation of a
  macro that declares items its arguments do not name (serde's
  ``declare_error_trait!``, from the definition range rust-analyzer gives their
  uses). rust-analyzer gives some items one symbol (items nested in functions):
  a use binds to the definition in its own function, else the only one in its
  file, else it is left to the fallback. It also gives one symbol to the
  members of two impls for one type whose traits print alike (``impl
  ser::Error for Error { fn custom }``, ``impl de::Error for Error { fn custom
  }``): a use binds to the impl of the trait it names, else of the only one of
  those traits in scope there, else it is an AMBIGUOUS_MEMBER row
  (``_Duplicates``);
- code rust-analyzer does not analyse as items (behind an inactive ``#[cfg]``:
  it name-resolves paths there, and its own find-references leaves them out)
  is no exact evidence: a use inside a declaration it did not define stays with
  the fallback;
- a use occurrence gets its edge source from the enclosing declaration and its
  class from the tree-sitter node at its position: a call (``f()``, ``x.m()``,
  ``T::f()``), a type use, a field, a ``use`` (a ``pub use`` re-exports), a
  macro invocation, a supertrait, a path passed as an argument, and what
  rust-analyzer resolves inside macro arguments (a call when a ``(`` follows);
  a module that qualifies a path is no use of its own. An identifier in the
  arguments of a macro rust-analyzer expanded that it gave no occurrence is no
  reference: it settles the fallback's MACRO_NOT_EXPANDED row there;
- rust-analyzer records no relationships, so each ``impl Trait for Type`` gives
  IMPLEMENTS (type → trait, member → the trait's item of its name) and every
  impl member METHOD_OF its type, from the impl's header as rust-analyzer
  resolved it: calls through ``dyn Trait`` and generic bounds, which resolve to
  the trait's method, reach the implementations through dispatch. The trait's
  name in the header is a type use of it where the impl is written (the type
  may be declared in another file).

Binding (``bind``, the route's with ``RustHooks``): a symbol of this repository is the declaration its
definition occurrence named; a symbol of another registered repository's
package is looked up in that package's declarations under rust-analyzer's own
naming (``monikers``), which holds what tree-sitter declares there: an item
only rust-analyzer declared in the provider (a macro generated it) is a
CRATE_SYMBOL_NOT_MATCHED row at the consumer's use. The standard library
settles the site with no edge; a package nobody registered is
CRATE_PROVIDER_NOT_FOUND at its imports and silent elsewhere.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import tree_sitter_rust
from tree_sitter import Language, Node

from indexer import children
from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import FileFacts, SymbolFact
from indexer.languages.npm_tool import cause, tail
from indexer.languages.rust import dependencies, monikers, toolchain
from indexer.languages.rust import sites as S
from indexer.languages.rust import workspace as ws
from indexer.languages.rust.extract import same_node
from indexer.languages.rust.modules import LANGUAGE
from indexer.languages.rust.resolve import edge_kind as candidate_edge_kind
from indexer.languages.spec import AnalyzerFailed
from indexer.languages.syntax import node_text, repair
from indexer.scip.decode import Document, Index, Occurrence, decode_index
from indexer.scip.join import MACRO, METHOD, NAMESPACE, TERM, TYPE, CoveredSite, FileDeclarations, line_of
from indexer.scip.route import (
    EXTERNAL,
    Binding,
    BoundTarget,
    Foreign,
    Local,
    ScipAdapter,
    ScipFacts,
    ScipLanguage,
    ScipUse,
    Target,
    UseSite,
    document_uses,
    first_definitions,
    source_reader,
    use_at,
)
from snapshot_format.vocab import EdgeKind, Provenance

ANALYZER = toolchain.ANALYZER
ADAPTER_VERSION = "rust-analyzer-join-9"  # part of the cache key: bump on any change to the joined output
ANALYZER_VERSION = f"{ANALYZER} {toolchain.PINNED_VERSION}"

_TS_LANGUAGE = Language(tree_sitter_rust.language())
# Declarations that can be the source of an edge: everything but a field (a field's type belongs to its type).
SOURCE_KINDS = frozenset(monikers.SUFFIX_OF_KIND) - {"field"}
_LEAVES = frozenset(
    {"identifier", "type_identifier", "field_identifier", "shorthand_field_identifier", "self", "crate", "super"}
)
_PATHS = frozenset({"scoped_identifier", "scoped_type_identifier"})
_GENERIC = frozenset({"generic_type", "generic_type_with_turbofish", "generic_function"})
# Tree-sitter sites that are references a missing dependency may explain (a row each when it is not resolved).
_BLIND_SITE_KINDS = frozenset(
    {S.CALL, S.REF, S.CALLBACK, S.TYPE, S.FIELD, S.MACRO, S.USE, S.IMPL, S.INHERENT, S.SUPERTRAIT}
)
# SCIP SymbolInformation kinds (scip.proto) of the declarations rust-analyzer defines where tree-sitter sees none.
_SCIP_KINDS = {
    3: "associated_type",
    8: "const",
    11: "enum",
    12: "enum_member",
    15: "field",
    17: "function",
    25: "macro",
    26: "method",
    29: "module",
    49: "struct",
    53: "trait",
    55: "type_alias",
    59: "union",
    70: "method",
    80: "method",
    82: "static",
}

DEPENDENCIES_NOT_LOADED = "DEPENDENCIES_NOT_LOADED"
# cargo left a registered provider's [patch] unused: the workspace was analysed against the registry's copy
PATCH_NOT_USED = "CRATE_PATCH_NOT_USED"


# -- running ------------------------------------------------------------------------------------------------


@dataclass
class WorkspaceRun:
    """One rust-analyzer run over a workspace: its index and what cargo could not load."""

    workspace: ws.Workspace
    index: Index | None
    problems: ws.LoadProblems = field(default_factory=ws.LoadProblems)
    failure: str = ""
    seconds: float = 0.0
    # how its crate graph was settled first: fetched, pinned, what could not be resolved, unused patches
    resolved: dependencies.Resolved | None = None


def _real_cargo() -> Path:
    found = toolchain.cargo()
    if found is None:
        raise AnalyzerFailed(
            f"cargo not found (PATH or ${toolchain.CARGO_ENV}): rust-analyzer needs it to load a workspace"
        )
    return found


def run_workspace(
    root: Path,
    workspace: ws.Workspace,
    repository: str,
    providers: ws.Providers,
    *,
    timeout: float,
    exe: Path | None = None,
    allow_network: bool = False,
) -> WorkspaceRun:
    """rust-analyzer over one workspace, offline, writing only under the state and scratch directories.

    Its crate graph is settled first (``dependencies.resolve``: fetched into kivgraph's cargo home when
    ``allow_network``), within the same ``timeout``.
    """
    exe = exe or toolchain.executable()
    toolchain.identity()
    state = ws.state_dir()
    started = time.monotonic()
    manifest = workspace.manifest(root)
    with tempfile.TemporaryDirectory(prefix="kivgraph-ra-") as tmp:
        scratch = Path(tmp)
        out = scratch / "index.scip"
        log = scratch / "cargo.jsonl"
        env, resolved = ws.cargo_environment(
            state,
            repository,
            root,
            workspace,
            providers,
            scratch,
            _real_cargo(),
            log,
            allow_network=allow_network,
            timeout=timeout,
        )
        left = max(timeout - (time.monotonic() - started), 1.0)
        cmd = [str(exe), "scip", str(manifest.parent.resolve()), "--output", str(out)]
        try:
            code, stdout, stderr = children.run(cmd, timeout=left, cwd=scratch, env=env)
        except OSError as exc:
            raise AnalyzerFailed(f"{ANALYZER} could not start: {exc}") from None
        except subprocess.TimeoutExpired:
            return WorkspaceRun(
                workspace,
                None,
                failure=f"{ANALYZER} timed out after {timeout:g}s",
                seconds=time.monotonic() - started,
                resolved=resolved,
            )
        problems = ws.load_problems(ws.read_calls(log), manifest)
        if code != 0 or not out.exists():
            detail = stderr.decode(errors="replace") or stdout.decode(errors="replace")
            return WorkspaceRun(
                workspace,
                None,
                problems,
                f"{ANALYZER} exited {code}: {_failure_line(detail)}",
                time.monotonic() - started,
                resolved,
            )
        try:
            index = decode_index(out.read_bytes())
        except ValueError as exc:
            return WorkspaceRun(
                workspace,
                None,
                problems,
                f"{ANALYZER} wrote an unreadable index: {exc}",
                time.monotonic() - started,
                resolved,
            )
        return WorkspaceRun(workspace, index, problems, seconds=time.monotonic() - started, resolved=resolved)


def _failure_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith(("Error:", "error:")):
            rest = text[text.index(line) :]
            return tail(" ".join(rest.split()[:60]), 400)
    return cause(text)


def probe(timeout: float = 180) -> str:
    """rust-analyzer on a two-module crate: a detail line, or AnalyzerFailed (doctor)."""
    with tempfile.TemporaryDirectory(prefix="kivgraph-raprobe-") as tmp:
        root = Path(tmp) / "probe"
        (root / "src").mkdir(parents=True)
        (root / "Cargo.toml").write_text('[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n')
        (root / "src" / "lib.rs").write_text("pub mod a;\npub mod b;\n")
        (root / "src" / "a.rs").write_text("pub fn target() -> i32 {\n    1\n}\n")
        (root / "src" / "b.rs").write_text("pub fn caller() -> i32 {\n    crate::a::target()\n}\n")
        old = tempfile.tempdir
        tempfile.tempdir = tmp
        try:
            run = run_workspace(root, ws.Workspace("", ()), "probe", ws.Providers(), timeout=timeout)
        finally:
            tempfile.tempdir = old
        if run.index is None:
            raise AnalyzerFailed(run.failure)
        for doc in run.index.documents:
            if doc.relative_path == "src/b.rs":
                for occ in doc.occurrences:
                    if occ.range[:2] == (1, 14) and occ.symbol.endswith(" a/target()."):
                        return f"{ANALYZER_VERSION} resolved a cross-module call"
        raise AnalyzerFailed(f"{ANALYZER} ran but did not resolve the probe's cross-module call")


# -- syntax: what each occurrence is ------------------------------------------------------------------------


def _path_top(node: Node) -> tuple[Node, bool]:
    """The whole path a segment ends (``a::b::c`` for ``c``), and whether the segment only qualifies a path."""
    top = node
    while (
        top.parent is not None and top.parent.type in _PATHS and same_node(top.parent.child_by_field_name("name"), top)
    ):
        top = top.parent
    parent = top.parent
    if (
        parent is not None
        and parent.type in (*_PATHS, "scoped_use_list")
        and same_node(parent.child_by_field_name("path"), top)
    ):
        return top, True
    while (
        top.parent is not None
        and top.parent.type in _GENERIC
        and (
            same_node(top.parent.child_by_field_name("type"), top)
            or same_node(top.parent.child_by_field_name("function"), top)
        )
    ):
        top = top.parent
    return top, False


def _in_token_tree(node: Node) -> str:
    """What an identifier inside a macro's token tree looks like it does: call, macro, qualifier or ref."""
    nxt = node.next_sibling
    if nxt is not None and nxt.type == "token_tree" and (nxt.text or b"")[:1] == b"(":
        return "call"
    if nxt is not None and nxt.type == "!":
        return "macro"
    if nxt is not None and nxt.type == "::":
        return "qualifier"
    return "ref"


def classify(node: Node) -> str:
    """The use an occurrence at ``node`` makes: import, reexport, call, field, type, callback, macro, extends,
    impl_trait (the trait of an impl header), attribute (inside ``#[..]``), qualifier or ref."""
    cur: Node | None = node
    while cur is not None:
        t = cur.type
        if t == "use_declaration":
            if _path_top(node)[1]:
                return "qualifier"
            return (
                "reexport"
                if any(c.type == "visibility_modifier" and (c.text or b"") == b"pub" for c in cur.children)
                else "import"
            )
        if t == "extern_crate_declaration":
            return "import"
        if t == "token_tree":
            return _in_token_tree(node)
        if t in ("attribute_item", "inner_attribute_item"):
            return "attribute"
        if t in ("block", "source_file", "declaration_list", "field_declaration_list"):
            break
        cur = cur.parent
    top, qualifier = _path_top(node)
    if qualifier:
        return "qualifier"
    parent = top.parent
    if parent is None:
        return "ref"
    pt = parent.type
    if pt == "macro_invocation" and same_node(parent.child_by_field_name("macro"), top):
        return "macro"
    if pt == "field_expression" and same_node(parent.child_by_field_name("field"), top):
        up = parent.parent
        return (
            "call"
            if up is not None and up.type == "call_expression" and same_node(up.child_by_field_name("function"), parent)
            else "field"
        )
    if pt == "call_expression" and same_node(parent.child_by_field_name("function"), top):
        return "call"
    if pt == "struct_expression" and same_node(parent.child_by_field_name("name"), top):
        return "type"
    if (
        pt in ("field_initializer", "field_pattern")
        or node.type == "shorthand_field_identifier"
        or (pt == "shorthand_field_initializer")
    ):
        return "field"
    if pt == "arguments":
        return "callback"
    if pt == "impl_item":
        if same_node(parent.child_by_field_name("trait"), top):
            return "impl_trait"
        return "type"
    if pt == "trait_bounds" and parent.parent is not None and parent.parent.type == "trait_item":
        return "extends"
    if node.type == "type_identifier":
        return "type"
    return "ref"


def _nodes(root: Node, node_type: str) -> Iterator[Node]:
    """Every node of one type under ``root``."""
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type == node_type:
            yield node


def _leaves(root: Node) -> dict[tuple[int, int], Node]:
    out: dict[tuple[int, int], Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _LEAVES:
            out.setdefault(node.start_point, node)
        stack.extend(node.children)
    return out


def _decorated(node: Node) -> Node | None:
    """The item an attribute is on (the first sibling after it that is no attribute or comment)."""
    cur: Node | None = node
    while cur is not None and cur.type not in ("attribute_item", "inner_attribute_item"):
        cur = cur.parent
    if cur is None or cur.type == "inner_attribute_item":
        return None
    nxt = cur.next_named_sibling
    while nxt is not None and nxt.type in ("attribute_item", "line_comment", "block_comment"):
        nxt = nxt.next_named_sibling
    return nxt


# -- join: repository-local, cacheable --------------------------------------------------------------------


class RustAmbiguous(msgspec.Struct, array_like=True, frozen=True):
    """A use of a symbol rust-analyzer gave to several definitions, which the use's syntax does not tell apart."""

    path: str
    line: int
    col: int
    name: str
    source_qn: str
    source_kind: str
    reason: str  # AMBIGUOUS_MEMBER: members of impls of traits that print alike
    candidates: tuple[tuple[str, str, int], ...]  # (path, qualified name, line) of each definition


class RustBlind(msgspec.Struct, array_like=True, frozen=True):
    """A reference site rust-analyzer left unresolved in a workspace whose dependencies were not loaded."""

    path: str
    line: int
    col: int
    name: str
    source_qn: str
    source_kind: str
    workspace: str


class RustUnusedPatch(msgspec.Struct, array_like=True, frozen=True):
    """A registered provider's patch cargo did not use in one workspace (``dependencies.UnusedPatch``)."""

    package: str
    workspace: str
    provider: str
    provider_version: str
    used_version: str
    why: str


class RustProblem(msgspec.Struct, array_like=True, frozen=True):
    """Something a workspace run could not do: reason, the workspace directory, cargo's or rust-analyzer's words."""

    reason: str
    workspace: str
    detail: str


class RepositoryRustFacts(ScipFacts[Any], frozen=True):
    """The joined rust-analyzer output of one repository (what the fact cache stores): the route's facts, and what
    the workspaces' runs could not do."""

    problems: tuple[RustProblem, ...] = ()
    blind: tuple[RustBlind, ...] = ()
    workspaces: int = 0
    # What settling the crate graphs took (dependencies fetched, versions pinned), for status.
    notes: tuple[str, ...] = ()
    unused_patches: tuple[RustUnusedPatch, ...] = ()
    ambiguous: tuple[RustAmbiguous, ...] = ()


@dataclass
class _Doc:
    path: str  # repository-relative
    facts: FileFacts
    document: Document
    source: bytes
    workspace: str
    root: Node = field(init=False)
    leaves: dict[tuple[int, int], Node] = field(init=False)
    blanked: frozenset[int] = field(init=False)
    # filled as the route's occurrence loop reads the document (``RustHooks``): non-definition occurrence
    # positions -> symbol (impl headers), the positions rust-analyzer resolved, impls it does not analyse
    at: dict[tuple[int, int], str] = field(default_factory=dict)
    resolved: set[tuple[int, int]] = field(default_factory=set)
    inactive: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        fixed = repair(_TS_LANGUAGE, self.source)  # the parse extraction used: same lines blanked
        self.root, self.leaves, self.blanked = fixed.root, _leaves(fixed.root), frozenset(fixed.blanked)

    @property
    def occurrences(self) -> tuple[Occurrence, ...]:
        return self.document.occurrences


def _spells(source: bytes, occ: Occurrence) -> bool:
    """Whether a single-line occurrence's range spells its symbol's name in the source."""
    sym = monikers.parse(occ.symbol)
    if sym is None or not sym.descriptors or occ.range[0] != occ.range[2]:
        return False
    raw = line_of(source, occ.range[0]).encode("utf-8")
    return raw[occ.range[1] : occ.range[3]].decode("utf-8", "replace") == sym.descriptors[-1].name


def _module_at(ff: FileFacts, line: int, col: int) -> str:
    """The module whose span holds a position (an inline ``mod``, else the file's): its qualified name."""
    best, best_start = ff.package, (0, 0)
    for s in ff.symbols:
        start = (s.start_line, s.start_col)
        if (
            s.kind == "module"
            and s.qualified_name != ff.package
            and start <= (line, col) < (s.end_line, s.end_col)
            and start >= best_start
        ):
            best, best_start = s.qualified_name, start
    return best


def _macro_call(node: Node | None) -> Node | None:
    """The macro invocation whose arguments hold ``node`` (None outside every invocation's token tree)."""
    cur = node
    while cur is not None:
        if cur.type == "token_tree" and cur.parent is not None and cur.parent.type == "macro_invocation":
            return cur.parent
        if cur.type in ("source_file", "function_item", "impl_item"):
            return None
        cur = cur.parent
    return None


def _impl_prefix(node: Node, fd: FileDeclarations) -> tuple[str, str] | None:
    """(member prefix, container) that tree-sitter gave the written members of the impl around ``node``."""
    cur: Node | None = node
    while cur is not None and cur.type != "impl_item":
        cur = cur.parent
    body = cur.child_by_field_name("body") if cur is not None else None
    for member in body.named_children if body is not None else ():
        name = member.child_by_field_name("name")
        if member.type in ("function_item", "const_item", "type_item") and name is not None:
            decl = fd.declared_at(name.start_point[0] + 1, name.start_point[1], node_text(name))
            if decl is not None and "::" in decl.qualified_name:
                return monikers.join_path(monikers.split_path(decl.qualified_name)[:-1]), decl.container
    return None


def analyzer_declaration(
    ff: FileFacts,
    symbol: str,
    span: tuple[int, int, int, int],
    source: bytes,
    *,
    kind_code: int = 0,
    impl: tuple[str, str] | None = None,
    trait_like: bool = False,
    exported: bool | None = None,
) -> SymbolFact | None:
    """A declaration rust-analyzer defines where tree-sitter sees none, named the way extract.py names it.

    ``span`` is 0-based (the definition's name on a line that did not parse, a name token in a macro's
    arguments, or the macro invocation that generates the item); ``impl`` the prefix and container of the
    impl written around it; ``trait_like`` says a type of unknown kind has items of its own (a trait);
    ``exported`` overrides reading ``pub`` on the span's line.
    """
    sym = monikers.parse(symbol)
    key = monikers.key_of_descriptors(sym.descriptors) if sym is not None else None
    if sym is None or key is None or not sym.descriptors:
        return None
    name = sym.descriptors[-1].name
    module = _module_at(ff, span[0] + 1, span[1])
    text = line_of(source, span[0])
    if isinstance(key, monikers.ImplKey):
        if impl is not None:
            prefix, container = impl
        else:
            container = f"{module}::{key.self_type}" if key.self_type != "_" else ""
            prefix = (
                (f"{container}::<{key.trait}>" if key.trait else container)
                if container
                else f"{module}::<impl {key.trait or '?'} for _>"
            )
        kind = {METHOD: "method", TYPE: "associated_type"}.get(key.suffix, "const")
        qn, is_pub = f"{prefix}::{name}", bool(key.trait) or text.lstrip().startswith("pub ")
    elif isinstance(key, monikers.ItemKey) and key.members:
        qn = monikers.join_path([module, *key.members])
        container = monikers.join_path([module, *key.members[:-1]])
        top = len(key.members) == 1
        by_suffix = {
            METHOD: "function" if top else "method",
            MACRO: "macro",
            TYPE: "trait" if trait_like else ("type" if top else "associated_type"),
            TERM: "const" if top else "field",
        }
        kind = _SCIP_KINDS.get(kind_code) or by_suffix.get(key.suffix, "const")
        if kind == "method" and top:
            kind = "function"
        is_pub = text.lstrip().startswith("pub ") or not top
    else:
        return None
    return SymbolFact(
        name=name,
        qualified_name=qn,
        kind=kind,
        start_line=span[0] + 1,
        start_col=span[1],
        end_line=span[2] + 1,
        end_col=span[3],
        signature=" ".join(text.split())[:200],
        exported=is_pub if exported is None else exported,
        container=container,
    )


def _definition(fd: FileDeclarations, ff: FileFacts, occ: Occurrence, doc_lines: int) -> SymbolFact | None:
    """Our declaration a definition occurrence names: position and name must agree, and the kind's suffix."""
    sym = monikers.parse(occ.symbol)
    if sym is None or not sym.descriptors:
        return None
    last = sym.descriptors[-1]
    line, col = occ.range[0] + 1, occ.range[1]
    if last.suffix == NAMESPACE:
        if occ.range[:2] == (0, 0) and occ.range[2] >= doc_lines - 1:
            return fd.module
        return next(
            (
                s
                for s in ff.symbols
                if s.kind == "module"
                and s.name == last.name
                and (s.start_line, s.start_col) <= (line, col) < (s.end_line, s.end_col)
            ),
            None,
        )
    decl = fd.declared_at(line, col, last.name)
    if decl is None or monikers.SUFFIX_OF_KIND.get(decl.kind) != last.suffix:
        return None
    return decl


def _trait_item_symbol(trait_symbol: str, name: str, kind: str) -> str:
    """The symbol of the trait's item an impl member implements: ``…Trait#`` + ``name().``/``NAME.``/``Name#``."""
    return f"{trait_symbol}{name}{ {'method': '().', 'const': TERM}.get(kind, TYPE) }"


def _documents(
    runs: list[WorkspaceRun], files: Mapping[str, FileFacts], source_of: Callable[[str], bytes]
) -> tuple[list[_Doc], dict[str, int]]:
    """Each indexed file of the repository once (the first workspace that checked it), and definition kinds."""
    docs: list[_Doc] = []
    seen: set[str] = set()
    kind_of: dict[str, int] = {}  # SCIP symbol -> SymbolInformation kind
    for run in runs:
        if run.index is None:
            continue
        prefix = run.workspace.directory
        for doc in sorted(run.index.documents, key=lambda d: d.relative_path):
            path = f"{prefix}/{doc.relative_path}" if prefix else doc.relative_path
            if path in files and path not in seen:
                seen.add(path)
                docs.append(_Doc(path, files[path], doc, source_of(path), prefix))
        for doc in run.index.documents:  # kinds of the definitions, for declarations tree-sitter lost
            for info in doc.symbols:
                kind_of.setdefault(info.symbol, info.kind)
    return docs, kind_of


def _problems(runs: list[WorkspaceRun]) -> list[RustProblem]:
    """What kept a workspace, its dependencies, its build scripts or the standard library from loading."""
    problems: list[RustProblem] = []
    for run in runs:
        where = run.workspace.directory or "."
        if run.index is None:
            problems.append(RustProblem("WORKSPACE_NOT_LOADED", where, run.failure))
            continue
        missing = run.resolved.missing if run.resolved is not None else ""
        if run.problems.dependencies:
            problems.append(RustProblem(DEPENDENCIES_NOT_LOADED, where, missing or run.problems.dependencies))
        if run.problems.build_scripts:
            problems.append(RustProblem("BUILD_SCRIPTS_NOT_BUILT", where, run.problems.build_scripts))
        if run.problems.sysroot:
            problems.append(RustProblem("SYSROOT_NOT_LOADED", where, run.problems.sysroot))
        for u in run.resolved.unused if run.resolved is not None else ():
            problems.append(
                RustProblem(
                    PATCH_NOT_USED,
                    where,
                    f"cargo did not use the patch to the registered {u.provider} ({u.package} {u.provider_version}): "
                    f"{u.why}, so the workspace was analysed against the registry's {u.package} {u.used_version}",
                )
            )
    return problems


def _unused_patches(runs: list[WorkspaceRun]) -> list[RustUnusedPatch]:
    return [
        RustUnusedPatch(
            u.package, run.workspace.directory or ".", u.provider, u.provider_version, u.used_version, u.why
        )
        for run in runs
        if run.resolved is not None
        for u in run.resolved.unused
    ]


def _direct_definitions(
    d: _Doc, fd: FileDeclarations, kind_of: Mapping[str, int], owners: set[str]
) -> Iterator[tuple[str, SymbolFact, bool]]:
    """Definition occurrences: our declaration at the position, else rust-analyzer's where we have none."""
    lines = d.source.count(b"\n") + 1
    for occ in d.occurrences:
        if not occ.is_definition or not occ.symbol or occ.symbol.startswith("local "):
            continue
        decl = _definition(fd, d.facts, occ, lines)
        if decl is not None:
            yield occ.symbol, decl, False
            continue
        node = d.leaves.get((occ.range[0], occ.range[1]))
        trait_like, kind = occ.symbol in owners, kind_of.get(occ.symbol, 0)
        if node is None and occ.range[0] + 1 in d.blanked and _spells(d.source, occ):
            span = occ.enclosing_range or occ.range  # a line that did not parse: the analyzer's whole span
            decl = analyzer_declaration(d.facts, occ.symbol, span, d.source, kind_code=kind, trait_like=trait_like)
        elif node is not None and _macro_call(node) is not None:  # a name a macro's arguments give an item
            impl = _impl_prefix(node, fd)
            decl = analyzer_declaration(
                d.facts, occ.symbol, occ.range, d.source, kind_code=kind, impl=impl, trait_like=trait_like
            )
        if decl is not None:
            yield occ.symbol, decl, True


def _macro_generated(
    docs: list[_Doc],
    own: set[tuple[str, str]],
    defined: Mapping[str, tuple[str, SymbolFact]],
    used: set[str],
    owners: set[str],
) -> Iterator[tuple[str, tuple[tuple[str, SymbolFact, bool], ...]]]:
    """Items a macro generates whose names its arguments do not spell (``declare_error_trait!(Error: ..)``):
    rust-analyzer gives their uses in the invoking file the invocation as the definition's range. Read lazily
    by ``first_definitions``: ``defined`` grows as they are yielded."""
    invoked: dict[str, tuple[_Doc, tuple[int, int, int, int]]] = {}  # symbol -> the invocation declaring it
    for d in docs:
        for occ in d.occurrences:
            if occ.is_definition or occ.symbol in defined or occ.enclosing_range is None:
                continue
            if not occ.symbol or occ.symbol.startswith("local "):
                continue
            sym = monikers.parse(occ.symbol)
            if sym is None or (sym.package, sym.version) not in own:
                continue
            span = _invocation_span(d, occ.enclosing_range)
            if span is None:
                continue
            # what the macro's body declares is its own: an invocation is mostly there to declare public items
            decl = analyzer_declaration(
                d.facts, occ.symbol, span, d.source, trait_like=occ.symbol in owners, exported=True
            )
            if decl is not None:
                invoked[occ.symbol] = (d, span)
                yield d.path, ((occ.symbol, decl, True),)
    # the items of such a trait or type that are only used elsewhere: declared by the same invocation
    for symbol in sorted(used - defined.keys()):
        cut = symbol.rfind("#", 0, len(symbol) - 1)
        parent = symbol[: cut + 1] if cut > 0 and "/" not in symbol[cut:] and "#" not in symbol[cut + 1 : -1] else ""
        if parent in invoked:
            d, span = invoked[parent]
            decl = analyzer_declaration(d.facts, symbol, span, d.source, exported=True)
            if decl is not None:
                yield d.path, ((symbol, decl, True),)


def _positions(d: _Doc) -> dict[tuple[int, int], str]:
    """Every use occurrence of a document: 0-based start -> symbol (the first at a position)."""
    out: dict[tuple[int, int], str] = {}
    for occ in d.occurrences:
        if occ.symbol and not occ.is_definition:
            out.setdefault((occ.range[0], occ.range[1]), occ.symbol)
    return out


def _named_trait(node: Node | None, at: Mapping[tuple[int, int], str]) -> str:
    """The trait a path names in front of a member (``de::Error::custom``, ``<T as de::Error>::custom``): the
    symbol rust-analyzer gave that name, or "" (a method call, a type's path, ``Self::custom``)."""
    parent = node.parent if node is not None else None
    if node is None or parent is None or parent.type not in _PATHS:
        return ""
    if not same_node(parent.child_by_field_name("name"), node):
        return ""
    path = parent.child_by_field_name("path")
    if path is not None and path.type == "bracketed_type":
        qualified = next((c for c in path.named_children if c.type == "qualified_type"), None)
        path = qualified.child_by_field_name("alias") if qualified is not None else None
    if path is None:
        return ""
    symbol = at.get(_last(path).start_point, "")
    return symbol if symbol.endswith("#") else ""


def _traits_in_scope(node: Node | None, at: Mapping[tuple[int, int], str]) -> set[str] | None:
    """The symbols every ``use`` in scope at ``node`` imports (its blocks', then its module's) and the traits of
    the impls around it, or None when a glob import (``use a::*``) may bring in more than the file spells."""
    out: set[str] = set()
    cur = node.parent if node is not None else None
    while cur is not None:
        trait_node = cur.child_by_field_name("trait") if cur.type == "impl_item" else None
        if trait_node is not None and _last(trait_node).start_point in at:  # the trait an enclosing impl implements
            out.add(at[_last(trait_node).start_point])
        if cur.type in ("block", "declaration_list", "source_file"):
            for child in cur.named_children:
                if child.type != "use_declaration":
                    continue
                stack = [child]
                while stack:
                    n = stack.pop()
                    if n.type == "use_wildcard":
                        return None
                    if n.type in _LEAVES and n.start_point in at:
                        out.add(at[n.start_point])
                    stack.extend(n.named_children)
            if cur.type == "source_file" or (cur.parent is not None and cur.parent.type == "mod_item"):
                return out
        cur = cur.parent
    return out


class _Duplicates:
    """Symbols rust-analyzer gives to several definitions ("Duplicate symbol"): which one a use means.

    Members of two impls of one type whose traits render alike (``impl ser::Error for Error { fn custom }``
    and ``impl de::Error for Error { fn custom }`` are both ``impl#[Error][Error]custom().``) are told apart
    by the trait rust-analyzer resolved in each impl's header: the one a use names (``de::Error::custom(m)``,
    ``<E as de::Error>::custom(m)``), else the only one of them in scope there (Rust resolves
    ``Error::custom(m)`` and ``e.custom()`` through a trait in scope; a trait brought in by a glob import or
    declared in the same file leaves it undecided); such a use that stays undecided is an AMBIGUOUS_MEMBER
    row, never one of them picked. Items nested in functions are told apart by the function the use is in,
    and definitions in several targets (a library and its examples) by the file; what stays undecided there
    is left to the fallback, as before.
    """

    def __init__(self, docs: list[_Doc], decls: Mapping[str, FileDeclarations], defined: Mapping[str, list]) -> None:
        self._docs = {d.path: d for d in docs}
        self._positions: dict[str, dict[tuple[int, int], str]] = {}
        self.impl_trait: dict[int, str] = {}  # id(impl member) -> the SCIP symbol of its impl's trait
        dup_files = {path for hits in defined.values() if len(hits) > 1 for path, _decl in hits}
        for path in sorted(dup_files & self._docs.keys()):
            d, fd = self._docs[path], decls[path]
            for node in _nodes(d.root, "impl_item"):
                trait_node = node.child_by_field_name("trait")
                symbol = self.positions(d).get(_last(trait_node).start_point, "") if trait_node is not None else ""
                for member in _members(fd, node.child_by_field_name("body")):
                    self.impl_trait[id(member)] = symbol

    def positions(self, d: _Doc) -> dict[tuple[int, int], str]:
        if d.path not in self._positions:
            self._positions[d.path] = _positions(d)
        return self._positions[d.path]

    def pick(
        self, hits: list[tuple[str, SymbolFact]], d: _Doc, node: Node | None, source: SymbolFact
    ) -> tuple[str, SymbolFact] | None:
        nested = _nested(hits, d.path, source)
        if nested is not None:
            return nested
        if not self.members(hits):
            return _pick(hits, d.path, source)
        at = self.positions(d)
        trait = _named_trait(node, at)
        traits = {self.impl_trait[id(decl)] for _path, decl in hits}
        if trait not in traits:  # ``Error::custom``: the path names the type, not a trait
            local = {occ.symbol for occ in d.occurrences if occ.is_definition and occ.symbol in traits}
            prelude = any((sym := monikers.parse(t)) is None or monikers.is_toolchain(sym) for t in traits)
            scope = _traits_in_scope(node, at) if not local and not prelude else None
            visible = traits & scope if scope is not None else set()
            trait = next(iter(visible)) if len(visible) == 1 else ""
        same = [h for h in hits if trait and self.impl_trait[id(h[1])] == trait]
        return _pick(same, d.path, source) if same else None

    def members(self, hits: list[tuple[str, SymbolFact]]) -> bool:
        """Whether the definitions are members of impls of several traits that rust-analyzer names alike."""
        return all(self.impl_trait.get(id(decl)) for _path, decl in hits) and (
            len({self.impl_trait[id(decl)] for _path, decl in hits}) > 1
        )

    def ambiguous(
        self, hits: list[tuple[str, SymbolFact]], path: str, line: int, col: int, source: SymbolFact
    ) -> RustAmbiguous:
        return RustAmbiguous(
            path,
            line,
            col,
            hits[0][1].name,
            source.qualified_name,
            source.kind,
            "AMBIGUOUS_MEMBER",
            tuple((p, decl.qualified_name, decl.start_line) for p, decl in hits),
        )


def _invocation_span(d: _Doc, enclosing: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """The macro invocation whose path starts at ``enclosing``'s start, as a 0-based span, or None."""
    head = d.leaves.get((enclosing[0], enclosing[1]))
    call = head.parent if head is not None else None
    while call is not None and call.type in _PATHS:
        call = call.parent
    if head is None or call is None or call.type != "macro_invocation" or call.start_point != head.start_point:
        return None
    return (call.start_point[0], call.start_point[1], call.end_point[0], call.end_point[1])


def join_repository(runs: list[WorkspaceRun], repo: RepositoryFacts) -> RepositoryRustFacts:
    """Tie every workspace index's occurrences to the repository's declarations and classify each use."""
    files = {ff.path: ff for ff in repo.files if ff.parsed}
    source_of = source_reader(Path(repo.root))
    docs, kind_of = _documents(runs, files, source_of)

    decls = {d.path: FileDeclarations(d.facts.symbols, SOURCE_KINDS) for d in docs}
    # 1. definitions: symbol -> every (path, declaration) it names, in document order. Where tree-sitter has no
    # declaration (a line that did not parse, a macro's arguments), rust-analyzer's stands in.
    used = {occ.symbol for d in docs for occ in d.occurrences if occ.symbol and not occ.symbol.startswith("local ")}
    owners = {  # types with items of their own (``Trait#method().``)
        s.rsplit("#", 1)[0] + "#"
        for s in used
        if s.endswith(").") and "#" in s and "/impl#" not in s and " impl#" not in s
    }
    first: dict[str, tuple[str, SymbolFact]] = {}
    every: dict[str, list[tuple[str, SymbolFact]]] = {}
    synthesized = first_definitions(
        ((d.path, _direct_definitions(d, decls[d.path], kind_of, owners)) for d in docs), first, every
    )
    own = {(p.name, p.version) for run in runs for p in run.workspace.packages}
    for path, extra in first_definitions(_macro_generated(docs, own, first, used, owners), first, every).items():
        synthesized.setdefault(path, []).extend(extra)
    for path, extra in synthesized.items():
        decls[path] = FileDeclarations((*files[path].symbols, *extra), SOURCE_KINDS)

    # 2. uses: the route's occurrence loop with Rust's hooks, then what the index does not record
    hooks = RustHooks({d.path: d for d in docs}, decls, every)
    uses: list[ScipUse] = []
    external: list[CoveredSite] = []
    blind: list[RustBlind] = []
    n_occ = 0
    dependencies_missing = {
        run.workspace.directory for run in runs if run.index is not None and run.problems.dependencies
    }
    for d in docs:
        fd = decls[d.path]
        d.inactive = _inactive_impls(d.root, fd, hooks.live)
        n_occ += document_uses(hooks, d.path, d.document, d.source, fd, first, uses, external)
        uses.extend(_impls(d, d.root, fd, d.at, every, synthesized.get(d.path, []), hooks.live))
        external.extend(_expanded_arguments(d, fd, d.resolved, hooks.live, d.inactive))
        if d.workspace in dependencies_missing:
            blind.extend(_blind_sites(d, d.resolved))
    problems = _problems(runs)
    return RepositoryRustFacts(
        analyzer_version=ANALYZER_VERSION,
        uses=tuple(uses),
        external=tuple(external),
        problems=tuple(problems),
        blind=tuple(blind),
        workspaces=len(runs),
        documents=len(docs),
        occurrences=n_occ,
        declarations=tuple((p, s) for p, ds in synthesized.items() for s in ds),
        notes=tuple(
            f"{run.workspace.directory or '.'}: {note}"
            for run in runs
            if run.resolved is not None
            for note in run.resolved.notes
        ),
        unused_patches=tuple(_unused_patches(runs)),
        ambiguous=tuple(hooks.undecided),
    )


def _source(fd: FileDeclarations, node: Node | None, use: str, line0: int, col: int) -> SymbolFact | None:
    """The edge source of a use: the enclosing declaration (the decorated item for an attribute's)."""
    if node is not None and use == "attribute":
        item = _decorated(node)
        if item is not None:
            name = item.child_by_field_name("name")
            where = name.start_point if name is not None else item.start_point
            return fd.enclosing(where[0] + 1, where[1])
    return fd.enclosing(line0 + 1, col)


def _nested(hits: list[tuple[str, SymbolFact]], path: str, source: SymbolFact) -> tuple[str, SymbolFact] | None:
    """Of several definitions of one symbol in this file, the only one inside what encloses the use (items
    nested in functions: rust-analyzer names them without the function), or None."""
    inner = [
        h
        for h in hits
        if h[0] == path
        and h[1].container
        and (source.qualified_name == h[1].container or source.qualified_name.startswith(h[1].container + "::"))
    ]
    return inner[0] if len(inner) == 1 else None


def _pick(hits: list[tuple[str, SymbolFact]], path: str, source: SymbolFact) -> tuple[str, SymbolFact] | None:
    """Of several definitions of one symbol, the one this use means: in its own function, else its own file."""
    if len(hits) == 1:
        return hits[0]
    nested = _nested(hits, path, source)
    if nested is not None:
        return nested
    here = [h for h in hits if h[0] == path]
    return here[0] if len(here) == 1 else None


def _foreign_target(symbol: str, use: str = "") -> Foreign:
    """A symbol no definition of this repository names, bound by its crate's providers (``RustHooks``)."""
    sym = monikers.parse(symbol)
    if sym is None:
        return Foreign("", symbol=symbol, use=use)
    name = sym.descriptors[-1].name if sym.descriptors else ""
    return Foreign(sym.package, member=name, symbol=symbol, use=use)


def _target(
    symbol: str,
    use: str,
    path: str,
    source: SymbolFact,
    defined: Mapping[str, list[tuple[str, SymbolFact]]],
    chosen: tuple[str, SymbolFact] | None = None,
) -> Target | None:
    """What a symbol used at ``path`` from ``source`` is: one of this repository's definitions (``chosen``, else
    the one ``_pick`` tells), the standard library's (no edge), another crate's; a qualifier is a type use of a
    type and a ref of anything else but a module."""
    hits = defined.get(symbol)
    if hits:
        picked = chosen or _pick(hits, path, source)
        if picked is None:
            return None  # rust-analyzer gave several declarations one name: the fallback answers here
        target_path, target = picked
        if use == "qualifier":
            if target.kind == "module":
                return None
            use = "type" if monikers.SUFFIX_OF_KIND.get(target.kind) == TYPE else "ref"
        return Local(target_path, target.qualified_name, target.kind, use)
    sym = monikers.parse(symbol)
    if sym is None:
        return None
    if monikers.is_toolchain(sym):
        return None if use == "qualifier" else EXTERNAL
    key = monikers.key_of_descriptors(sym.descriptors)
    if key is None:
        return None  # an impl block (``Self``), a type parameter: nothing we declare
    if use == "qualifier":
        if isinstance(key, monikers.ItemKey) and key.suffix == NAMESPACE:
            return None
        use = "type" if key.suffix == TYPE else "ref"
    return _foreign_target(symbol, use)


def _impls(
    d: _Doc,
    root: Node,
    fd: FileDeclarations,
    at: Mapping[tuple[int, int], str],
    defined: Mapping[str, list[tuple[str, SymbolFact]]],
    generated: list[SymbolFact],
    live: set[int],
) -> list[ScipUse]:
    """IMPLEMENTS and METHOD_OF from each impl header of the file, as rust-analyzer resolved its trait and type
    (rust-analyzer records no relationships)."""
    out: list[ScipUse] = []
    for node in _nodes(root, "impl_item"):
        trait_node = node.child_by_field_name("trait")
        type_node = node.child_by_field_name("type")
        base = type_node
        while base is not None and base.type in ("reference_type", "pointer_type"):
            base = base.child_by_field_name("type")
        if base is not None and base.type in _GENERIC:
            base = base.child_by_field_name("type")
        type_symbol = (
            at.get(_last(base).start_point) if base is not None and base.type in ("type_identifier", *_PATHS) else None
        )
        type_target = _local(type_symbol, defined, d.path)
        trait_symbol = at.get(_last(trait_node).start_point) if trait_node is not None else None
        body = node.child_by_field_name("body")
        written = _members(fd, body)
        if written and not any(id(m) in live for m in written):
            continue  # an impl rust-analyzer does not analyse (inactive #[cfg])
        members = [m for m in written if id(m) in live]
        for call in body.named_children if body is not None else ():
            if call.type == "macro_invocation":  # members the invocation generates (rust-analyzer's)
                members += [
                    g
                    for g in generated
                    if call.start_point <= (g.start_line - 1, g.start_col) < call.end_point
                    and g.kind in ("method", "const", "associated_type")
                ]
        if trait_symbol is not None and type_target is not None:
            tpath, tdecl = type_target
            ident = _last(trait_node)
            line, col = (
                (ident.start_point[0] + 1, ident.start_point[1])
                if tpath == d.path
                else (tdecl.start_line, tdecl.start_col)
            )
            out.append(_relation(d.path, line, col, tpath, tdecl, "implements", trait_symbol, defined))
        if trait_symbol is not None:  # the header names the trait: a type use of it in this file too
            ident = _last(trait_node)
            source = fd.enclosing(ident.start_point[0] + 1, ident.start_point[1])
            if source is not None:
                found = _target(trait_symbol, "type", d.path, source, defined)
                if isinstance(found, Local | Foreign):
                    out.append(use_at(d.path, ident.start_point[0] + 1, ident.start_point[1], source, "type", found))
        for decl in members:
            if trait_symbol is not None:
                out.append(
                    _relation(
                        d.path,
                        decl.start_line,
                        decl.start_col,
                        d.path,
                        decl,
                        "implements",
                        _trait_item_symbol(trait_symbol, decl.name, decl.kind),
                        defined,
                    )
                )
            owner: Local | Foreign | None = None
            if type_target is not None:
                owner = Local(type_target[0], type_target[1].qualified_name, type_target[1].kind)
            elif type_symbol is not None and not type_symbol.startswith("local "):
                owner = _foreign_target(type_symbol)
            if owner is not None:
                out.append(use_at(d.path, decl.start_line, decl.start_col, decl, "method_of", owner, final=False))
    return out


def _expanded_arguments(
    d: _Doc,
    fd: FileDeclarations,
    resolved: set[tuple[int, int]],
    live: set[int],
    inactive: list[tuple[tuple[int, int], tuple[int, int]]],
) -> list[CoveredSite]:
    """The identifiers in the arguments of every macro rust-analyzer expanded (it resolved the macro's name)
    that it gave no occurrence: the expansion uses them as no reference (a keyword of the macro, a name it
    discards), so the fallback's "not expanded" is no blind spot there."""
    out: list[CoveredSite] = []
    for node in _nodes(d.root, "macro_invocation"):
        name = node.child_by_field_name("macro")
        if name is None or _last(name).start_point not in resolved:
            continue
        args = [c for c in node.named_children if c.type == "token_tree"]
        while args:
            cur = args.pop()
            if cur.type == "identifier" and cur.start_point not in resolved:
                line0, col = cur.start_point
                source = fd.enclosing(line0 + 1, col)
                if (
                    source is not None
                    and (source.kind == "module" or id(source) in live)
                    and not any(a <= (line0, col) < b for a, b in inactive)
                ):
                    out.append(CoveredSite(d.path, line0 + 1, col, source.qualified_name, source.kind))
                continue
            if cur.type != "macro_invocation":  # a nested invocation is visited on its own
                args.extend(cur.named_children)
    return out


def _members(fd: FileDeclarations, body: Node | None) -> list[SymbolFact]:
    """The declarations tree-sitter found for the functions, consts and types written in an impl's body."""
    out: list[SymbolFact] = []
    for member in body.named_children if body is not None else ():
        name = member.child_by_field_name("name")
        if member.type in ("function_item", "function_signature_item", "const_item", "type_item") and name:
            decl = fd.declared_at(name.start_point[0] + 1, name.start_point[1], node_text(name))
            if decl is not None and decl.kind in ("method", "const", "associated_type"):
                out.append(decl)
    return out


def _inactive_impls(root: Node, fd: FileDeclarations, live: set[int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The headers (0-based start, end) of impls rust-analyzer does not analyse: members, none of them defined."""
    out = []
    for node in _nodes(root, "impl_item"):
        body = node.child_by_field_name("body")
        members = _members(fd, body)
        if members and not any(id(m) in live for m in members):
            out.append((node.start_point, body.start_point if body is not None else node.end_point))
    return out


def _last(node: Node | None) -> Node:
    assert node is not None
    while node.type in (*_PATHS, *_GENERIC):
        inner = node.child_by_field_name("name") or node.child_by_field_name("type")
        if inner is None:
            break
        node = inner
    return node


def _local(
    symbol: str | None, defined: Mapping[str, list[tuple[str, SymbolFact]]], path: str
) -> tuple[str, SymbolFact] | None:
    """The nominal type of this repository an impl is for (by its definition), or None."""
    hits = defined.get(symbol or "")
    if not hits:
        return None
    here = [h for h in hits if h[0] == path]
    picked = hits[0] if len(hits) == 1 else (here[0] if len(here) == 1 else None)
    if picked is None or picked[1].kind not in ("struct", "enum", "union", "type_alias", "trait"):
        return None
    return picked


def _relation(
    path: str,
    line: int,
    col: int,
    source_path: str,
    source: SymbolFact,
    use: str,
    symbol: str,
    defined: Mapping[str, list[tuple[str, SymbolFact]]],
) -> ScipUse:
    """An IMPLEMENTS written at (path, line, col) from ``source`` (declared in ``source_path``): it settles no site."""
    hits = defined.get(symbol)
    target: Local | Foreign
    if hits and len(hits) == 1:
        tpath, decl = hits[0]
        target = Local(tpath, decl.qualified_name, decl.kind)
    else:
        target = _foreign_target(symbol)
    return use_at(
        path, line, col, source, use, target, final=False, source_path=source_path if source_path != path else ""
    )


def _blind_sites(d: _Doc, resolved: set[tuple[int, int]]) -> list[RustBlind]:
    """The file's reference sites rust-analyzer did not resolve (its workspace's dependencies were not loaded)."""
    kinds = {s.qualified_name: s.kind for s in d.facts.symbols if s.kind != "field"}
    out: list[RustBlind] = []
    for site in d.facts.sites:
        if site.kind not in _BLIND_SITE_KINDS or (site.line - 1, site.col) in resolved:
            continue
        qn = site.enclosing or d.facts.package
        out.append(RustBlind(d.path, site.line, site.col, site.name, qn, kinds.get(qn, "module"), d.workspace))
    return out


# -- bind ---------------------------------------------------------------------------------------------------


class ModuleTable:
    """Registered repositories' Cargo packages and, per package, its declarations under rust-analyzer's names.

    A provider's declarations include those only rust-analyzer saw there (``add``: the items a macro declares,
    such as serde's ``ser::Error`` trait from ``declare_error_trait!``), once its own run has been joined: a
    consumer's impl of such a trait then IMPLEMENTS the provider's item, so calls through it reach the impl.
    """

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.providers = ws.Providers.of(corpus)
        self._repos = {r.name: r for r in corpus.repositories}
        self._tables: dict[tuple[str, str], monikers.PackageTable] = {}
        self._kinds: dict[str, dict[str, str]] = {}
        self._extra: dict[str, dict[str, list[SymbolFact]]] = {}
        # per repository: crate -> the registered provider's patch cargo did not use (its bound facts)
        self.unused: dict[str, dict[str, RustUnusedPatch]] = {}

    def provided(self, crate: str, provider: tuple[str, str]) -> ws.Provided:
        """The registered package of ``crate`` that is (repository, package directory)."""
        return next(p for p in self.providers.by_name[crate] if (p.repository, p.package.directory) == provider)

    def add(self, repository: str, declarations: Iterable[tuple[str, SymbolFact]]) -> None:
        """Declarations rust-analyzer defined in ``repository`` where tree-sitter has none (its joined facts)."""
        extra = self._extra.setdefault(repository, {})
        added = False
        for path, decl in declarations:
            if all(d is not decl and d != decl for d in extra.get(path, [])):
                extra.setdefault(path, []).append(decl)
                added = True
        if added:  # tables built before know nothing of them
            self._kinds.pop(repository, None)
            self._tables = {k: v for k, v in self._tables.items() if k[0] != repository}

    def table(self, provided: ws.Provided) -> monikers.PackageTable:
        key = (provided.repository, provided.package.directory)
        if key not in self._tables:
            repo = self._repos[provided.repository]
            extra = self._extra.get(repo.name, {})
            files = [
                msgspec.structs.replace(ff, symbols=(*ff.symbols, *extra[ff.path])) if ff.path in extra else ff
                for ff in repo.files
            ]
            kinds = self._kinds.setdefault(repo.name, monikers.declarations_by_kind(files))
            package = monikers.files_of_package(Path(repo.root), files, provided.package.directory)
            self._tables[key] = monikers.table(
                package, monikers.lib_root(provided.package.directory, provided.package.lib_path), kinds
            )
        return self._tables[key]


_EDGE_OF_USE = {
    "call": S.CALL,
    "ref": S.REF,
    "callback": S.CALLBACK,
    "type": S.TYPE,
    "field": S.FIELD,
    "macro": S.MACRO,
    "extends": S.SUPERTRAIT,
    "attribute": S.REF,
}
_PROVENANCE = {
    "call": Provenance.RUST_SYNTAX_CALL,
    "macro": Provenance.RUST_SYNTAX_CALL,
    "type": Provenance.RUST_SYNTAX_TYPE,
    "extends": Provenance.RUST_SYNTAX_TYPE,
    "callback": Provenance.RUST_SYNTAX_CALLBACK,
    "implements": Provenance.RUST_SYNTAX_IMPL,
    "method_of": Provenance.RUST_SYNTAX_IMPL,
}


def edge_kind(use: str, target_kind: str) -> EdgeKind:
    """The edge a use makes (the candidate resolver's rules, so an exact edge replaces its candidate)."""
    if use == "import":
        return EdgeKind.IMPORTS_SYMBOL
    if use == "reexport":
        return EdgeKind.REEXPORTS
    if use == "implements":
        return EdgeKind.IMPLEMENTS
    if use == "method_of":
        return EdgeKind.METHOD_OF
    return candidate_edge_kind(_EDGE_OF_USE.get(use, S.REF), target_kind)


class RustHooks(ScipLanguage):
    """Rust's hooks into the SCIP route. A join's instance holds the repository's documents and every definition
    of each symbol (rust-analyzer gives one symbol to several: ``_Duplicates`` tells them apart at a use), and
    collects the uses it leaves AMBIGUOUS_MEMBER; binding needs none of it.

    A use of a ``local`` symbol settles its site; a use of the declaration it is in (a recursive call) is no
    edge; an IMPLEMENTS or METHOD_OF from an impl header replaces the candidate edge at its position."""

    language = LANGUAGE
    analyzer = ANALYZER
    default_unit = "utf-8"  # rust-analyzer writes UTF-8 columns (and says so)
    locals = True
    self_edges = False
    relations_cover = True

    def __init__(
        self,
        docs: Mapping[str, _Doc] | None = None,
        decls: Mapping[str, FileDeclarations] | None = None,
        every: Mapping[str, list[tuple[str, SymbolFact]]] | None = None,
    ) -> None:
        self.docs = docs or {}
        self.decls = decls or {}
        self.every = every or {}
        # Declarations rust-analyzer defined: a use inside any other (code behind an inactive #[cfg], which it
        # only name-resolves, and which its own find-references leaves out) is no exact evidence.
        self.live = {id(decl) for hits in self.every.values() for _path, decl in hits}
        self.duplicates = _Duplicates(list(self.docs.values()), self.decls, self.every)
        self.undecided: list[RustAmbiguous] = []  # AMBIGUOUS_MEMBER uses
        self.doc: _Doc | None = None

    # -- join ------------------------------------------------------------------------------------------------

    def sites(self, path: str, source: bytes) -> Callable[[int, int], UseSite | None]:
        d = self.doc = self.docs[path]
        fd = self.decls[path]

        def site_at(line0: int, col: int) -> UseSite | None:
            node = d.leaves.get((line0, col))
            if node is None and line0 + 1 not in d.blanked:
                return None  # an operator, a token of a macro body: no identifier of ours there
            use = classify(node) if node is not None else "ref"
            source = _source(fd, node, use, line0, col)
            if (
                source is None
                or (source.kind != "module" and id(source) not in self.live)
                or any(a <= (line0, col) < b for a, b in d.inactive)
            ):
                return None  # inside an item rust-analyzer does not analyse (an inactive #[cfg]): the fallback's
            return UseSite(use, line0 + 1, col, source=source, syntax=node)

        return site_at

    def occurrence_site(
        self, site_at: Callable[[int, int], UseSite | None], occ: Occurrence, line0: int, col: int
    ) -> UseSite | None:
        """An occurrence spans the identifier at its start (or is on a line that did not parse); its position
        is resolved (``_expanded_arguments``, ``_blind_sites``) and holds its symbol (``_impls``)."""
        assert self.doc is not None
        d = self.doc
        node = d.leaves.get((line0, col))
        if node is None:
            if line0 + 1 not in d.blanked:
                return None
        elif occ.range[0] != occ.range[2] or occ.range[3] - col != node.end_byte - node.start_byte:
            return None
        d.resolved.add((line0, col))
        d.at.setdefault((line0, col), occ.symbol)
        return site_at(line0, col)

    def target(self, symbol: str, site: UseSite, found: tuple[str, SymbolFact] | None) -> Target | None:
        if symbol.startswith("local "):
            return EXTERNAL if site.use != "qualifier" else None
        if site.use == "impl_trait":
            return None  # the impl's IMPLEMENTS edges come from its header
        assert self.doc is not None and site.source is not None
        d, source = self.doc, site.source
        hits = self.every.get(symbol, [])
        chosen = None
        if len(hits) > 1:
            chosen = self.duplicates.pick(hits, d, site.syntax, source)
            if chosen is None:
                if self.duplicates.members(hits):
                    self.undecided.append(self.duplicates.ambiguous(hits, d.path, site.line, site.col, source))
                return None  # other items one symbol names (nested in functions, in other targets): the fallback's
        return _target(symbol, site.use, d.path, source, self.every, chosen)

    # -- bind ------------------------------------------------------------------------------------------------

    def preamble(self, facts: ScipFacts[Any], bound: Binding, modules: Any) -> None:
        """What the workspaces' runs could not do, the sites they left blind and the uses left ambiguous; the
        declarations only rust-analyzer saw join the repository's packages first."""
        assert isinstance(facts, RepositoryRustFacts)
        table: ModuleTable = modules
        repo, out = bound.repo, bound.out
        table.add(repo, facts.declarations)
        table.unused[repo] = {u.package: u for u in facts.unused_patches}
        for p in facts.problems:
            bound.row(name=p.workspace, reason=p.reason, package=p.workspace, detail=_problem_detail(p))
        out.notes.extend(facts.notes)
        missing = [
            p
            for p in facts.problems
            if p.reason in (DEPENDENCIES_NOT_LOADED, "WORKSPACE_NOT_LOADED", "SYSROOT_NOT_LOADED", PATCH_NOT_USED)
        ]
        if missing:
            out.notes.append("; ".join(_note(p) for p in missing))
        for b in facts.blind:
            bound.row(
                name=b.name,
                reason=DEPENDENCIES_NOT_LOADED,
                path=b.path,
                line=b.line,
                col=b.col,
                source=bound.corpus.key_of(repo, b.path, b.source_qn, b.source_kind) or "",
                detail=f"rust-analyzer did not resolve this: cargo could not load the dependencies of workspace "
                f"{b.workspace or '.'} offline, so none of them was analysed",
            )
            out.covered_positions.add((b.path, b.line, b.col))
        for a in facts.ambiguous:
            source = bound.corpus.key_of(repo, a.path, a.source_qn, a.source_kind)
            if source is None:
                continue
            bound.row(
                name=a.name,
                reason=a.reason,
                path=a.path,
                line=a.line,
                col=a.col,
                source=source,
                detail=f"rust-analyzer gives one symbol to {len(a.candidates)} definitions ("
                + ", ".join(f"{qn} at {p}:{line}" for p, qn, line in a.candidates)
                + "), and nothing at this use says which it calls: it may be any of them",
            )
            out.settle(source, a.path, a.line, a.col)

    def providers(self, use: ScipUse, modules: ModuleTable) -> list[tuple[str, str]]:
        """The registered Cargo packages of the symbol's crate (none for a symbol that names nothing we declare)."""
        sym = monikers.parse(use.symbol)
        if sym is None or monikers.key_of_descriptors(sym.descriptors) is None:
            return []
        return [(p.repository, p.package.directory) for p in modules.providers.by_name.get(sym.package, [])]

    def unprovided(self, use: ScipUse, source: str, bound: Binding) -> None:
        """A crate nobody registered: a row at an import, silent elsewhere."""
        sym = monikers.parse(use.symbol)
        named = sym is not None and monikers.key_of_descriptors(sym.descriptors) is not None
        if named and use.use in ("import", "reexport"):
            detail = f"no registered repository provides crate {use.package}"
            self._row(use, source, bound, "CRATE_PROVIDER_NOT_FOUND", detail)
        elif use.final:
            bound.settle(source, use.path, use.line, use.col)

    def ambiguous(self, use: ScipUse, source: str, repositories: list[str], bound: Binding) -> None:
        detail = f"crate {use.package} is provided by " + ", ".join(sorted(set(repositories)))
        self._row(use, source, bound, "AMBIGUOUS_CRATE_PROVIDER", detail)

    def declaration(self, use: ScipUse, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
        """The provider's declaration under rust-analyzer's naming (``monikers``), if the index names its copy."""
        modules: ModuleTable = bound.modules
        sym = monikers.parse(use.symbol)
        key = monikers.key_of_descriptors(sym.descriptors) if sym is not None else None
        assert sym is not None and key is not None  # ``providers`` gave none otherwise
        provided = modules.provided(sym.package, provider)
        repo = bound.repo

        def row(reason: str, detail: str) -> None:
            self._row(use, source, bound, reason, detail)

        if provided.repository != repo and provided.package.version and sym.version != provided.package.version:
            patch = modules.unused.get(repo, {}).get(sym.package)
            if patch is not None and patch.used_version == sym.version:
                row(
                    PATCH_NOT_USED,
                    f"rust-analyzer resolved {sym.package} {sym.version} from the registry: cargo did not use the "
                    f"patch to the registered {provided.repository} ({provided.package.version}) because "
                    f"{patch.why}; this use is not tied to {provided.repository}",
                )
                return None
            row(
                "CRATE_VERSION_MISMATCH",
                f"rust-analyzer resolved {sym.package} {sym.version}, and "
                f"{provided.repository} holds {provided.package.version}: the index names another copy",
            )
            return None
        hits = modules.table(provided).lookup(key)
        if len(hits) == 1:
            path, decl = hits[0]
            target = bound.corpus.key_of(provided.repository, path, decl.qualified_name, decl.kind)
            cross = provided.repository != repo
            return BoundTarget(
                provided.repository, target, decl.kind, provenance=Provenance.RUST_ANALYZER_MONIKER if cross else None
            )
        descriptor = use.symbol.split(" ", 4)[-1]
        if provided.repository == repo:
            row(
                "TARGET_NOT_INDEXED",
                f"rust-analyzer resolved {descriptor}, which kivgraph's syntax does not declare (code a macro "
                "generates?)"
                if not hits
                else f"rust-analyzer names {len(hits)} declarations {descriptor}",
            )
            return None
        row(
            "CRATE_SYMBOL_NOT_MATCHED",
            f"rust-analyzer resolved {sym.package} {descriptor}, which "
            + (
                f"{provided.repository} does not declare where kivgraph reads it"
                if not hits
                else f"names {len(hits)} declarations of {provided.repository}"
            ),
        )
        return None

    def _row(self, use: ScipUse, source: str, bound: Binding, reason: str, detail: str) -> None:
        """A use of another package's symbol that is not bound: a row (an IMPLEMENTS says calls through the trait
        item may run its source; a METHOD_OF none); the site is settled where the use settles one."""
        sym = monikers.parse(use.symbol)
        assert sym is not None
        if use.use == "implements":
            detail = f"{use.source_qn} implements a trait item that is not tied: {detail}"
        if use.use != "method_of":
            name = sym.descriptors[-1].name if sym.descriptors else sym.package
            bound.row(
                name=name,
                reason=reason,
                detail=detail,
                path=use.path,
                line=use.line,
                col=use.col,
                source=source,
                package=sym.package,
            )
        if use.final:
            bound.settle(source, use.path, use.line, use.col)

    def edge_kind(self, use: ScipUse, target_kind: str) -> EdgeKind:
        return edge_kind(use.use, target_kind)

    def provenance(self, use: ScipUse) -> Provenance:
        return _PROVENANCE.get(use.use, Provenance.RUST_ANALYZER_USE)


def _problem_detail(p: RustProblem) -> str:
    if p.reason == DEPENDENCIES_NOT_LOADED:
        return (
            f"cargo could not resolve the dependencies of workspace {p.workspace} offline ({p.detail}); "
            "rust-analyzer analysed it without any of them: their uses are unresolved"
        )
    if p.reason == "SYSROOT_NOT_LOADED":
        return (
            f"cargo could not resolve the standard library's crate graph offline ({p.detail}): rust-analyzer "
            "loaded std, alloc and core unlinked, so methods of their types (Vec, Box, iterators) are not "
            "resolved; `make setup` fetches what it needs (or `allow_network = true` under `[rust]` lets the index "
            "fetch it into kivgraph's own cargo home)"
        )
    if p.reason == PATCH_NOT_USED:
        return p.detail + "; its uses of that crate are not tied to the registered repository"
    if p.reason == "BUILD_SCRIPTS_NOT_BUILT":
        return (
            f"cargo could not build the build scripts and proc macros of workspace {p.workspace} ({p.detail}); "
            "what they generate is not analysed"
        )
    return f"rust-analyzer could not load workspace {p.workspace}: {p.detail}; its files are on the fallback"


def _note(p: RustProblem) -> str:
    if p.reason == DEPENDENCIES_NOT_LOADED:
        return (
            f"dependencies of {p.workspace} not loaded offline ({p.detail}): their uses are "
            f"{DEPENDENCIES_NOT_LOADED} rows"
        )
    if p.reason == "SYSROOT_NOT_LOADED":
        return (
            f"the standard library's dependencies are not in the cargo cache ({p.detail}): run `make setup`, or "
            "set `allow_network = true` under `[rust]` to fetch them into kivgraph's cargo home"
        )
    if p.reason == PATCH_NOT_USED:
        return f"{p.workspace}: {p.detail}; its uses of that crate are {PATCH_NOT_USED} rows"
    return f"workspace {p.workspace} not loaded ({p.detail}): its edges are CANDIDATE"


# -- the pass over a corpus ---------------------------------------------------------------------------------


def _digest(path: Path) -> bytes:
    try:
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return b"-"


def cache_key(
    repo: RepositoryFacts,
    hashes: Mapping[str, Mapping[str, str]],
    analyzer_identity: str,
    corpus_roots: Iterable[tuple[str, str]] = (),
    allow_network: bool = False,
    *,
    registries: bool = True,
) -> bytes:
    """Adapter and analyzer identity + every Rust file of the corpus + the manifests and lockfiles the runs read
    + the state of the local registry caches, the user's and kivgraph's own (a dependency fetched since makes
    the run worth repeating; left out with ``registries=False``: a run's own fetch is no change of the tree)
    + whether the network is allowed (a run that could not fetch may now)."""
    h = hashlib.blake2b(digest_size=20)
    real = toolchain.cargo()
    for part in (
        "rust",
        ADAPTER_VERSION,
        analyzer_identity,
        repo.name,
        repo.root,
        str(real),
        str(real.stat().st_mtime_ns) if real is not None else "-",
        f"network={allow_network}",
    ):
        h.update(part.encode() + b"\0")
    for home in (ws.real_cargo_home(), ws.state_dir() / ws.OWN_CARGO_HOME) if registries else ():
        try:
            for cache in sorted(os.scandir(home / "registry" / "cache"), key=lambda e: e.name):
                h.update(f"registry\0{home}\0{cache.name}\0{cache.stat().st_mtime_ns}\n".encode())
        except OSError:
            h.update(f"no registry in {home}\n".encode())
    for name, root in sorted({(repo.name, repo.root), *corpus_roots}):
        for path in sorted(_manifests(Path(root))):
            h.update(f"{name}\0{path}\0".encode() + _digest(Path(root, path)) + b"\n")
    for name in sorted(hashes):
        for path, digest in sorted(hashes[name].items()):
            h.update(f"{name}\0{path}\0{digest}\n".encode())
    return h.digest()


def _manifests(root: Path) -> list[str]:
    """Repository-relative Cargo.toml and Cargo.lock files (hidden and ``target`` directories left out)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "target"]
        for name in filenames:
            if name in ("Cargo.toml", "Cargo.lock"):
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return out


def analyze_repository(
    repo: RepositoryFacts, corpus: Corpus, *, timeout: float, providers: ws.Providers | None = None
) -> RepositoryRustFacts:
    """rust-analyzer over each Cargo workspace of one repository, then the join."""
    root = Path(repo.root)
    spaces = ws.workspaces(root, [ff.path for ff in repo.files])
    if not spaces:
        raise AnalyzerFailed(
            f"no Cargo.toml with a [package] governs the Rust files of {repo.name}: "
            "rust-analyzer has no workspace to load (WORKSPACE_NOT_LOADED)"
        )
    providers = providers or ws.Providers.of(corpus)
    deadline = time.monotonic() + timeout
    runs = []
    for space in spaces:
        left = deadline - time.monotonic()
        if left <= 0:
            runs.append(WorkspaceRun(space, None, failure=f"{ANALYZER} timed out after {timeout:g}s"))
            continue
        runs.append(run_workspace(root, space, repo.name, providers, timeout=left, allow_network=corpus.allow_network))
    if all(r.index is None for r in runs):
        raise AnalyzerFailed("; ".join(f"{r.workspace.directory or '.'}: {r.failure}" for r in runs))
    return join_repository(runs, repo)


def _roots(corpus: Corpus) -> tuple[tuple[str, str], ...]:
    """The corpus's repositories (their manifests are inputs of every run: providers are patched in)."""
    return tuple((r.name, r.root) for r in corpus.repositories)


class _RustTool:
    """rust-analyzer, built once from the crate registry (``toolchain``)."""

    def install(self) -> str:
        return toolchain.install()

    def executable(self) -> Path:
        return toolchain.executable()

    def run_version(self) -> str:
        return toolchain.run_version()

    def identity(self) -> str:
        return toolchain.identity()


class RustAnalyzerAdapter(ScipAdapter[RepositoryRustFacts]):
    """rust-analyzer behind the language seam, on the SCIP route."""

    analyzer = ANALYZER
    facts_type = RepositoryRustFacts
    hooks = RustHooks()
    tool = _RustTool()

    def probe(self) -> str:
        return probe()

    def modules(self, corpus: Corpus) -> ModuleTable:
        return ModuleTable(corpus)

    def cache_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        return cache_key(repo, hashes, identity, _roots(corpus), corpus.allow_network)

    def tree_key(
        self, repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], identity: str, corpus: Corpus
    ) -> bytes:
        return cache_key(repo, hashes, identity, _roots(corpus), corpus.allow_network, registries=False)

    def analyze(self, repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryRustFacts:
        return analyze_repository(repo, corpus, timeout=timeout)


ADAPTER = RustAnalyzerAdapter()
bind = ADAPTER.bind  # the route's binding with Rust's hooks
