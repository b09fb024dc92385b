"""`[go] allow_network`: the one way out of hermetic mode for Go (surface-reference §2).

A module the module cache lacks is reported, naming the setting, while the network is not allowed; with it,
the module proxy is asked and the module lands in kivgraph's own module cache, never the user's. The proxy
here is a directory in the module proxy protocol's layout (``file://``), so the test needs no network.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from indexer.languages.go.analyzer import NOT_FETCHED, go_executable
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import open_current
from tests.helpers import run_kivgraph, write_repo

pytestmark = pytest.mark.analyzers

DEP = "example.com/dep"
DEP_GO = 'package dep\n\n// Greet greets.\nfunc Greet() string { return "hi" }\n'
APP = {
    "go.mod": f"module example.com/app\n\ngo 1.21\n\nrequire {DEP} v1.0.0\n",
    "main.go": f'package main\n\nimport "{DEP}"\n\nfunc main() {{ println(dep.Greet()) }}\n\nfunc unused() {{}}\n',
}


def _proxy(root: Path) -> Path:
    """A module proxy directory holding example.com/dep v1.0.0 (list, info, mod, zip)."""
    at = root / DEP / "@v"
    at.mkdir(parents=True)
    (at / "list").write_text("v1.0.0\n")
    (at / "v1.0.0.info").write_text(json.dumps({"Version": "v1.0.0", "Time": "2024-01-01T00:00:00Z"}))
    mod = f"module {DEP}\n\ngo 1.21\n"
    (at / "v1.0.0.mod").write_text(mod)
    with zipfile.ZipFile(at / "v1.0.0.zip", "w") as z:
        z.writestr(f"{DEP}@v1.0.0/go.mod", mod)
        z.writestr(f"{DEP}@v1.0.0/dep.go", DEP_GO)
    return root


def _go_sum(repo: Path, proxy: Path, scratch: Path) -> None:
    """The consumer's go.sum, as its author's `go mod tidy` wrote it."""
    env = {
        **os.environ,
        "GOPROXY": proxy.as_uri(),
        "GOSUMDB": "off",
        "GOMODCACHE": str(scratch),
        "GOFLAGS": "-modcacherw",
        "GOTOOLCHAIN": "local",
    }
    done = subprocess.run([str(go_executable()), "mod", "tidy"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _go_analysis(home: Path) -> str:
    with open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)})) as gen:
        (repo,) = gen.repositories()
        (analysis,) = [a for a in repo.analyses if a.language == "go"]
        not_loaded = [u for u in gen.unresolved_in(repo.name) if u.reason == "MODULE_NOT_LOADED"]
        return analysis.mode + "|" + " ".join(u.detail for u in not_loaded)


def test_a_missing_module_names_the_setting_and_with_it_lands_in_kivgraphs_own_module_cache(tmp_path: Path) -> None:
    proxy = _proxy(tmp_path / "proxy")
    repo = write_repo(tmp_path / "app", APP)
    _go_sum(repo, proxy, tmp_path / "author-cache")
    user_cache = tmp_path / "user-modcache"
    user_cache.mkdir()
    user = {"GOMODCACHE": str(user_cache), "GOPROXY": proxy.as_uri()}  # the user's go env
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "go").returncode == 0

    hermetic = run_kivgraph(home, "index", **user)
    assert hermetic.returncode == 0, hermetic.stderr
    mode, detail = _go_analysis(home).split("|")
    assert mode == "exact" and "GOPROXY=off" in detail and NOT_FETCHED in detail

    config = home / "kivgraph.toml"
    config.write_text(config.read_text() + "\n[go]\nallow_network = true\n")
    fetched = run_kivgraph(home, "index", **user)
    assert fetched.returncode == 0, fetched.stderr
    assert "published" in fetched.stderr or "publish" in fetched.stderr  # the setting is an input: a new run
    mode, detail = _go_analysis(home).split("|")
    assert mode == "exact" and detail == ""  # the module loaded: no blind spot left
    own = home / "state" / "go" / "modcache"
    assert (own / "cache" / "download" / DEP / "@v" / "v1.0.0.zip").is_file()
    # the user's cache got no module (the go command leaves an empty lock file there when it looks one up)
    assert not [p for p in user_cache.rglob("*") if p.is_file() and p.suffix != ".lock"]
    assert sorted(p.name for p in repo.iterdir()) == ["go.mod", "go.sum", "main.go"]  # nothing written there
