"""Build every zoo distribution into one wheelhouse with a PEP 503 simple index and a manifest.

    python scripts/release.py                     # all distributions -> dist/wheelhouse/
    python scripts/release.py --only zoo-mrl      # zoo-mrl and the zoo-* distributions it requires
    ./dev release [ARGS]                          # the same, in .venv

Each distribution (the core at the repository root, ``nn/``, ``tasks/*/``, ``plugins/*/``) is built with
the standard front-end (``python -m build``: an sdist, then a wheel from that sdist). Then, failing
loudly on the first problem: every wheel is listed and must hold nothing but its package and its
dist-info (no tests, caches or build leftovers), ``twine check --strict`` must pass on every artifact,
and each zoo-* requirement of a distribution must be satisfiable by the versions being released.

The result, in ``--out`` (default ``dist/wheelhouse``)::

    <artifacts>                               sdists and wheels, flat
    simple/index.html                         PEP 503 project list
    simple/<normalized-name>/index.html       links to the files with #sha256= fragments
    manifest.json                             name, version, filename, kind, sha256, size per file

Install from it with ``pip install --index-url file://$PWD/dist/wheelhouse/simple zoo-mrl`` (third-party
dependencies from another index with ``--extra-index-url``), or serve it over HTTP.
"""
from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "dist" / "wheelhouse"
# Caches and build leftovers never ship; tests ship in sdists (for packagers), never in wheels
_CACHES = (r"(^|/)(__pycache__|\.pytest_cache|\.ruff_cache|\.mypy_cache|\.ipynb_checkpoints|[^/]*\.egg-info)(/|$)"
           r"|\.py[co]$|(^|/)\.DS_Store$")
_FORBIDDEN_IN_WHEEL = re.compile(_CACHES + r"|(^|/)(tests?|build|dist|\.git)(/|$)")
_FORBIDDEN_IN_SDIST = re.compile(_CACHES + r"|(^|/)(build|dist|\.git|\.venv)(/|$)")


@dataclass(frozen=True)
class Project:
    """One distribution in this repository: its folder, name, import packages and requirements."""

    path: Path
    name: str  # normalized
    packages: tuple[str, ...]
    requires: tuple[Requirement, ...]

    @property
    def zoo_requires(self) -> tuple[Requirement, ...]:
        return tuple(r for r in self.requires if canonicalize_name(r.name).startswith("zoo-"))


def find_projects(root: Path = ROOT) -> dict[str, Project]:
    """Every distribution under ``root``, by normalized name (core first, then nn, tasks, plugins)."""
    folders = [root, root / "nn", *sorted((root / "tasks").glob("*")), *sorted((root / "plugins").glob("*"))]
    projects: dict[str, Project] = {}
    for folder in folders:
        pyproject = folder / "pyproject.toml"
        if not pyproject.is_file():
            continue
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        project = data["project"]
        wheel = data.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
        name = canonicalize_name(project["name"])
        if name in projects:
            raise SystemExit(f"release: {name} is declared by both {projects[name].path} and {folder}")
        projects[name] = Project(folder, name, tuple(wheel.get("packages", ())),
                                 tuple(Requirement(r) for r in project.get("dependencies", ())))
    return projects


def closure(projects: dict[str, Project], names: list[str]) -> list[str]:
    """``names`` and every zoo-* distribution they require, transitively, in ``projects`` order."""
    wanted: set[str] = set()
    todo = [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        if name not in projects:
            raise SystemExit(f"release: no distribution named {name!r} in this repository "
                             f"(known: {', '.join(sorted(projects))})")
        wanted.add(name)
        todo += [canonicalize_name(r.name) for r in projects[name].zoo_requires]
    return [n for n in projects if n in wanted]


def _run(cmd: list[str], what: str) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"release: {what} failed (exit {proc.returncode}): {' '.join(cmd)}")
    return proc.stdout


def build(project: Project, outdir: Path, python: str, isolation: bool) -> list[Path]:
    """sdist, then a wheel from it, into a folder of its own; returns the two artifacts."""
    target = outdir / project.name
    # no --sdist/--wheel: the front-end then builds the wheel from the sdist, which proves the sdist complete
    cmd = [python, "-m", "build", "--outdir", str(target), str(project.path)]
    if not isolation:
        cmd.insert(3, "--no-isolation")
    _run(cmd, f"building {project.name}")
    artifacts = sorted(target.iterdir())
    kinds = sorted(p.suffix for p in artifacts)
    if kinds != [".gz", ".whl"]:
        raise SystemExit(f"release: {project.name} built {[p.name for p in artifacts]}, expected one sdist and one wheel")
    return artifacts


def check_wheel(wheel: Path, project: Project) -> list[str]:
    """The wheel's members; raises when one is a test, a cache or a build leftover, or outside the package."""
    with zipfile.ZipFile(wheel) as zf:
        members = zf.namelist()
    allowed_roots = {p.split("/")[0] for p in project.packages}
    bad = []
    for member in members:
        top = member.split("/", 1)[0]
        if top.endswith(".dist-info"):
            continue
        if top not in allowed_roots or _FORBIDDEN_IN_WHEEL.search(member):
            bad.append(member)
    if bad:
        raise SystemExit(f"release: {wheel.name} holds files that must not ship: {', '.join(bad[:20])}")
    return members


def check_sdist(sdist: Path) -> list[str]:
    """The sdist's members; raises when one is a cache or a build leftover (tests may ship in an sdist)."""
    with tarfile.open(sdist) as tf:
        members = [m.split("/", 1)[1] for m in tf.getnames() if "/" in m]
    bad = [m for m in members if _FORBIDDEN_IN_SDIST.search(m)]
    if bad:
        raise SystemExit(f"release: {sdist.name} holds files that must not ship: {', '.join(bad[:20])}")
    return members


