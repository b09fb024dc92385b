"""Strict configuration: every bad key or value is an error naming the key and the file."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from indexer.config import (
    SECTIONS,
    Config,
    ConfigError,
    RepositoryConfig,
    load,
    parse,
    section,
    upsert_repositories,
    with_section,
    write,
)


def _cfg(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "kivgraph.toml"
    path.write_text(body)
    return path


def test_a_valid_config_resolves_relative_paths_against_its_directory(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    path = _cfg(tmp_path, 'version = 1\n[[repository]]\nname = "r"\npath = "repo"\nlanguages = ["py", "TS"]\n')
    loaded = load(path)
    (repo,) = loaded.repositories
    assert repo.root == (tmp_path / "repo").resolve()
    assert repo.languages == ("python", "typescript")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("bogus = 1\n", "unknown key 'bogus'"),
        ("[indexing]\nfact_cahce = 'on'\n", "unknown key 'indexing.fact_cahce'"),
        ("[indexing]\nfact_cache = 'sometimes'\n", "key 'indexing.fact_cache'"),
        ("[indexing]\nmax_file_bytes = 0\n", "key 'indexing.max_file_bytes'"),
        ("[indexing]\nmax_file_bytes = 'big'\n", "key 'indexing.max_file_bytes'"),
        ("version = 2\n", "key 'version'"),
        ('[[repository]]\nname = "a/b"\npath = "."\nlanguages = ["python"]\n', "key 'repository[0].name'"),
        ('[[repository]]\nname = "r"\npath = "."\nlanguages = ["cobol"]\n', "unknown language 'cobol'"),
        ('[[repository]]\nname = "r"\npath = "."\nlanguages = []\n', "at least one language"),
        ('[[repository]]\nname = "r"\npath = "."\nlanguages = ["py", "python"]\n', "listed twice"),
        ('[[repository]]\nname = "r"\npath = "."\n', "key 'repository[0]'"),
        (
            '[[repository]]\nname = "r"\npath = "."\nlanguages = ["python"]\ncolour = "red"\n',
            "unknown key 'repository[0].colour'",
        ),
        ("this is = = not toml", "invalid TOML"),
        ("[go]\nallow_network = 'yes'\n", "key 'go.allow_network'"),
        ("[go]\nallow_netwrok = true\n", "unknown key 'go.allow_netwrok'"),
        ("[rust]\nallow_network = 1\n", "key 'rust.allow_network'"),
    ],
)
def test_bad_config_errors_name_the_file_and_the_key(tmp_path: Path, body: str, expected: str) -> None:
    path = _cfg(tmp_path, body)
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_a_repository_that_moved_is_a_problem_of_that_repository_not_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    path = _cfg(
        tmp_path,
        '[[repository]]\nname = "gone"\npath = "/definitely/not/here"\nlanguages = ["python"]\n'
        '[[repository]]\nname = "ok"\npath = "here"\nlanguages = ["python"]\n',
    )
    gone, ok = load(path).repositories
    assert str(path) in gone.problem and "key 'repository[0].path'" in gone.problem
    assert "does not exist" in gone.problem
    assert ok.problem == ""


def test_repositories_may_not_collide_by_name_or_nest(tmp_path: Path) -> None:
    (tmp_path / "a" / "inner").mkdir(parents=True)
    dup = (
        'version = 1\n[[repository]]\nname = "A"\npath = "a"\nlanguages = ["python"]\n'
        '[[repository]]\nname = "a"\npath = "a/inner"\nlanguages = ["python"]\n'
    )
    with pytest.raises(ConfigError, match="collides"):
        parse(dup, tmp_path / "k.toml")
    nested = dup.replace('name = "a"', 'name = "b"')
    with pytest.raises(ConfigError, match="overlap"):
        parse(nested, tmp_path / "k.toml")


def test_a_missing_config_says_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="kivgraph init"):
        load(tmp_path / "none.toml")
    assert load(tmp_path / "none.toml", missing_ok=True).repositories == ()


def test_written_config_reads_back_identically(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    cfg = Config(
        repository=[RepositoryConfig(name="r1", path=str(tmp_path / "r1"), languages=["python"], exclude=["docs"])]
    )
    path = tmp_path / "k.toml"
    write(path, cfg)
    assert load(path).raw == cfg
    networked = with_section(with_section(cfg, "go", allow_network=True), "rust", allow_network=True)
    write(path, networked)
    loaded = load(path)
    assert loaded.raw == networked and loaded.allows_network("go") and loaded.allows_network("rust")
    assert not loaded.allows_network("python")


def test_upsert_replaces_languages_keeps_exclusions_and_refuses_a_moved_name(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "elsewhere").mkdir()
    base = Config(
        repository=[RepositoryConfig(name="r", path=str(tmp_path / "r"), languages=["python"], exclude=["docs"])]
    )
    same = upsert_repositories(base, [RepositoryConfig(name="r", path=str(tmp_path / "r"), languages=["go"])])
    assert same.repository[0].languages == ["go"] and same.repository[0].exclude == ["docs"]
    with pytest.raises(ConfigError, match="already registered"):
        upsert_repositories(base, [RepositoryConfig(name="r", path=str(tmp_path / "elsewhere"), languages=["go"])])


def test_a_language_section_is_the_folder_s_settings_and_bad_keys_are_named(tmp_path: Path) -> None:
    # the sections come from the language folders' language.toml [settings], not from a list in config.py
    assert {"go", "rust", "java"} <= set(SECTIONS) and "python" not in SECTIONS
    (tmp_path / "r").mkdir()
    base = f'version = 1\n[[repository]]\nname = "r"\npath = "{tmp_path / "r"}"\nlanguages = ["java"]\n'
    loaded = load(_cfg(tmp_path, base + "[java]\nallow_network = true\n"))
    assert loaded.allows_network("java") and not loaded.allows_network("go")
    assert msgspec.structs.asdict(section(loaded.raw, "java")) == {"allow_network": True}  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"unknown key 'java.allow_netwrk'"):
        load(_cfg(tmp_path, base + "[java]\nallow_netwrk = true\n"))
    with pytest.raises(ConfigError, match=r"key 'java.allow_network'"):
        load(_cfg(tmp_path, base + '[java]\nallow_network = "yes"\n'))
    with pytest.raises(ConfigError, match=r"unknown key 'python'"):  # a language without settings has no section
        load(_cfg(tmp_path, base + "[python]\nallow_network = true\n"))
    written = tmp_path / "w.toml"
    write(written, with_section(loaded.raw, "java", allow_network=True))
    assert "[java]\nallow_network = true" in written.read_text() and load(written).allows_network("java")
    assert Config() == Config() and section(Config(), "go") is not None
