"""Hostile plugins (issue 12), each a real installed distribution (dist-info, RECORD, entry point) on a temp path.

A plugin that exits, raises KeyboardInterrupt, loops, prints or collides must leave `zoo list` and `zoo create` of
the other plugins working; an entry point, a builder or a cache entry must never make zoo run another
distribution's code under a name it did not register. Every attack runs in a real subprocess.
"""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from .helpers import run_py

GOOD = '''
from zoo import ClaimSpec, ModelSpec, hookimpl
@hookimpl
def zoo_models():
    return [ModelSpec(name="{name}", builder="{pkg}.plugin:build", task="digits_classify", defaults={{"hidden": 4}}),
            ModelSpec(name="{name}_other", builder="{pkg}.plugin:build", task="digits_classify")]
def build(hidden: int = 4):
    import torch
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, hidden))
'''
EXITS = "import sys\nsys.exit(3)\n"
INTERRUPTS = "raise KeyboardInterrupt\n"
HOOK_EXITS = '''
from zoo import hookimpl
@hookimpl
def zoo_models():
    raise SystemExit("bye from a hook")
'''
LOOPS = "while True:\n    pass\n"
# a retry loop with a bare except: swallows any exception raised into it, so only a thread gives control back
STUBBORN = '''
import time
while True:
    try:
        time.sleep(0.01)
    except BaseException:
        pass
'''
PRINTS = '''
import sys
print("hello from plugin import")
from zoo import ModelSpec, hookimpl
@hookimpl
def zoo_models():
    print("hello from plugin hook")
    sys.stdout.write("more noise\\n")
    return [ModelSpec(name="noisy_net", builder="zoo_noisy.plugin:build", task="digits_classify")]
def build():
    import torch
    return torch.nn.Linear(64, 10)
'''
SLEEPY = '''
import os, time
open(os.environ["ZOO_TEST_MARKER"], "w").close()
time.sleep(60)
'''


def make_dist(site: Path, plugin_id: str, source: str, *, pkg: str | None = None, dist: str | None = None,
              entry: str | None = None, record: bool = True) -> Path:
    """An installed plugin as pip leaves it: ``pkg/plugin.py``, a dist-info with METADATA, RECORD and entry point."""
    pkg = pkg or "zoo_" + plugin_id.replace("-", "_")
    dist = dist or "zoo_" + plugin_id.replace("-", "_")
    (site / pkg).mkdir(exist_ok=True)
    (site / pkg / "__init__.py").write_text("")
    (site / pkg / "plugin.py").write_text(textwrap.dedent(source).format(pkg=pkg, name=f"{plugin_id}_net"))
    info = site / f"{dist}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[zoo]\n{plugin_id} = {entry or pkg + '.plugin'}\n")
    if record:
        files = [f"{pkg}/__init__.py", f"{pkg}/plugin.py"] + [f"{info.name}/{n}" for n in ("METADATA", "entry_points.txt")]
        (info / "RECORD").write_text("".join(f"{f},,\n" for f in files) + f"{info.name}/RECORD,,\n")
    return info


def _env(site: Path, tmp_path: Path, **extra: str) -> dict:
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ["PYTHONPATH"]]),
            "ZOO_CACHE_DIR": str(tmp_path / "cache"), "ZOO_PLUGIN_TIMEOUT": "1", **extra}


STATES = '''
import json, sys, zoo
out = {"states": {s.id: [s.state, s.error, s.dist] for s in zoo.plugins()}, "created": {}}
for name in NAMES:
    try:
        m = zoo.create(name)
        out["created"][name] = ["ok", m.zoo.plugin, m.zoo.distribution]
    except Exception as e:
        out["created"][name] = [type(e).__name__, str(e)]
sys.__stdout__.write("RESULT " + json.dumps(out) + "\\n")
'''


