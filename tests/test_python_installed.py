"""Where a bundle job's Python dependencies are read from: the virtualenv, else the conda environment, else the
interpreter on PATH (a job that pip-installs into the interpreter its setup step provides)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from indexer.languages.python.installed import installed_packages, site_directories


def _package(site: Path, name: str = "shapes") -> None:
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text("def area():\n    return 1\n")
    info = site / f"{name}-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.3.0\n\n")
    (info / "top_level.txt").write_text(f"{name}\n")


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)


def test_without_an_active_environment_the_interpreter_on_path_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tmp_path / "job-python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    _package(site)
    _clear(monkeypatch)
    monkeypatch.setenv("PATH", str(env / "bin"))
    assert site.resolve() in [p.resolve() for p in site_directories()]
    (found,) = installed_packages({"shapes", "absent_pkg"})
    assert (found.distribution, found.version, found.files) == ("shapes", "0.3.0", ("shapes/__init__.py",))


def test_an_active_conda_environment_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = tmp_path / "conda-env"
    site = prefix / "lib" / "python3.11" / "site-packages"
    _package(site, "drawing")
    _clear(monkeypatch)
    monkeypatch.setenv("CONDA_PREFIX", str(prefix))
    assert site_directories() == [site]
    assert [p.name for p in installed_packages({"drawing"})] == ["drawing"]


def test_no_interpreter_on_path_reads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert site_directories() == [] and installed_packages({"shapes"}) == []
