"""Discovery's fast path (the listing cache's index and the dist-info scan) gives what the slow path gives.

The slow path (importlib.metadata, every plugin imported) is the reference: the scan must find the same
entry points, the cached catalog must equal a fresh one, and anything the fast path cannot vouch for
(a damaged cache, a collision, an egg-info, two copies of one distribution) must end on the slow path.
"""
from __future__ import annotations

import json
import os
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from zoo import discovery_cache

from .helpers import run_py

PLUGIN = '''
from zoo import ClaimSpec, ModelSpec, TaskSpec, WeightsSpec, hookimpl
@hookimpl
def zoo_models():
    return [ModelSpec(name="{name}", builder="{pkg}.plugin:build", task="{task}",
                      weights={{"t1": WeightsSpec(repo="org/{name}")}})]
@hookimpl
def zoo_tasks():
    return [TaskSpec(name="{task}", contract="x -> y", evaluate="{pkg}.plugin:evaluate")] if "{task}" else []
@hookimpl
def zoo_claims():
    return [ClaimSpec(plugin="{plugin_id}", claim="it works", reproduce="{pkg}.plugin:reproduce")]
def build():
    return object()
'''


def make_dist(site: Path, plugin_id: str, name: str, task: str = "", version: str = "0.1.0", dist: str | None = None,
              extra_groups: str = "") -> Path:
    """A pip-style installed plugin: a package with plugin.py and its dist-info with entry_points.txt."""
    pkg = "zoo_" + plugin_id.replace("-", "_")
    (site / pkg).mkdir(exist_ok=True)
    (site / pkg / "__init__.py").write_text("")
    (site / pkg / "plugin.py").write_text(textwrap.dedent(PLUGIN.format(name=name, pkg=pkg, task=task, plugin_id=plugin_id)))
    info = site / f"{dist or pkg}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {(dist or pkg).replace('_', '-')}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"{extra_groups}[zoo]\n{plugin_id} = {pkg}.plugin\n")
    return info


def _env(tmp_path: Path, *sites: Path, **extra: str) -> dict:
    path = os.pathsep.join([*map(str, sites), os.environ["PYTHONPATH"]])
    return {"PYTHONPATH": path, "ZOO_CACHE_DIR": str(tmp_path / "cache"), **extra}


CATALOG = '''
import json, sys
from zoo import registry
cat = registry.catalog()
out = {"listed": registry.list_models(), "tags": registry.list_models("omega*", pretrained=True),
       "slow_modules": sorted(m for m in ("importlib.metadata", "pluggy", "zoo.specs") if m in sys.modules),
       "plugins_imported": sorted(m for m in sys.modules if m.startswith("zoo_") and m.endswith(".plugin"))}
out["statuses"] = {k: [s.dist, s.version, s.state, s.error, list(s.models), list(s.tasks), s.module]
                   for k, s in cat.statuses.items()}
out["status_order"] = list(cat.statuses)
out["models"] = {k: [repr(spec), pid] for k, (spec, pid) in cat.models.items()}
out["tasks"] = {k: [repr(spec), pid] for k, (spec, pid) in cat.tasks.items()}
out["claims"] = {k: repr(v) for k, v in cat.claims.items()}
print(json.dumps(out))
'''


def _catalog(env: dict) -> dict:
    r = run_py(CATALOG, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "omega", "omega_net", task="omega_task", extra_groups="[console_scripts]\nomega = x:y\n\n")
    make_dist(site, "delta", "delta_net", dist="Zoo.Delta_Plugin")  # a name that needs normalizing
    return site


