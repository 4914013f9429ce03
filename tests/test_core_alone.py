"""The core stays small: zoo-core alone pulls no data or task stack, and works without any task installed."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata

HEAVY = {"faiss-cpu", "scikit-learn", "scikit-image", "scipy", "matplotlib", "timm", "networkx"}
HEAVY_MODULES = ("faiss", "sklearn", "skimage", "scipy", "matplotlib", "timm", "networkx", "zoo_task_", "zoo_nn")


def _name(req: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0].lower().replace("_", "-")


def _closure(dist: str, stop: set[str]) -> set[str]:
    """Distributions ``dist`` requires (no extras), transitively, not descending into ``stop``."""
    seen: set[str] = set()
    todo = [dist]
    while todo:
        d = todo.pop()
        try:
            reqs = metadata.requires(d) or []
        except metadata.PackageNotFoundError:  # a platform-conditional requirement (colorama on Windows)
            continue
        for req in reqs:
            if "extra ==" in req:
                continue
            n = _name(req)
            if n not in seen:
                seen.add(n)
                if n not in stop:
                    todo.append(n)
    return seen


def test_core_requirements_pull_no_task_stack():
    # torch's own requirements (networkx, sympy, ...) are torch's business, not the core's
    direct = {_name(r) for r in metadata.requires("zoo-core") if "extra ==" not in r}
    assert not direct & HEAVY, direct & HEAVY
    assert not (_closure("zoo-core", stop={"torch"}) - {"torch"}) & HEAVY


def test_core_works_with_no_task_or_plugin_loaded(tmp_path):
    """list, create from a local folder and the local hub, with only the fixture plugin enabled: no task
    distribution, reference network or data library is imported."""
    code = f"""
import json, sys, zoo
from zoo.hubserver import LocalHub
names = zoo.list_models()
model = zoo.create("fixture_mlp")
folder = zoo.save_pretrained(model, {str(tmp_path / 'w')!r})
again = zoo.create("local-dir:" + str(folder))
hub = LocalHub(root={str(tmp_path / 'hub')!r}, port=0)
hub.start(); url = hub.url; hub.stop()
heavy = sorted(m for m in sys.modules if m.split('.')[0].startswith({HEAVY_MODULES!r}))
print(json.dumps({{"names": names, "heavy": heavy, "url": url, "tasks": sorted(zoo.registry.catalog().tasks)}}))
"""
    env = {**os.environ, "ZOO_PLUGINS": "fixture", "ZOO_NO_PLUGIN_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["names"] == ["fixture_fixed_projection", "fixture_mlp", "fixture_tied"] and got["tasks"] == []
    assert got["heavy"] == [] and got["url"].startswith("http://127.0.0.1:")
