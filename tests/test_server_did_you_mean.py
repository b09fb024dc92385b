"""Names that miss: the closest declared names within the filters, Rust paths as typed, and honest retry advice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_names import counting_seeks
from server.errors import AMBIGUOUS_SYMBOL, SYMBOL_NOT_FOUND, ToolError
from server.name_forms import rust_plain
from server.queries import close_names as close
from server.queries.close_names import close_names
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.vocab import EdgeKind
from tests.server_fixtures import GraphBuilder

LRU = "github.com/hashicorp/golang-lru/v2"
# repository: [(path, language, package, [(qualified name, kind, line)])]
DECLARATIONS: dict[str, list[tuple[str, str, str, list[tuple[str, str, int]]]]] = {
    "lru": [
        ("lru.go", "go", LRU, [("New", "func", 20), ("Cache", "type", 10), ("Cache.Add", "method", 40)]),
        ("simplelru/lru.go", "go", f"{LRU}/simplelru", [("NewLRU", "func", 28), ("LRU", "type", 12)]),
        ("expirable/expirable_lru.go", "go", f"{LRU}/expirable", [("NewLRU", "func", 33)]),
        ("lru_test.go", "go", LRU, [("NewLRUForTest", "func", 5)]),
    ],
    "cachekit": [("cache.go", "go", "example.com/cachekit", [("NewCache", "func", 3), ("Evict", "func", 9)])],
    "semverish": [
        ("src/lib.rs", "rust", "semverish", [("semverish", "module", 1), ("semverish::parse_req", "function", 30)]),
        (
            "src/version.rs",
            "rust",
            "semverish::version",
            [
                ("semverish::version", "module", 1),
                ("semverish::version::Version", "struct", 4),
                ("semverish::version::Version::parse", "method", 12),
                ("semverish::version::Version::<FromStr>::from_str", "method", 40),
                ("semverish::version::Version::<Display>::fmt", "method", 50),
            ],
        ),
    ],
    "other_crate": [
        (
            "src/lib.rs",
            "rust",
            "other_crate",
            [("other_crate::Version", "struct", 2), ("other_crate::Version::parse", "method", 5)],
        )
    ],
}


def _declare(b: GraphBuilder, repo: str) -> None:
    b.repo(repo, languages=tuple(sorted({language for _p, language, _k, _d in DECLARATIONS[repo]})))
    for path, language, package, declarations in DECLARATIONS[repo]:
        sep = "::" if language == "rust" else "."
        named = [(qn, rust_plain(qn).rsplit(sep, 1)[-1], kind, line) for qn, kind, line in declarations]
        b.add_declared(repo, path, language, package, named, test=path.endswith("_test.go"))


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    tmp: Path = tmp_path_factory.mktemp("did-you-mean")
    b = GraphBuilder(tmp / "src")
    for repo in DECLARATIONS:
        _declare(b, repo)
    # `pub use version::Version;` in the crate root: semverish::Version names semverish::version::Version
    b.edge(b.sym("semverish", "semverish"), EdgeKind.REEXPORTS, b.sym("semverish", "semverish::version::Version"))
    result = b.publish(StateLayout(config_path=tmp / "kivgraph.toml", state_dir=tmp / "state"))
    with Generation(result.path) as generation:
        yield generation


def error(gen: Generation, tool: str = "get_symbol", **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        READ_TOOLS[tool](gen, arguments)
    return caught.value


def subject(gen: Generation, **selector: Any) -> tuple[str, str]:
    answer = READ_TOOLS["get_symbol"](gen, selector)["results"]
    return answer["repository"], answer["qualified_name"]


SIMPLE = f"lru:simplelru/lru.go:28 NewLRU (func, package {LRU}/simplelru)"
EXPIRABLE = f"lru:expirable/expirable_lru.go:33 NewLRU (func, package {LRU}/expirable)"


def test_a_name_that_differs_only_in_case_is_offered_with_its_repository_and_path(gen: Generation) -> None:
    err = error(gen, name="NewLru")
    assert err.code == SYMBOL_NOT_FOUND
    assert err.message.startswith('name "NewLru" is not declared in the published graph; did you mean ')
    assert EXPIRABLE in err.message and SIMPLE in err.message
    assert "retry without" not in err.message


@pytest.mark.parametrize("typed", ["NewLUR", "NewLRUU", "NwLRU", "newlru"])
def test_a_typo_is_answered_with_the_declarations_a_few_edits_away(gen: Generation, typed: str) -> None:
    assert SIMPLE in error(gen, name=typed).message


def test_a_qualified_name_in_the_wrong_package_offers_the_declarations_of_its_last_element(gen: Generation) -> None:
    err = error(gen, qualified_name="lru.NewLRU")  # NewLRU is in simplelru and expirable, not in package lru
    assert err.message.startswith('qualified name "lru.NewLRU" was not found; did you mean ')
    assert EXPIRABLE in err.message and SIMPLE in err.message
    assert "NewLRUForTest" not in err.message  # the very name found: nothing farther is offered


def test_retry_without_repository_and_path_is_advised_only_when_that_finds_something(gen: Generation) -> None:
    found_elsewhere = error(gen, name="NewLRU", repository="cachekit")
    assert found_elsewhere.message.startswith(
        'name "NewLRU" is not declared under cachekit; retry without repository and path, where it names 2 symbols: '
    )
    assert SIMPLE in found_elsewhere.message and "did you mean" not in found_elsewhere.message
    nowhere = error(gen, name="NewCach", repository="lru")  # NewCache is declared, but only in cachekit
    assert "retry without" not in nowhere.message
    assert "NewCache" not in nowhere.message  # suggestions stay within the narrowing
    close_within = error(gen, name="NewCach", repository="cachekit")
    assert close_within.message == (
        'name "NewCach" is not declared under cachekit; did you mean '
        "cachekit:cache.go:3 NewCache (func, package example.com/cachekit)?"
    )
    assert subject(gen, name="NewLRU", repository="lru", path="expirable") == ("lru", "NewLRU")
    by_path = error(gen, name="NewLRU", repository="lru", path="lru.go")
    assert by_path.message.startswith('name "NewLRU" is not declared under lru lru.go; retry without repository')


def test_nothing_close_is_a_plain_not_found(gen: Generation) -> None:
    err = error(gen, name="Zebra")
    assert (err.code, err.message) == (SYMBOL_NOT_FOUND, 'name "Zebra" is not declared in the published graph')


SELECTOR_TOOLS = ["find_references", "get_blast_radius", "trace_dependencies", "find_cross_repo_consumers"]


@pytest.mark.parametrize("tool", SELECTOR_TOOLS)
def test_every_tool_whose_selector_can_miss_says_did_you_mean(gen: Generation, tool: str) -> None:
    by_name = error(gen, tool, name="NewLru")
    by_qn = error(gen, tool, qualified_name="simplelru.NewLru")
    assert SIMPLE in by_name.message and SIMPLE in by_qn.message
    narrowed = error(gen, tool, name="NewLRU", repository="cachekit")
    assert "retry without repository and path" in narrowed.message


def test_get_source_names_the_close_declarations_on_the_refused_line(gen: Generation) -> None:
    text = READ_TOOLS["get_source"](gen, {"symbols": [{"name": "NewLru"}]})
    assert "! symbols[0]" in text and "SYMBOL_NOT_FOUND" in text and SIMPLE in text


def test_an_empty_find_symbol_suggests_within_its_filters(gen: Generation) -> None:
    answer = READ_TOOLS["find_symbol"](gen, {"name": "newLRU"})
    assert answer["total"] == 0
    assert answer["guidance"].startswith("no declaration matches 'newLRU'; did you mean ")
    assert SIMPLE in answer["guidance"] and "NewLRUForTest" not in answer["guidance"]  # a test file: not listed
    with_tests = READ_TOOLS["find_symbol"](gen, {"name": "newLRUForTest", "include_tests": True})
    assert "NewLRUForTest" in with_tests["guidance"]
    typed = READ_TOOLS["find_symbol"](gen, {"name": "LRUs", "symbol_kinds": ["type"]})
    assert typed["guidance"] == (
        f"no declaration matches 'LRUs' within the filters; did you mean lru:simplelru/lru.go:12 LRU (type, package "
        f"{LRU}/simplelru)?"
    )
    assert "guidance" not in READ_TOOLS["find_symbol"](gen, {"name": "NewLUR", "symbol_kinds": ["type"]})
    elsewhere = READ_TOOLS["find_symbol"](gen, {"name": "NewLru", "in_repository": "cachekit"})
    assert "guidance" not in elsewhere  # nothing close within the filter, and nothing outside it is offered
    rust = READ_TOOLS["find_symbol"](gen, {"name": "Versoin", "in_language": "rust"})
    assert "semverish:src/version.rs:4 semverish::version::Version (struct" in rust["guidance"]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("Version::from_str", ("semverish", "semverish::version::Version::<FromStr>::from_str")),  # a trait member
        ("Version.fmt", ("semverish", "semverish::version::Version::<Display>::fmt")),
        ("version::Version::parse", ("semverish", "semverish::version::Version::parse")),
        ("crate::version::Version::parse", ("semverish", "semverish::version::Version::parse")),
        ("semverish::Version::parse", ("semverish", "semverish::version::Version::parse")),  # through pub use
        ("semverish.Version.parse", ("semverish", "semverish::version::Version::parse")),
        ("crate::parse_req", ("semverish", "semverish::parse_req")),
    ],
)
def test_rust_members_are_found_as_a_developer_writes_them(gen: Generation, typed: str, expected: Any) -> None:
    assert subject(gen, qualified_name=typed) == expected
    assert subject(gen, name=typed) == expected


def test_a_rust_path_two_crates_declare_is_listed_never_picked(gen: Generation) -> None:
    err = error(gen, qualified_name="Version::parse")
    assert err.code == AMBIGUOUS_SYMBOL
    assert "semverish::version::Version::parse" in err.message and "other_crate::Version::parse" in err.message
    assert subject(gen, qualified_name="Version.parse", repository="other_crate") == (
        "other_crate",
        "other_crate::Version::parse",
    )
    assert error(gen, qualified_name="crate::Version::parse").code == AMBIGUOUS_SYMBOL  # either crate's root
    missed = error(gen, qualified_name="Version::parze", repository="semverish")
    assert "semverish:src/version.rs:12 semverish::version::Version::parse (method" in missed.message


def test_the_plain_rust_path_drops_trait_impl_segments_only() -> None:
    assert rust_plain("a::Version::<FromStr>::from_str") == "a::Version::from_str"
    assert rust_plain("a::V::<From<Vec<u8>>>::from") == "a::V::from"
    assert rust_plain("a::<impl Display for &T>::fmt") == "a::<impl Display for &T>::fmt"


def test_a_did_you_mean_reads_a_bounded_part_of_a_large_name_index(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("big")
    body = "".join(f"def n{i:05d}x{i % 7}():\n    pass\n" for i in range(6000))
    b.add_file("big", "names.py", body)
    result = b.publish(StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state"))
    with Generation(result.path) as big:
        with counting_seeks() as seeks:
            found = [name for _distance, name in close_names(big, "n01234x5")]  # thousands within two edits
        assert 0 < seeks[0] <= close.SEEK_BUDGET + 64  # the last branch read may pass the budget by its children
        edits = [osa("n01234x5", name) for name in found]
        assert edits[0] == 1 and edits == sorted(edits)  # the nearest first, never a farther one before a nearer
        assert max(edits) <= 2


def osa(a: str, b: str) -> int:
    """The optimal-string-alignment distance, written out plainly (the reference for the trie search)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]
