"""The tool contract (issue 18): ToolSpec through the zoo_tools hook, zoo.activations on any module,
zoo.analyze on activations / arrays / a model, `zoo list --tools`, `zoo info TOOL`, `zoo analyze TOOL MODEL`."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

import zoo
from zoo.activations import ActivationSet, activations, analyze, layer_names
from zoo.errors import ToolNotFound, ZooError
from zoo.specs import ToolSpec


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))


def test_tools_are_discovered_listed_and_described():
    assert "fixture_cka" in zoo.list_tools() and zoo.list_tools("fixture_*") == ["fixture_cka"]
    info = zoo.tool_info("fixture_cka")
    assert info["plugin"] == "fixture" and info["function"] == "zoo_fixture.model:linear_cka"
    assert info["paper"]["title"].startswith("A fixture") and "zoo analyze fixture_cka MODEL" in info["usage"][0]
    assert zoo.plugins() and next(s for s in zoo.plugins() if s.id == "fixture").tools == ("fixture_cka",)


def test_unknown_tools_are_named_with_suggestions():
    with pytest.raises(ToolNotFound, match="did you mean fixture_cka"):
        zoo.analyze("fixture_ckaa", np.zeros((4, 2)))
    with pytest.raises(ToolNotFound, match="'fixture_mlp' is a model, not a tool"):
        zoo.analyze("fixture_mlp", np.zeros((4, 2)))


def test_toolspec_validates_its_fields():
    with pytest.raises(ValueError, match="tool name 'Bad Name'"):
        ToolSpec(name="Bad Name", function="pkg.mod:fn")
    with pytest.raises(ValueError, match="function"):
        ToolSpec(name="ok", function="not a target")


def test_activations_record_named_layers_with_hooks_and_match_a_manual_forward():
    net, x = _net(), torch.rand(10, 1, 8, 8)
    acts = activations(net, x, layers=["1", "output"], labels=np.arange(10), batch_size=3)
    assert acts.names == ["1", "output"] and acts.n == 10 and acts["1"].shape == (10, 16)
    with torch.no_grad():
        hidden = net[1](net[0](x))
        np.testing.assert_allclose(acts["1"], hidden.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(acts["output"], net(x).numpy(), rtol=1e-5, atol=1e-6)  # batched vs whole
    default = activations(net, x)  # top-level children and the output
    assert default.names == ["0", "1", "2", "3", "output"] and "output" in layer_names(net)


def test_tokens_are_kept_or_pooled():
    layer = nn.Linear(4, 3)
    x = torch.rand(5, 7, 4)
    kept = activations(layer, x, layers="output")
    assert kept["output"].shape == (5, 7, 3)
    np.testing.assert_allclose(activations(layer, x, layers="output", pool="mean")["output"], kept["output"].mean(1),
                               rtol=1e-6)
    assert np.array_equal(kept.pooled("last")["output"], kept["output"][:, -1])


def test_bad_layers_and_bad_arrays_get_errors_that_name_the_requirement():
    with pytest.raises(ValueError, match="no layer 'blocks.0'.*its layers: 0, 1, 2, 3"):
        activations(_net(), torch.rand(2, 1, 8, 8), layers=["blocks.0"])
    with pytest.raises(ValueError, match="every layer must hold the same N inputs"):
        ActivationSet({"a": np.zeros((3, 2)), "b": np.zeros((4, 2))})
    with pytest.raises(ValueError, match="labels has shape"):
        ActivationSet({"a": np.zeros((3, 2))}, labels=np.zeros(4))
    nan = np.ones((5, 2))
    nan[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"1 NaN/inf values \(inputs \[2\]\)"):
        analyze("fixture_cka", {"a": nan, "b": np.ones((5, 2))})
    with pytest.raises(ValueError, match="needs at least 3"):
        analyze("fixture_cka", {"a": np.ones((2, 2)), "b": np.ones((2, 2))})
    two = ActivationSet({"a": np.zeros((3, 2)), "b": np.ones((3, 2))})
    assert two.select() == ["a", "b"] and two.select(["b", "a"]) == ["b", "a"] and two.select("a") == ["a"]
    with pytest.raises(ValueError, match=r"no layer \['c'\] in this ActivationSet \(it has \['a', 'b'\]\)"):
        two.select(["a", "c"])


def test_identical_representations_have_cka_one_and_the_result_is_plain_data(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(50, 8))
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    out = zoo.analyze("fixture_cka", {"a": a, "rotated": a @ q, "noise": rng.normal(size=(50, 8))}, out_dir=tmp_path)
    cka = np.array(out["cka"])
    assert abs(cka[0, 1] - 1) < 1e-9 and cka[0, 2] < 0.5  # CKA is invariant to rotations, low for unrelated noise
    assert json.loads(json.dumps(out)) == out and os.path.isfile(out["artifacts"]["cka"])


def test_analyze_runs_a_model_and_names_a_tool_option_it_does_not_take():
    out = zoo.analyze("fixture_cka", _net(), inputs=torch.rand(20, 1, 8, 8), layers=["1", "3"])
    assert out["layers"] == ["1", "3"] and len(out["cka"]) == 2
    with pytest.raises(ZooError, match="takes no such option"):
        zoo.analyze("fixture_cka", np.ones((4, 2)) + np.arange(4)[:, None], bogus=1)
    with pytest.raises(ValueError, match="needs inputs="):
        zoo.analyze("fixture_cka", _net())


def test_cli_lists_describes_and_analyzes(tmp_path):
    env = {**os.environ, "ZOO_NO_PLUGIN_CACHE": "1"}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "zoo.cli", *args], capture_output=True, text=True, env=env)

    assert "fixture_cka" in run("list", "--tools").stdout.split()
    assert "tool of plugin fixture" in run("info", "fixture_cka").stdout
    res = run("analyze", "fixture_cka", "fixture_mlp", "--layers", "1,3", "--n", "40", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["n"] == 40 and data["layers"] == ["1", "3"] and data["task"] == "digits_classify"
    assert os.path.isfile(data["result"]["artifacts"]["cka"])
    bad = run("analyze", "nope", "fixture_mlp")
    assert bad.returncode != 0 and "unknown tool 'nope'" in bad.stderr and "Traceback" not in bad.stderr


def test_the_conformance_kit_imports_every_tool_a_plugin_registers(monkeypatch):
    from zoo import registry, testing

    spec, plugin = registry.tool("fixture_cka")
    broken = ToolSpec(name=spec.name, function="zoo_fixture.no_such_module:cka", paper=spec.paper)
    monkeypatch.setattr(registry, "tool", lambda name: (broken, plugin))
    # before: check_plugin never looked at tools, and refused a plugin that registers only tools ("registers nothing")
    with pytest.raises(testing.ConformanceError, match="tool fixture_cka: importing zoo_fixture.no_such_module:cka"):
        testing.check_plugin(plugin, hub=False)


def test_zoo_activations_is_callable_even_when_the_module_was_imported_first():
    # importing the submodule first (as tool plugins do) binds zoo.activations to the MODULE; it must still work
    code = ("from zoo.activations import check_matrix\nimport torch, zoo\n"
            "acts = zoo.activations(torch.nn.Linear(3, 2), torch.rand(4, 3))\nprint(acts.names)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "['output']"
