"""Java: kivgraph's call edges against javac's own attribution, on commons-lang3, commons-text and commons-cli.

The corpora are the ``-sources.jar`` and ``.pom`` of three artifacts from Maven Central at pinned versions
(fetched with Maven itself, ``mvn dependency:copy``), each laid out as a Maven project (``pom.xml`` and
``src/main/java``). commons-text's pom depends on commons-lang3: the cross-repository route. All three
are registered in a temporary KIVGRAPH_HOME and indexed with the real CLI (``kivgraph index --json``),
once with scip-java and once without it (the CANDIDATE fallback alone).

The reference is javac itself, read through the Trees API by ``benchmarks/java_refs/RefFinder.java``: a
separate compilation (parse and analyse, nothing written) with the same sourcepath, printing each call,
object creation and method reference whose target is a method or constructor declared in source, with
the site's line and the line of the target's name. A target declared in an anonymous or local class is
left out (kivgraph declares neither: their code is the enclosing method's).

Compared at (caller, target): kivgraph answers "who calls this" with one row per calling declaration, so
javac's site is taken as the innermost declaration of the graph around it (a use in an anonymous class or a
lambda is its enclosing method's, as in kivgraph); kivgraph's rows are ``find_references`` with
CALLS_DIRECT and PASSES_AS_CALLBACK for every method, constructor and class of the generation (a class is
the target of ``new`` when it declares no constructor), dispatch rows (``via``) left out since javac names
the method the call is written against. javac's tree holds the calls it makes unwritten (a constructor's implicit
``super()``, a default constructor's, an enum constant's): a target in no method or constructor of the graph is
a class's default constructor, compared as the class. Precision and recall overall, per use kind, and for the uses of
commons-lang3 from commons-text; the same for the fallback run; index times with the analyzer's share.

    python -m benchmarks.bench_java_agreement

Writes benchmarks/results/java-agreement.json and java-agreement.md.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from benchmarks.index_runs import index_run

RESULTS = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parents[1]
REF_FINDER = Path(__file__).resolve().parent / "java_refs" / "RefFinder.java"

# repository -> (groupId, artifactId, version)
CORPORA: dict[str, tuple[str, str, str]] = {
    "commons-lang3": ("org.apache.commons", "commons-lang3", "3.13.0"),
    "commons-text": ("org.apache.commons", "commons-text", "1.11.0"),
    "commons-cli": ("commons-cli", "commons-cli", "1.6.0"),
}
# the sourcepath javac and the reference see for each repository: its providers' sources
PROVIDERS = {"commons-text": ["commons-lang3"]}
CALL_KINDS = ("CALLS_DIRECT", "PASSES_AS_CALLBACK")


def _cache() -> Path:
    return Path(os.environ.get("KIVGRAPH_CACHE") or Path.home() / ".cache" / "kivgraph") / "corpora" / "maven"


def fetch(repo: str) -> Path:
    """The sources jar and pom of one artifact from Maven Central, unpacked as a Maven project (cached)."""
    group, artifact, version = CORPORA[repo]
    root = _cache() / f"{artifact}-{version}"
    if (root / "pom.xml").is_file():
        return root
    dl = _cache() / "downloads"
    for coordinates in (f"{group}:{artifact}:{version}:jar:sources", f"{group}:{artifact}:{version}:pom"):
        subprocess.run(
            ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={coordinates}", f"-DoutputDirectory={dl}"],
            check=True,
            cwd=tempfile.gettempdir(),
            timeout=600,
        )
    partial = root.with_name(root.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "src" / "main" / "java").mkdir(parents=True)
    with zipfile.ZipFile(dl / f"{artifact}-{version}-sources.jar") as jar:
        for name in jar.namelist():
            if name.endswith(".java"):
                jar.extract(name, partial / "src" / "main" / "java")
    shutil.copyfile(dl / f"{artifact}-{version}.pom", partial / "pom.xml")
    partial.rename(root)
    return root


def reference(roots: dict[str, Path], out_dir: Path) -> tuple[set[tuple[str, int, str, int, str]], float]:
    """javac's uses: (site file, site line, target file, target name line, kind), and the seconds it took."""
    import time

    uses: set[tuple[str, int, str, int, str]] = set()
    started = time.perf_counter()
    for repo, root in roots.items():
        files = sorted(str(p) for p in (root / "src" / "main" / "java").rglob("*.java") if p.name != "module-info.java")
        sourcepath = os.pathsep.join(str(roots[p] / "src" / "main" / "java") for p in PROVIDERS.get(repo, []))
        out = out_dir / f"{repo}.tsv"
        argfile = out_dir / f"{repo}.args"
        argfile.write_text("\n".join([str(out), "", sourcepath, *files]))
        subprocess.run(
            [
                "java",
                "--add-exports",
                "jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
                str(REF_FINDER),
                str(argfile),
            ],
            check=True,
            capture_output=True,
            timeout=1800,
        )
        for line in out.read_text().splitlines():
            kind, site, site_line, target, target_line = line.split("\t")
            uses.add((str(Path(site).resolve()), int(site_line), str(Path(target).resolve()), int(target_line), kind))
    return uses, time.perf_counter() - started