def test_scan_finds_what_importlib_metadata_finds(tmp_path, site, monkeypatch):
    from importlib import metadata

    other = tmp_path / "other"
    other.mkdir()
    # shadowed: the same distribution later on sys.path (importlib.metadata keeps the first one)
    make_dist(other, "omega-old", "omega_old_net", dist="zoo_omega", version="0.0.9")
    make_dist(other, "sigma", "sigma_net")
    (other / "plain-1.0.dist-info").mkdir()  # a distribution that is no plugin
    (other / "legacy.egg-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "missing"), str(other)])
    found, folders = discovery_cache.scan("zoo", {})
    expected = [(ep.name, ep.value, os.path.abspath(str(ep.dist._path))) for ep in metadata.entry_points(group="zoo")]
    assert [f[:3] for f in found] == expected
    assert {name for name, *_ in found} == {"omega", "delta", "sigma"}
    assert set(folders) == {str(site), str(other)} and "legacy.egg-info" in folders[str(other)]
    # the second scan reads no entry_points.txt for folders the index knows at the same mtime
    for records in folders.values():
        for record in records.values():
            record[2] = [[name, value, ["known"]] for name, value, _ in record[2]]
    again, _ = discovery_cache.scan("zoo", folders)
    assert [f[:3] for f in again] == expected and all(f[4] == ["known"] for f in again)


@pytest.mark.parametrize("layout", ["egg-info plugin", "two versions in one folder", "zip on sys.path"])
def test_scan_leaves_what_it_cannot_read_exactly_to_importlib_metadata(tmp_path, site, monkeypatch, layout):
    paths = [str(site)]
    if layout == "egg-info plugin":
        egg = site / "zoo_legacy.egg-info"
        egg.mkdir()
        (egg / "entry_points.txt").write_text("[zoo]\nlegacy = zoo_legacy.plugin\n")
    elif layout == "two versions in one folder":
        make_dist(site, "omega2", "omega2_net", dist="zoo_omega", version="0.2.0")
    else:
        archive = tmp_path / "plugins.zip"
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("zoo_zip-1.0.dist-info/entry_points.txt", "[zoo]\nzipped = zoo_zip.plugin\n")
        paths.append(str(archive))
    monkeypatch.setattr(sys, "path", paths)
    assert discovery_cache.scan("zoo", {}) is None


def test_warm_catalog_equals_a_fresh_one_and_imports_nothing_heavy(tmp_path, site):
    env = _env(tmp_path, site)
    cold = _catalog(env)
    warm = _catalog(env)
    fresh = _catalog({**env, "ZOO_NO_PLUGIN_CACHE": "1"})
    assert cold["plugins_imported"] and "pluggy" in cold["slow_modules"]
    assert "omega_net" in warm["listed"] and "delta_net" in warm["listed"] and warm["tags"] == ["omega_net.t1"]
    assert warm["statuses"]["delta"][:3] == ["zoo-delta-plugin", "0.1.0", "ok"]
    for key in ("listed", "tags", "statuses", "status_order", "models", "tasks", "claims"):
        assert warm[key] == fresh[key] == cold[key], key
    # listing alone: no importlib.metadata, pluggy, spec classes or plugin module (the catalog's specs above were
    # decoded on demand, after the listing)
    r = run_py("import sys, zoo; names = zoo.list_models(); heavy = sorted(m for m in sys.modules if m in "
               "('importlib.metadata', 'pluggy', 'zoo.specs', 'json') or m.endswith('.plugin')); "
               "import json; print(json.dumps([len(names), heavy]))", env=env)
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [len(warm["listed"]), []], r.stderr


def test_filters_on_the_fast_path_match_the_slow_path(tmp_path, site):
    env = _env(tmp_path, site)
    _catalog(env)
    for extra in ({"ZOO_PLUGINS": "omega"}, {"ZOO_DISABLE_PLUGINS": "omega"}):
        warm = _catalog({**env, **extra})
        fresh = _catalog({**env, **extra, "ZOO_NO_PLUGIN_CACHE": "1"})
        assert warm["plugins_imported"] == [] and warm["statuses"] == fresh["statuses"], extra
        assert warm["listed"] == fresh["listed"]


def test_damaged_cache_files_end_on_the_slow_path(tmp_path, site):
    env = _env(tmp_path, site)
    expected = _catalog(env)
    specs, index = Path(tmp_path / "cache").glob("plugins-*.json"), Path(tmp_path / "cache").glob("plugins-*-index.*")
    specs, index = list(specs), list(index)
    assert len(specs) == 1 and len(index) == 1
    # the index still vouches for the plugins but their specs are gone: the listing comes from the index, the
    # specs from a fresh discovery
    specs[0].write_text("{not json")
    damaged = _catalog(env)
    for key in ("listed", "statuses", "models", "tasks", "claims"):
        assert damaged[key] == expected[key], key
    for garbage in (b"", b"\x00garbage", b"{not marshal"):
        index[0].write_bytes(garbage)
        assert _catalog(env)["statuses"] == expected["statuses"]
    # an index of the right type but the wrong shape: the fast path gives up, nothing crashes
    import marshal

    data = marshal.loads(index[0].read_bytes())
    for root in data["folders"]:
        data["folders"][root] = {child: [record[0], record[1], [["omega", "zoo_omega.plugin", 42]]]
                                 for child, record in data["folders"][root].items()}
    index[0].write_bytes(marshal.dumps(data))
    assert _catalog(env)["statuses"] == expected["statuses"]


def test_a_collision_between_two_cached_plugins_is_found_as_without_cache(tmp_path, site):
    make_dist(site, "zeta", "omega_net")  # registers omega's model name
    env = _env(tmp_path, site)
    _catalog({**env, "ZOO_DISABLE_PLUGINS": "zeta"})  # omega cached
    _catalog({**env, "ZOO_DISABLE_PLUGINS": "omega"})  # zeta cached: the index now vouches for both
    warm = _catalog(env)
    fresh = _catalog({**env, "ZOO_NO_PLUGIN_CACHE": "1"})
    assert warm["statuses"]["zeta"][2] == "broken" and "omega_net" in warm["statuses"]["zeta"][3]
    assert warm["statuses"] == fresh["statuses"] and warm["models"] == fresh["models"]


def test_a_new_plugin_is_found_at_once(tmp_path, site):
    env = _env(tmp_path, site)
    _catalog(env)
    make_dist(site, "kappa", "kappa_net")
    warm = _catalog(env)
    assert "kappa_net" in warm["listed"] and warm["plugins_imported"] == ["zoo_kappa.plugin"]
    assert "kappa_net" in _catalog(env)["listed"] and _catalog(env)["plugins_imported"] == []
