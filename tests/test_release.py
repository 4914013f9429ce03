"""Releasing: every distribution's metadata, the plugin/core compatibility check at discovery, and
zoo-mrl installed by name from a locally served wheelhouse into a fresh virtual environment."""
from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import pytest

import zoo

from .helpers import run_py

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("zoo_release_script", ROOT / "scripts" / "release.py")
release = sys.modules["zoo_release_script"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release)

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


# ---------------------------------------------------------------------------------------------------------
# metadata of every distribution (static: reads the pyproject files, builds nothing)

def _pyprojects() -> list[tuple[Path, dict]]:
    return [(p.path, tomllib.loads((p.path / "pyproject.toml").read_text())) for p in release.find_projects().values()]


def _paper(package: str) -> zoo.Paper:
    """The plugin's own paper: the ``Paper`` in its (torch-free) plugin module with a catalog number, else the first."""
    module = importlib.import_module(f"{package}.plugin")
    papers = [v for v in vars(module).values() if isinstance(v, zoo.Paper)]
    own = [p for p in papers if p.catalog is not None] or papers
    return own[0]


def test_every_distribution_is_releasable():
    projects = _pyprojects()
    assert len(projects) >= 66  # core, zoo-nn, 11 task distributions, 53 plugins
    for folder, data in projects:
        meta, where = data["project"], folder.relative_to(ROOT).as_posix() or "."
        # one source of truth for the version: the package's __version__, read by hatchling
        assert meta.get("dynamic") == ["version"] and "version" not in meta, where
        version_file = folder / data["tool"]["hatch"]["version"]["path"]
        assert re.search(r'^__version__ = "\d+\.\d+\.\d+"$', version_file.read_text(), re.M), version_file
        assert (folder / meta["readme"]).is_file() and meta["readme"] == "README.md", where
        assert meta["license"] == "MIT" and meta["license-files"] == ["LICENSE"] and (folder / "LICENSE").is_file(), where
        assert meta["requires-python"] == ">=3.10", where
        assert any(c.startswith("Programming Language :: Python :: 3.10") for c in meta["classifiers"]), where
        assert meta["urls"]["Source"].startswith("https://github.com/zoo-models/zoo"), where
        for requirement in map(release.Requirement, meta["dependencies"]):
            bounds = {s.operator for s in requirement.specifier}
            assert ">=" in bounds, f"{where}: {requirement} has no lower bound"
            if requirement.name.startswith("zoo-"):  # the zoo API a distribution was built for: bounded above
                assert "<" in bounds, f"{where}: {requirement} has no upper bound"
        if folder.parent.name == "plugins":
            paper = _paper(data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"][0])
            # the paper's arXiv page, or its own page for a paper not on arXiv
            assert meta["urls"]["Paper"] == (f"https://arxiv.org/abs/{paper.arxiv}" if paper.arxiv else paper.url), where
            assert meta["urls"].get("Official code") == paper.code, where
            assert any(r.startswith("zoo-core>=") and "<" in r for r in meta["dependencies"]), where


def _wheel(path: Path, members: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for member in members:
            zf.writestr(member, "")
    return path


def test_wheel_listing_rejects_tests_caches_and_leftovers(tmp_path):
    project = release.Project(tmp_path, "zoo-x", ("zoo_x",), ())
    good = ["zoo_x/__init__.py", "zoo_x/testing.py", "zoo_x/data/table.csv", "zoo_x-0.1.0.dist-info/METADATA"]
    assert release.check_wheel(_wheel(tmp_path / "good.whl", good), project) == good
    for leftover in ("tests/test_x.py", "zoo_x/tests/test_x.py", "zoo_x/__pycache__/model.cpython-311.pyc",
                     "zoo_x/model.pyc", "build/lib/zoo_x/model.py", "zoo_x.egg-info/PKG-INFO", "other_pkg/x.py"):
        with pytest.raises(SystemExit, match=re.escape(leftover)):
            release.check_wheel(_wheel(tmp_path / "bad.whl", [*good, leftover]), project)


def test_release_closure_follows_zoo_requirements():
    names = release.closure(release.find_projects(), ["zoo-mrl"])
    assert names == ["zoo-core", "zoo-nn", "zoo-task-digits", "zoo-task-retrieval", "zoo-mrl"]


# ---------------------------------------------------------------------------------------------------------
# a plugin built for another zoo-core is refused at discovery, isolated like any broken plugin

PLUGIN = '''
from zoo import ModelSpec, hookimpl
{guard}
@hookimpl
def zoo_models():
    return [ModelSpec(name="{name}", builder="{pkg}.plugin:build", task="digits_classify")]
def build():
    import torch
    return torch.nn.Linear(64, 10)
'''
# imported only if discovery did not refuse the plugin first
IMPORT_FAILS = 'raise RuntimeError("this module was imported")'


def _make_dist(site: Path, plugin_id: str, requires: str | None, guard: str = "") -> None:
    pkg = "zoo_" + plugin_id.replace("-", "_")
    (site / pkg).mkdir()
    (site / pkg / "__init__.py").write_text("")
    (site / pkg / "plugin.py").write_text(textwrap.dedent(PLUGIN.format(name=f"{pkg}_net", pkg=pkg, guard=guard)))
    info = site / f"{pkg}-0.1.0.dist-info"
    info.mkdir()
    lines = ["Metadata-Version: 2.1", f"Name: zoo-{plugin_id}", "Version: 0.1.0", "Requires-Dist: torch>=2.1",
             'Requires-Dist: zoo-core[test]<99; extra == "dev"']  # an optional requirement never counts
    if requires:
        lines.append(f"Requires-Dist: {requires}")
    (info / "METADATA").write_text("\n".join(lines) + "\n\nA long description: Requires-Dist: zoo-core<0.1\n")
    (info / "entry_points.txt").write_text(f"[zoo]\n{plugin_id} = {pkg}.plugin\n")


PROBE = '''
import json, sys, zoo
zoo.__version__ = {version!r}  # what an upgraded (or downgraded) core would report
out = {{s.id: [s.state, s.error] for s in zoo.plugins() if s.id in ("future", "present", "unpinned")}}
out["imported"] = sorted(m for m in sys.modules if m.startswith(("zoo_future", "zoo_present", "zoo_unpinned")))
out["models"] = zoo.list_models("zoo_*_net")
print(json.dumps(out))
'''


def _probe(site: Path, version: str) -> dict:
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ["PYTHONPATH"]]), "ZOO_CACHE_DIR": str(site / "cache")}
    r = run_py(PROBE.format(version=version), env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_plugin_built_for_another_core_is_refused(tmp_path):
    _make_dist(tmp_path, "future", "zoo-core<10,>=9", guard=IMPORT_FAILS)
    _make_dist(tmp_path, "present", "zoo-core>=0.2,<0.3")
    _make_dist(tmp_path, "unpinned", None)
    for attempt in ("cold", "from the listing cache"):
        out = _probe(tmp_path, "0.2.0")
        state, error = out["future"]
        assert state == "broken", attempt
        assert "built for zoo-core >=9,<10, this is 0.2.0" in error, error
        assert "pip install -U zoo-future" in error
        assert out["present"] == ["ok", None] and out["unpinned"] == ["ok", None], attempt
        assert out["models"] == ["zoo_present_net", "zoo_unpinned_net"], attempt
        # never imported (the check runs first); the others are imported cold, listed from the cache after
        expected = [] if attempt != "cold" else ["zoo_present", "zoo_present.plugin", "zoo_unpinned", "zoo_unpinned.plugin"]
        assert out["imported"] == expected, attempt
    r = run_py("import sys; from zoo.cli import main; sys.exit(main(['plugins']))",
               env={"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ["PYTHONPATH"]])})
    line = next(line for line in r.stdout.splitlines() if line.startswith("future "))
    assert "zoo-future" in line and " broken " in line and "built for zoo-core >=9,<10" in line, r.stdout


def test_another_core_rechecks_cached_plugins(tmp_path):
    # a plugin cached as compatible must be checked again once the core changes under it
    _make_dist(tmp_path, "present", "zoo-core>=0.2,<0.3")
    assert _probe(tmp_path, "0.2.0")["present"] == ["ok", None]
    assert _probe(tmp_path, "0.2.0")["imported"] == []  # cached
    state, error = _probe(tmp_path, "0.3.0")["present"]
    assert state == "broken" and "built for zoo-core >=0.2,<0.3, this is 0.3.0" in error
    assert _probe(tmp_path, "0.2.7")["present"] == ["ok", None]


# ---------------------------------------------------------------------------------------------------------
# the wheelhouse, served on 127.0.0.1, installs zoo-mrl by name into a fresh venv

def _unavailable(reason: str):
    """Skip when build or venv tooling is missing on this machine; in CI that is a failure, never a skip."""
    if os.environ.get("CI"):
        pytest.fail(f"release tooling unavailable in CI: {reason}")
    pytest.skip(f"release tooling unavailable: {reason}")


def _clean_env(**extra: str) -> dict:
    """This machine's environment (its pip configuration included) without the test run's Python paths."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def _run(cmd: list, timeout: float, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def _tooling(tmp_path: Path) -> str:
    """An interpreter with build, twine and hatchling: this one, or a tools venv built for the test."""
    have = run_py("import build, twine, hatchling, packaging")
    if have.returncode == 0:
        return sys.executable
    tools = tmp_path / "tools"
    made = subprocess.run([sys.executable, "-m", "venv", tools], capture_output=True, text=True)
    if made.returncode != 0:
        _unavailable(f"python -m venv: {made.stderr.strip()[-300:]}")
    got = subprocess.run([_bin(tools, "python"), "-m", "pip", "install", "-q", "build", "twine", "hatchling>=1.27"],
                         capture_output=True, text=True, env=_clean_env(), timeout=600)
    if got.returncode != 0:
        _unavailable(f"pip install build twine hatchling: {got.stderr.strip()[-300:]}")
    return str(_bin(tools, "python"))


def _remove_in_background(folder: Path) -> None:
    """Delete a folder of several GB (torch and its CUDA libraries) without making the test wait a minute for it."""
    if os.name != "posix" or not shutil.which("rm"):
        shutil.rmtree(folder, ignore_errors=True)
        return
    subprocess.Popen(["rm", "-rf", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        pass


def _install_zoo_mrl(vpy: Path, wheelhouse: Path, report: Path, lap) -> None:
    """torch as dev installs it, then zoo-mrl by name from the wheelhouse served on 127.0.0.1."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(wheelhouse)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    index = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    try:
        # the pinned torch from this machine's configured index (local disk here), like ./dev
        # (--no-compile: byte-compiling torch's thousands of modules is most of an install's CPU time)
        _run([vpy, "-m", "pip", "install", "-q", "--no-compile", "torch==2.14.1", "torchvision==0.29.1"], timeout=1800,
             env=_clean_env())
        lap("install torch")
        # the wheelhouse replaces the default index, so every zoo-* name can only come from it; third-party
        # requirements come from this machine's configured extra indexes
        _run([vpy, "-m", "pip", "install", "-q", "--no-compile", "--index-url", index, "--report", report, "zoo-mrl"],
             timeout=900, env=_clean_env())
        lap("install zoo-mrl")
    finally:
        server.shutdown()
        server.server_close()


def test_zoo_mrl_installs_by_name_from_the_wheelhouse(tmp_path):
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(what: str) -> None:
        nonlocal clock
        timings[what] = round(time.perf_counter() - clock, 1)
        clock = time.perf_counter()

    python = _tooling(tmp_path)
    wheelhouse = tmp_path / "wheelhouse"
    built = _run([python, ROOT / "scripts" / "release.py", "--only", "zoo-mrl", "--out", wheelhouse, "--no-isolation"],
                 timeout=900, env=_clean_env())
    lap("build wheelhouse")
    manifest = json.loads((wheelhouse / "manifest.json").read_text())
    expected = {"zoo-core", "zoo-nn", "zoo-task-digits", "zoo-task-retrieval", "zoo-mrl"}
    assert {f["name"] for f in manifest["files"]} == expected and len(manifest["files"]) == 10
    assert "twine check: 10/10 PASSED" in built.stdout and "largest wheel:" in built.stdout, built.stdout
    for entry in manifest["files"]:
        data = (wheelhouse / entry["filename"]).read_bytes()
        assert entry["size"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
        page = (wheelhouse / "simple" / entry["name"] / "index.html").read_text()
        assert f'href="../../{entry["filename"]}#sha256={entry["sha256"]}"' in page
        if entry["kind"] == "wheel":
            names = zipfile.ZipFile(wheelhouse / entry["filename"]).namelist()
            assert not [n for n in names if re.search(r"(^|/)(tests?|__pycache__)/|\.pyc$", n)], names

    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
    if made.returncode != 0:
        _unavailable(f"python -m venv: {made.stderr.strip()[-300:]}")
    vpy = _bin(venv, "python")
    lap("create venv")
    try:
        _install_zoo_mrl(vpy, wheelhouse, tmp_path / "report.json", lap)
        installed = {i["metadata"]["name"].lower(): i["download_info"]["url"]
                     for i in json.loads((tmp_path / "report.json").read_text())["install"]}
        zoo_dists = {name: url for name, url in installed.items() if name.startswith("zoo-")}
        assert set(zoo_dists) == expected  # resolved from metadata: mrl -> its tasks and zoo-nn -> zoo-core
        assert all(url.startswith("http://127.0.0.1:") for url in zoo_dists.values()), zoo_dists
        assert "torch" not in installed  # the pinned torch was kept

        env = _clean_env(HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), ZOO_CACHE_DIR=str(tmp_path / "zoo-cache"))
        zoo_cli = _bin(venv, "zoo")
        where = _run([vpy, "-c", "import zoo; print(zoo.__file__, zoo.__version__)"], 60, env=env, cwd=tmp_path).stdout
        assert where.startswith(str(venv)) and where.split()[1] == zoo.__version__, where
        listed = _run([zoo_cli, "list"], 120, env=env, cwd=tmp_path).stdout.split()
        assert {"mrl_digits_cnn", "mrl_e_digits_cnn", "mrl_resnet18"} <= set(listed), listed
        plugins = _run([zoo_cli, "plugins"], 120, env=env, cwd=tmp_path).stdout.splitlines()
        assert sorted(line.split()[0] for line in plugins) == ["mrl", "task-digits", "task-retrieval"]
        assert all(line.split()[3] == "ok" for line in plugins), plugins
        # the pretrained tag ships in the wheel: it loads offline, verified, with an empty Hub cache
        created = json.loads(_run([zoo_cli, "create", "mrl_digits_cnn.digits"], 300, env=env, cwd=tmp_path).stdout)
        assert created["id"] == "mrl_digits_cnn.digits" and created["plugin"] == "mrl" and created["parameters"] > 10_000
        assert created["source"] == "package" and created["pretrained"] is True
        from zoo.registry import lookup

        pin = lookup("mrl_digits_cnn")[0].weights["digits"].files["model.safetensors"]
        assert created["sha256"] == pin
        evaluated = _run([zoo_cli, "eval", "mrl_digits_cnn", "--steps", "5"], 600, env=env, cwd=tmp_path).stdout
        assert "task digits_classify" in evaluated, evaluated
        row = next(line.split() for line in evaluated.splitlines() if line.startswith("mrl_digits_cnn "))
        assert row[2] == "5", evaluated  # the steps asked for
        lap("zoo list/plugins/create/eval")
    finally:
        _remove_in_background(venv)
    print(f"\nrelease install-by-name timings (s): {timings}, total {sum(timings.values()):.0f}")