def kivgraph_rows(home: Path, roots: dict[str, Path]) -> tuple[set[tuple[str, str]], dict[str, Any], Any]:
    """(caller key, target key) of every call row of the generation, and every declaration by key."""
    from server.queries.references import find_references
    from snapshot_format.layout import resolve_layout
    from snapshot_format.reader import open_current
    from snapshot_format.vocab import Confidence, EdgeKind

    kinds = frozenset(int(EdgeKind[k]) for k in CALL_KINDS)
    gen = open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)}))
    rows: set[tuple[str, str]] = set()
    exact: set[tuple[str, str]] = set()
    targets: dict[str, Any] = {}
    for repo in roots:
        for f in gen.files(repo):
            for s in gen.declarations(repo, f.path):
                if s.path != f.path:
                    continue
                targets[s.key] = s
                if s.kind not in ("method", "constructor", "class", "enum"):
                    continue
                for r in find_references(gen, s, kinds=kinds).rows:
                    if r.via:
                        continue
                    site = (r.other.key, s.key)
                    rows.add(site)
                    if Confidence(r.confidence).is_exact:
                        exact.add(site)
    return rows, {"targets": targets, "exact": exact}, gen


def _pr(got: set[Any], truth: set[Any]) -> dict[str, Any]:
    tp = len(got & truth)
    return {
        "kivgraph": len(got),
        "javac": len(truth),
        "agree": tp,
        "precision": round(tp / len(got), 4) if got else 1.0,
        "recall": round(tp / len(truth), 4) if truth else 1.0,
    }


_SOURCES = ("method", "constructor", "class", "interface", "enum", "module")


def _map_truth(
    uses: set[tuple[str, int, str, int, str]], targets: dict[str, Any], roots: dict[str, Path]
) -> tuple[dict[str, set[tuple[str, str]]], int]:
    """javac's uses as (caller key, target key) per use kind: the caller is the innermost declaration of the
    graph around the site, as kivgraph attributes a use; how many named no declaration of the graph."""
    by_file: dict[str, list[Any]] = {}
    for s in targets.values():
        by_file.setdefault(str((roots[s.repository] / s.path).resolve()), []).append(s)
    out: dict[str, set[tuple[str, str]]] = {}
    unmapped = 0
    for site, site_line, target, target_line, kind in uses:
        around = [s for s in by_file.get(site, []) if s.kind in _SOURCES and s.start_line <= site_line <= s.end_line]
        if not around:
            unmapped += 1
            continue
        caller = min(around, key=lambda s: (s.kind == "module", s.end_line - s.start_line, -s.start_line))
        # a call's target in no method or constructor of the graph is a class's implicit constructor (javac's
        # default one, which an implicit super() or an enum constant's body calls): the class, as for ``new``
        spans = [
            s
            for s in by_file.get(target, [])
            if s.start_line <= target_line <= s.end_line and s.kind in ("method", "constructor", "class", "enum")
        ]
        methods = [s for s in spans if s.kind in ("method", "constructor")]
        chosen = methods or spans
        if not chosen:
            unmapped += 1
            continue
        best = min(chosen, key=lambda s: (s.end_line - s.start_line, -s.start_line))
        out.setdefault(kind, set()).add((caller.key, best.key))
    return out, unmapped


def _compare(
    rows: set[Any], exact: set[Any], truth: dict[str, set[Any]], targets: dict[str, Any], roots: dict[str, Path]
):
    everything = set().union(*truth.values()) if truth else set()

    def cross(s: set[Any]) -> set[Any]:
        return {
            r for r in s if targets[r[0]].repository == "commons-text" and targets[r[1]].repository == "commons-lang3"
        }

    def short(r: Any) -> str:
        caller, target = targets[r[0]], targets[r[1]]
        return f"{caller.repository}:{caller.qualified_name} -> {target.repository}:{target.qualified_name}"

    return {
        "all_rows": _pr(rows, everything),
        "exact_rows": _pr(exact, everything),
        "by_kind_recall": {k: _pr(rows & v, v)["recall"] for k, v in sorted(truth.items())},
        "commons_text_to_commons_lang3": _pr(cross(rows), cross(everything)),
        "only_kivgraph_sample": sorted(short(r) for r in rows - everything)[:15],
        "only_javac_sample": sorted(short(r) for r in everything - rows)[:15],
    }