def check_requirements(projects: dict[str, Project], versions: dict[str, str], names: list[str]) -> None:
    """Each zoo-* requirement of a released distribution must accept the version released with it."""
    problems = []
    for name in names:
        for req in projects[name].zoo_requires:
            dep = canonicalize_name(req.name)
            if dep in versions and not req.specifier.contains(versions[dep], prereleases=True):
                problems.append(f"{name} requires {req}, but this release builds {dep} {versions[dep]}")
    if problems:
        raise SystemExit("release: inconsistent versions:\n  " + "\n  ".join(problems))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe(path: Path) -> tuple[str, str, str]:
    """(normalized name, version, kind) from an artifact's file name."""
    if path.name.endswith(".whl"):
        name, version, _, _ = parse_wheel_filename(path.name)
        return name, str(version), "wheel"
    name, version = parse_sdist_filename(path.name)
    return name, str(version), "sdist"


def write_index(out: Path, files: list[dict], requires_python: dict[str, str]) -> None:
    """PEP 503: simple/index.html lists the projects, simple/<name>/index.html links their files."""
    simple = out / "simple"
    by_name: dict[str, list[dict]] = {}
    for entry in files:
        by_name.setdefault(entry["name"], []).append(entry)
    page = "<!DOCTYPE html>\n<html><head><title>{title}</title></head><body>\n{body}</body></html>\n"
    links = "".join(f'<a href="{n}/">{n}</a><br>\n' for n in sorted(by_name))
    simple.mkdir(parents=True)
    (simple / "index.html").write_text(page.format(title="Simple index", body=links), encoding="utf-8")
    for name, entries in by_name.items():
        rp = html.escape(requires_python.get(name, ""), quote=True)
        attr = f' data-requires-python="{rp}"' if rp else ""
        body = "".join(f'<a href="../../{e["filename"]}#sha256={e["sha256"]}"{attr}>{e["filename"]}</a><br>\n'
                       for e in sorted(entries, key=lambda e: e["filename"]))
        (simple / name).mkdir()
        (simple / name / "index.html").write_text(page.format(title=f"Links for {name}", body=body), encoding="utf-8")


def _requires_python(project: Project) -> str:
    data = tomllib.loads((project.path / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"].get("requires-python", "")


def _size(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def release(out: Path = DEFAULT_OUT, only: list[str] | None = None, python: str = sys.executable,
            isolation: bool = True, log=print) -> dict:
    """Build, check and index the distributions; returns the manifest that was written to ``out``."""
    started = time.perf_counter()
    projects = find_projects()
    names = closure(projects, only) if only else list(projects)
    if out.exists():
        if any(out.iterdir()) and not (out / "manifest.json").is_file():
            raise SystemExit(f"release: {out} exists and is not a wheelhouse (no manifest.json): refusing to replace it")
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory(prefix="zoo-release-") as tmp:
        staged: list[tuple[Project, Path]] = []
        for i, name in enumerate(names, 1):
            project = projects[name]
            log(f"[{i}/{len(names)}] building {name} ({project.path.relative_to(ROOT).as_posix() or '.'})")
            for artifact in build(project, Path(tmp), python, isolation):
                check_wheel(artifact, project) if artifact.suffix == ".whl" else check_sdist(artifact)
                staged.append((project, artifact))
        artifacts = [a for _, a in staged]
        log(f"twine check --strict on {len(artifacts)} artifacts")
        report = _run([python, "-m", "twine", "check", "--strict", *map(str, artifacts)], "twine check")
        passed = sum("PASSED" in line for line in report.splitlines())
        if passed != len(artifacts):
            sys.stderr.write(report)
            raise SystemExit(f"release: twine check passed {passed} of {len(artifacts)} artifacts")
        files = []
        out.mkdir(parents=True)
        for project, artifact in staged:
            name, version, kind = describe(artifact)
            if name != project.name:
                raise SystemExit(f"release: {artifact.name} does not carry the name {project.name}")
            dest = out / artifact.name
            shutil.move(str(artifact), dest)
            files.append({"name": name, "version": version, "filename": dest.name, "kind": kind,
                          "sha256": sha256(dest), "size": dest.stat().st_size})
    versions = {f["name"]: f["version"] for f in files}
    check_requirements(projects, versions, names)
    write_index(out, files, {n: _requires_python(projects[n]) for n in names})
    wheels = [f for f in files if f["kind"] == "wheel"]
    largest = max(wheels, key=lambda f: f["size"])
    total = sum(f["size"] for f in files)
    manifest = {"files": files, "distributions": len(names), "total_size": total, "largest_wheel": largest["filename"]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    log(f"twine check: {passed}/{len(artifacts)} PASSED")
    log(f"{len(files)} artifacts ({len(names)} distributions) in {out} in {time.perf_counter() - started:.0f} s")
    log(f"largest wheel: {largest['filename']} ({_size(largest['size'])})")
    log(f"total size: {_size(total)}")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="wheelhouse folder (replaced; default dist/wheelhouse)")
    parser.add_argument("--only", nargs="+", metavar="DIST",
                        help="build only these distributions and the zoo-* distributions they require")
    parser.add_argument("--no-isolation", action="store_true",
                        help="build with this interpreter's hatchling instead of a fresh build environment (faster)")
    a = parser.parse_args(argv)
    release(a.out.resolve(), a.only, isolation=not a.no_isolation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
