"""Bundles on a real pair: typer (the consumer) and click (its provider), both through scip-python.

Three routes to the same generation, each in its own KIVGRAPH_HOME:

* ``index``: both registered, ``kivgraph index`` (typer's analyzer sees click's registered source);
* ``bundles``: a job per repository, ``kivgraph index --repository NAME --bundle``, each registering only its
  repository; typer's job has click installed as a wheel in an active virtualenv;
* ``publish``: ``kivgraph publish`` of both bundles, once where both checkouts are registered and once where
  nothing is (linking reads what the bundles carry).

Reported: the wall time of each command, each bundle's size, the generation's counts, the exact edges from
typer into click, and whether the published generations hold the same records as the indexed one (the
repository roots aside where nothing is registered).

    python -m benchmarks.bench_bundles

Writes benchmarks/results/bundles.json and bundles.md.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from benchmarks.corpora import fetch_pypi_sdist
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import Generation, open_current
from snapshot_format.vocab import Confidence

RESULTS = Path(__file__).parent / "results"


def _kivgraph(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", *args],
        env={**os.environ, "KIVGRAPH_HOME": str(home), **(env or {})},
        capture_output=True,
        text=True,
        timeout=3600,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"kivgraph {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, done.stdout


def _checkout(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".kivgraph-complete"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "corpus"]):
        subprocess.run(["git", *cmd], cwd=dest, check=True, capture_output=True, env=env)
    return dest


def _install_wheel(package_dir: Path, name: str, version: str, venv: Path) -> None:
    """What pip does with a pure-Python wheel of ``package_dir``: its files and a dist-info in site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    info = site / f"{name}-{version}.dist-info"
    shutil.copytree(package_dir, site / package_dir.name, ignore=shutil.ignore_patterns("__pycache__"))
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(f"{package_dir.name}\n")
    rows = []
    for f in sorted((site / package_dir.name).rglob("*")):
        if f.is_file():
            digest = base64.urlsafe_b64encode(hashlib.sha256(f.read_bytes()).digest()).rstrip(b"=").decode()
            rows.append(f"{f.relative_to(site).as_posix()},sha256={digest},{f.stat().st_size}")
    (info / "RECORD").write_text("\n".join(rows) + "\n")


def _records(gen: Generation, *, rootless: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"counts": msgspec.to_builtins(gen.counts())}
    for repo in gen.repositories():
        r = msgspec.to_builtins(msgspec.structs.replace(repo, root="" if rootless else repo.root))
        out[repo.name] = [*r[:8], [a[:5] for a in r[8]]] if len(r) > 8 else r  # analyses without their seconds
        for f in gen.files(repo.name):
            out[f"{repo.name}:{f.path}"] = msgspec.to_builtins(f)
            for s in gen.declarations(repo.name, f.path):
                out[s.key] = [msgspec.to_builtins(s), sorted(msgspec.to_builtins(list(gen.edges_out(s.key))))]
        out[f"unresolved {repo.name}"] = msgspec.to_builtins(list(gen.unresolved_in(repo.name)))
    return out


def _crossing(gen: Generation, consumer: str, provider: str) -> int:
    n = 0
    for f in gen.files(consumer):
        for s in gen.declarations(consumer, f.path):
            for e in gen.edges_out(s.key):
                t = gen.symbol(e.target)
                n += int(t is not None and t.repository == provider and Confidence(e.confidence).is_exact)
    return n


def run() -> dict[str, Any]:
    click_src, typer_src = fetch_pypi_sdist("click"), fetch_pypi_sdist("typer")
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-bundles-") as raw:
        tmp = Path(raw)
        click = _checkout(click_src, tmp / "click")
        typer = _checkout(typer_src, tmp / "typer")
        venv = tmp / "venv"
        _install_wheel(click / "src" / "click", "click", "8.1.7", venv)
        active = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
        seconds: dict[str, float] = {}
        for home in ("index", "publisher"):
            for name, root in (("click", click), ("typer", typer)):
                _kivgraph(tmp / home, "init", "--repository", f"{name}={root}", "--languages", "python")
        seconds["index (both registered)"], _ = _kivgraph(tmp / "index", "index")
        sizes: dict[str, int] = {}
        for name, root, env in (("click", click, {}), ("typer", typer, active)):
            home = tmp / f"job-{name}"
            _kivgraph(home, "init", "--repository", f"{name}={root}", "--languages", "python")
            out = tmp / f"{name}.kgbundle"
            seconds[f"bundle {name}"], _ = _kivgraph(home, "index", "--repository", name, "--bundle", str(out), env=env)
            sizes[name] = out.stat().st_size
        bundles = ["--bundle", str(tmp / "click.kgbundle"), "--bundle", str(tmp / "typer.kgbundle")]
        seconds["publish (checkouts registered)"], _ = _kivgraph(tmp / "publisher", "publish", *bundles)
        seconds["publish (no checkout)"], _ = _kivgraph(tmp / "bare", "publish", *bundles)
        layouts = {h: resolve_layout(environ={"KIVGRAPH_HOME": str(tmp / h)}) for h in ("index", "publisher", "bare")}
        with (
            open_current(layouts["index"]) as indexed,
            open_current(layouts["publisher"]) as published,
            open_current(layouts["bare"]) as bare,
        ):
            same = _records(indexed, rootless=False) == _records(published, rootless=False)
            same_bare = _records(indexed, rootless=True) == _records(bare, rootless=True)
            counts = msgspec.structs.asdict(published.counts())
            crossing = {h: _crossing(g, "typer", "click") for h, g in (("index", indexed), ("publisher", published))}
    return {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "bundle_bytes": sizes,
        "counts": counts,
        "typer_to_click_exact_edges": crossing,
        "same_records_as_index": same,
        "same_records_without_checkout": same_bare,
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        "# Bundles: typer + click (scip-python)",
        "",
        "`python -m benchmarks.bench_bundles`: typer's bundle built with click installed as a wheel, not registered.",
        "",
        "| command | seconds |",
        "| --- | ---: |",
        *(f"| {k} | {v} |" for k, v in result["seconds"].items()),
        "",
        f"Bundle sizes: {', '.join(f'{k} {v / 1e6:.1f} MB' for k, v in result['bundle_bytes'].items())}.",
        f"Generation: {result['counts']['symbols']} symbols, {result['counts']['edges']} edges; exact edges typer → "
        f"click: {result['typer_to_click_exact_edges']}.",
        f"Same records as `kivgraph index`: {result['same_records_as_index']}; "
        f"published without any checkout: {result['same_records_without_checkout']} (roots aside).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    result = run()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bundles.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "bundles.md").write_text(report(result))
    print(report(result))


if __name__ == "__main__":
    main()