def _setup_home(home: Path, roots: dict[str, Path]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    text = "version = 1\n\n" + "".join(
        f'[[repository]]\nname = "{name}"\npath = "{root}"\nlanguages = ["java"]\n\n' for name, root in roots.items()
    )
    (home / "kivgraph.toml").write_text(text)


def main() -> int:
    roots = {name: fetch(name) for name in CORPORA}
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-java-") as tmp_name:
        tmp = Path(tmp_name)
        env = dict(os.environ)
        runs: dict[str, Any] = {}
        for mode in ("exact", "fallback"):
            home = tmp / mode
            _setup_home(home, roots)
            run_env = dict(env)
            if mode == "fallback":
                run_env["KIVGRAPH_SCIP_JAVA"] = str(tmp / "no-scip-java")
            cold = index_run(home, run_env)
            warm = index_run(home, run_env) if mode == "exact" else None
            rows, extra, gen = kivgraph_rows(home, roots)
            analyses = {
                r.name: [a.reason for a in r.analyses] for r in (gen.repository(n) for n in roots) if r is not None
            }
            gen.close()
            runs[mode] = {"cold": cold, "warm": warm, "rows": rows, "extra": extra, "analyses": analyses}
        (tmp / "ref").mkdir()
        uses, ref_seconds = reference(roots, tmp / "ref")
        targets = runs["exact"]["extra"]["targets"]
        truth, unmapped = _map_truth(uses, targets, roots)
        fallback_targets = runs["fallback"]["extra"]["targets"]
        fallback_truth, _ = _map_truth(uses, fallback_targets, roots)
        result = {
            "benchmark": "java-agreement",
            "corpora": {n: {"maven": ":".join(c), "path": str(roots[n])} for n, c in CORPORA.items()},
            "machine": {
                "python": platform.python_version(),
                "java": subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0],
                "cpus": os.cpu_count(),
            },
            "reference": {
                "uses": len(uses),
                "unmapped_targets": unmapped,
                "seconds": round(ref_seconds, 1),
                "by_kind": {k: len(v) for k, v in sorted(truth.items())},
            },
            "exact": _compare(runs["exact"]["rows"], runs["exact"]["extra"]["exact"], truth, targets, roots),
            "fallback": _compare(
                runs["fallback"]["rows"], runs["fallback"]["extra"]["exact"], fallback_truth, fallback_targets, roots
            ),
            "index": {
                "cold_wall_seconds": runs["exact"]["cold"]["wall_seconds"],
                "cold_analyzer_seconds": runs["exact"]["cold"]["timings"].get("analyzer.java"),
                "warm_wall_seconds": runs["exact"]["warm"]["wall_seconds"],
                "fallback_wall_seconds": runs["fallback"]["cold"]["wall_seconds"],
                "counts": runs["exact"]["cold"]["counts"],
            },
            "analyses": runs["exact"]["analyses"],
            "fallback_analyses": runs["fallback"]["analyses"],
        }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "java-agreement.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "java-agreement.md").write_text(_report(result))
    print(_report(result))
    return 0


def _report(r: dict[str, Any]) -> str:
    e, f, i = r["exact"], r["fallback"], r["index"]
    lines = [
        "# Java agreement: kivgraph's call rows against javac's attribution",
        "",
        "Corpora (Maven Central sources jars): " + ", ".join(c["maven"] for c in r["corpora"].values()),
        f"Reference: javac's Trees API (benchmarks/java_refs/RefFinder.java), {r['reference']['uses']} uses "
        f"({r['reference']['unmapped_targets']} whose target no declaration of the graph spans), "
        f"{r['reference']['seconds']} s",
        "",
        "| run | rows | javac | agree | precision | recall | commons-text -> commons-lang3 (P / R) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in (("scip-java, all rows", e["all_rows"]), ("scip-java, exact rows", e["exact_rows"])):
        x = e["commons_text_to_commons_lang3"]
        lines.append(
            f"| {name} | {c['kivgraph']} | {c['javac']} | {c['agree']} | {c['precision']} | {c['recall']} | "
            f"{x['precision']} / {x['recall']} |"
        )
    c, x = f["all_rows"], f["commons_text_to_commons_lang3"]
    lines.append(
        f"| fallback (tree-sitter only) | {c['kivgraph']} | {c['javac']} | {c['agree']} | {c['precision']} | "
        f"{c['recall']} | {x['precision']} / {x['recall']} |"
    )
    lines += [
        "",
        f"Recall by use kind (scip-java): {e['by_kind_recall']}; fallback: {f['by_kind_recall']}",
        "",
        f"Index: cold {i['cold_wall_seconds']} s (analyzer {i['cold_analyzer_seconds']} s), warm "
        f"{i['warm_wall_seconds']} s, fallback only {i['fallback_wall_seconds']} s; counts {i['counts']}",
        "",
        "Only kivgraph (sample): " + "; ".join(e["only_kivgraph_sample"][:8]),
        "",
        "Only javac (sample): " + "; ".join(e["only_javac_sample"][:8]),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