def _states(env: dict, names: list[str]) -> dict:
    r = run_py(f"NAMES = {names!r}\n" + STATES, env=env, timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@pytest.fixture
def hostile(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "good", GOOD)
    make_dist(site, "exits", EXITS)
    make_dist(site, "interrupts", INTERRUPTS)
    make_dist(site, "hook-exits", HOOK_EXITS)
    make_dist(site, "loops", LOOPS)
    make_dist(site, "stubborn", STUBBORN)
    make_dist(site, "noisy", PRINTS)
    return site


def test_exit_interrupt_loop_and_print_leave_the_rest_working(tmp_path, hostile):
    env = _env(hostile, tmp_path)
    start = time.monotonic()
    r = run_py("import sys; from zoo.cli import main; sys.exit(main(['list', '--json']))", env=env, timeout=60)
    took = time.monotonic() - start
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(r.stdout)  # the plugin's prints went to stderr: stdout is JSON alone
    assert {"good_net", "good_net_other", "noisy_net"} <= {row["name"] for row in rows}
    assert "hello from plugin import" in r.stderr and "hello from plugin hook" in r.stderr
    assert "more noise" in r.stderr and "hello" not in r.stdout
    assert took < 30, took  # two loopers at 1 s each, not forever
    out = _states(env, ["good_net", "noisy_net"])
    states = out["states"]
    assert states["good"][0] == "ok" and states["noisy"][0] == "ok"
    assert states["exits"][0] == "broken" and "SystemExit: 3" in states["exits"][1]
    assert states["interrupts"][0] == "broken" and "KeyboardInterrupt" in states["interrupts"][1]
    assert states["hook-exits"][0] == "broken" and "bye from a hook" in states["hook-exits"][1]
    for looper in ("loops", "stubborn"):
        assert states[looper][0] == "broken" and "did not finish loading within 1 s" in states[looper][1], states[looper]
        assert "ZOO_PLUGIN_TIMEOUT" in states[looper][1]
    assert out["created"]["good_net"] == ["ok", "good", "zoo-good"]
    assert out["created"]["noisy_net"] == ["ok", "noisy", "zoo-noisy"]


def test_strict_mode_names_the_exiting_plugin(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "exits", EXITS)
    r = run_py("import zoo; zoo.list_models()", env=_env(site, tmp_path, ZOO_STRICT_PLUGINS="1"))
    assert r.returncode == 1 and "PluginBroken" in r.stderr and "sys.exit" in r.stderr


def test_a_real_ctrl_c_while_a_plugin_loads_still_interrupts(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "sleepy", SLEEPY)
    marker = tmp_path / "loading"
    env = {**os.environ, **_env(site, tmp_path, ZOO_PLUGIN_TIMEOUT="60", ZOO_TEST_MARKER=str(marker))}
    # the child gets Python's own Ctrl-C handler whatever the test runner's process inherited (a SIGINT ignored
    # by a parent stays ignored in its children, and Python then installs no handler): a terminal's Ctrl-C case
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from zoo.cli import main; sys.exit(main(['list']))")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), "the plugin never started loading"
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert time.monotonic() - start < 10  # not after the plugin's 60 s sleep, nor ZOO_PLUGIN_TIMEOUT
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert "interrupted while loading zoo plugin sleepy" in err


@pytest.mark.parametrize("attacker", ["aaa", "zzz"])
def test_a_colliding_plugin_takes_no_name_in_either_order(tmp_path, attacker):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    make_dist(site, "bystander", GOOD)
    # the attacker registers the victim's model name, in its own package
    make_dist(site, attacker, GOOD.replace('name="{name}"', 'name="victim_net"'))
    build = attacker == "aaa"  # building (importing torch) once is enough: the order shows in the states
    out = _states(_env(site, tmp_path), ["victim_net", "bystander_net"] if build else ["victim_net"])
    assert out["states"]["victim"][0] == "broken" and out["states"][attacker][0] == "broken"
    assert out["states"]["bystander"][0] == "ok"
    for pid in ("victim", attacker):
        assert "zoo-victim" in out["states"][pid][1] and f"zoo-{attacker}" in out["states"][pid][1]
    created = out["created"]["victim_net"]
    assert created[0] == "PluginCollision" and f"ZOO_DISABLE_PLUGINS={attacker}" in created[1]
    if build:
        assert out["created"]["bystander_net"] == ["ok", "bystander", "zoo-bystander"]
        # the way out the message gives: disable the other one
        out = _states(_env(site, tmp_path, ZOO_DISABLE_PLUGINS=attacker), ["victim_net"])
        assert out["created"]["victim_net"] == ["ok", "victim", "zoo-victim"]


def test_a_second_distribution_with_the_same_id_gets_no_credit(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    # another distribution declares the id "victim", with its own package and its own model
    make_dist(site, "victim", GOOD.replace('name="{name}"', 'name="impostor_net"'), pkg="zoo_impostor",
              dist="aaa_impostor")
    out = _states(_env(site, tmp_path), ["victim_net", "impostor_net"])
    status = out["states"]["victim"]
    assert status[0] == "broken" and "zoo-victim" in status[1] and "aaa-impostor" in status[1]
    assert out["created"]["impostor_net"][0] != "ok"  # never attributed to zoo-victim
    assert out["created"]["victim_net"][0] != "ok"


def test_an_entry_point_into_another_distribution_takes_nothing(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    # "aaa" sorts first and loads the victim's own plugin module: before, it took every victim name
    make_dist(site, "aaa", "", entry="zoo_victim.plugin")
    out = _states(_env(site, tmp_path), ["victim_net"])
    assert out["states"]["aaa"][0] == "broken" and "does not install" in out["states"]["aaa"][1]
    assert out["states"]["victim"][0] == "ok"
    assert out["created"]["victim_net"] == ["ok", "victim", "zoo-victim"]


@pytest.mark.parametrize("target", ["zoo_victim.plugin:build", "zoo.cli:main"])
def test_a_builder_outside_the_distribution_is_refused(tmp_path, target):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    make_dist(site, "borrow", GOOD.replace('builder="{pkg}.plugin:build"', f'builder="{target}"'))
    out = _states(_env(site, tmp_path), ["borrow_net"])
    assert out["states"]["borrow"][0] == "broken" and "outside the plugin's packages" in out["states"]["borrow"][1]
    assert out["created"]["borrow_net"][0] == "PluginBroken"
    assert out["states"]["victim"][0] == "ok"


def _forge(cache: Path, marker: Path) -> None:
    """Rewrite the cached specs: victim_net's builder becomes a shell command, the listing index still matches."""
    (specs,) = cache.glob("plugins-*.json")
    data = json.loads(specs.read_text())
    for _key, entry in data["entries"]:
        for spec in entry["zoo_models"]:
            if spec["name"] == "victim_net":
                spec["builder"] = "subprocess:getoutput"
                spec["defaults"] = {"cmd": f"touch {marker}"}
    mode = specs.stat().st_mode
    specs.write_text(json.dumps(data))
    os.chmod(specs, stat.S_IMODE(mode))


CREATE = '''
import json, sys, zoo
m = zoo.create("victim_net")
sys.__stdout__.write("RESULT " + json.dumps([type(m).__name__, m.zoo.distribution]) + "\\n")
'''


def test_a_forged_cache_entry_is_checked_like_a_fresh_one(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    env = _env(site, tmp_path)
    _states(env, [])  # cache written
    marker = tmp_path / "pwned"
    _forge(tmp_path / "cache", marker)
    r = run_py(CREATE, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert not marker.exists()
    assert r.stdout.split("RESULT ")[-1].strip() == json.dumps(["Sequential", "zoo-victim"])
    # the slow path loaded the plugin again and rewrote the entry: the next run is fast and right
    (specs,) = (tmp_path / "cache").glob("plugins-*.json")
    assert "subprocess:getoutput" not in specs.read_text()


PROBE = '''
import json, sys, zoo
names = zoo.list_models("victim*")
sys.__stdout__.write("RESULT " + json.dumps([names, "zoo_victim.plugin" in sys.modules]) + "\\n")
'''


def _imported(env: dict) -> bool:
    r = run_py(PROBE, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    names, imported = json.loads(r.stdout.split("RESULT ")[-1])
    assert names == ["victim_net", "victim_net_other"]
    return imported


def test_the_cache_folder_is_private_and_a_shared_one_is_not_trusted(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    env = _env(site, tmp_path)
    cache = tmp_path / "cache"
    assert _imported(env) is True
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    files = list(cache.glob("plugins-*"))
    assert len(files) == 2 and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert _imported(env) is False  # warm: listed from the cache
    # a cache file others can write is not read (the listing is right, from the plugin itself)
    for f in files:
        f.chmod(0o666)
    assert _imported(env) is True
    # nor a folder others can write, whatever its files say
    for f in cache.glob("plugins-*"):
        f.chmod(0o600)
    assert _imported(env) is False
    cache.chmod(0o777)
    marker = tmp_path / "pwned"
    _forge(cache, marker)
    assert _imported(env) is True
    r = run_py(CREATE, env=env)
    assert r.returncode == 0 and not marker.exists(), r.stderr[-3000:]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_a_cache_file_of_another_user_is_not_read(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    env = _env(site, tmp_path)
    _imported(env)
    assert _imported(env) is False
    for f in (tmp_path / "cache").glob("plugins-*"):
        os.chown(f, 65534, 65534)
    assert _imported(env) is True


def test_the_catalog_tells_whether_a_resolved_target_is_the_plugins_own(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "victim", GOOD)
    code = ("import json, os, sys; from zoo import registry; from zoo.factory import resolve_target\n"
            "c = registry.catalog()\n"
            "out = [sorted(c.packages['victim']), c.owns('victim', resolve_target('zoo_victim.plugin:build')),\n"
            "       c.owns('victim', resolve_target('zoo_victim.plugin:ModelSpec')), c.owns('victim', os.system)]\n"
            "sys.__stdout__.write('RESULT ' + json.dumps(out) + '\\n')")
    r = run_py(code, env=_env(site, tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.split("RESULT ")[-1]) == [["zoo_victim"], True, False, False]


def test_a_target_resolving_outside_the_plugin_is_refused_at_resolution():
    """Discovery checks the module a target names; resolution checks the object: ``pkg.mod:torch.nn.init.math.exp``
    names the plugin's module but reaches the standard library."""
    from zoo import PluginBroken, registry

    assert callable(registry.resolve_target("zoo_fixture.model:mlp", "fixture"))
    for reach in ("zoo_fixture.model:torch.nn.init.warnings.warn", "zoo_fixture.model:torch.nn.init.math.exp"):
        with pytest.raises(PluginBroken, match="not a plugin's code"):
            registry.resolve_target(reach, "fixture")
    import zoo_fixture.model
    from zoo.cli import main

    zoo_fixture.model.cli_main = main  # a core function reached through the plugin's own module
    try:
        with pytest.raises(PluginBroken, match="not a plugin's code"):
            registry.resolve_target("zoo_fixture.model:cli_main", "fixture")
    finally:
        del zoo_fixture.model.cli_main
