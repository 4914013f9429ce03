"""Devices (issue 20): ``create(device=)``, ``zoo eval/bench --device``, tasks that run where the model is, and the
conformance kit on a device. This machine has no GPU, so the CUDA paths are checked for their refusals here and run
for real by ``benchmarks/gpu/run.sh`` on a GPU machine (results in benchmarks/RESULTS.md)."""
import json
import os
import subprocess
import sys

import pytest
import torch

import zoo
from zoo import bench as zbench
from zoo.errors import DeviceUnavailable
from zoo.task import model_device, resolve_device, to_model_device

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")


def test_create_on_cpu_and_model_device():
    model = zoo.create("fixture_mlp", device="cpu")
    assert model_device(model) == torch.device("cpu") and model.zoo.name == "fixture_mlp"
    assert model_device(torch.nn.ReLU()) == torch.device("cpu")  # nothing to place: the CPU
    x = torch.zeros(2, 3)
    assert to_model_device(model, x) is x  # a no-op where the model already is


@no_cuda
def test_cuda_without_a_gpu_is_refused_before_anything_is_built(monkeypatch):
    import zoo.factory as factory

    def must_not_build(*a, **k):
        raise AssertionError("built a model for a device that is not there")

    monkeypatch.setattr(factory, "_create", must_not_build)
    with pytest.raises(DeviceUnavailable, match="sees no CUDA GPU; use device='cpu'"):
        zoo.create("fixture_mlp", device="cuda")
    with pytest.raises(DeviceUnavailable, match="sees no CUDA GPU"):
        zoo.evaluate("fixture_mlp", device="cuda:1", steps=1)


def test_malformed_and_unsupported_devices_are_named():
    with pytest.raises(DeviceUnavailable, match="'gpu0' is not a device name"):
        resolve_device("gpu0")
    with pytest.raises(DeviceUnavailable, match="zoo runs models on 'cpu', 'cuda' or 'mps'"):
        resolve_device("meta")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


def test_evaluate_on_cpu_by_name_and_by_module_gives_the_same_result():
    by_name = zoo.evaluate("fixture_mlp", device="cpu", steps=3, baselines=["mlp-ln-relu"])
    torch.manual_seed(0)
    model = zoo.create("fixture_mlp")
    by_module = zoo.evaluate(model, device=torch.device("cpu"), steps=3, baselines=["mlp-ln-relu"])
    assert by_name.metrics["accuracy"] == by_module.metrics["accuracy"]
    assert by_name.baselines["mlp-ln-relu"]["accuracy"] == by_module.baselines["mlp-ln-relu"]["accuracy"]


@no_cuda
def test_bench_with_a_missing_device_fails_before_any_model_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(zbench, "run_model", lambda *a, **k: pytest.fail("a model ran"))
    with pytest.raises(DeviceUnavailable):
        zbench.bench("digits_classify", models=["fixture_mlp"], quick=True, out_dir=tmp_path, device="cuda")
    assert not list(tmp_path.iterdir())


def test_cpu_bench_rows_keep_their_keys():
    # a CPU run's protocol is the one written before devices were an option, so committed leaderboards stay valid
    assert zbench._row_key("fixture_mlp", {"seeds": [0]}) == zbench._row_key("fixture_mlp", {"seeds": [0]})


@no_cuda
def test_cli_names_the_device_problem_and_reports_the_device():
    env = {**os.environ, "ZOO_NO_PLUGIN_CACHE": "1"}
    bad = subprocess.run([sys.executable, "-m", "zoo.cli", "eval", "fixture_mlp", "--device", "cuda", "--steps", "1"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "sees no CUDA GPU" in bad.stderr and "Traceback" not in bad.stderr
    ok = subprocess.run([sys.executable, "-m", "zoo.cli", "create", "fixture_mlp", "--device", "cpu"],
                        capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["device"] == "cpu"


def test_conformance_kit_on_the_cpu_as_a_device(monkeypatch):
    from zoo.testing import check_model

    monkeypatch.setenv("ZOO_TEST_DEVICE", "cpu")  # what `pytest --zoo-device cpu` sets: the device pass runs too
    check_model("fixture_mlp", hub=False)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (benchmarks/gpu/run.sh runs it there)")
def test_digits_on_cuda_trains_where_the_model_is():
    res = zoo.evaluate("fixture_mlp", device="cuda", steps=20, baselines=["mlp-ln-relu"])
    assert res.metrics["accuracy"] > 0.2 and res.baselines["mlp-ln-relu"]["accuracy"] > 0.2


def test_example_input_is_given_the_model_when_the_task_asks_for_it(monkeypatch):
    """Tasks whose models take several input kinds (operator_learn: grids or point sets) get the model checked."""
    from types import SimpleNamespace

    import zoo.testing as kit

    def by_kind(model=None):
        return getattr(model, "input_kind", "grid")

    targets = {"t:plain": lambda: "plain", "t:by_kind": by_kind}
    monkeypatch.setattr(kit, "resolve_target", lambda target, *a: targets[target])
    monkeypatch.setattr(kit.registry, "task", lambda name: SimpleNamespace(example_input=f"t:{name}"))
    assert kit.example_input("plain", SimpleNamespace(input_kind="points")) == "plain"
    assert kit.example_input("by_kind", SimpleNamespace(input_kind="points")) == "points"
    assert kit.example_input("by_kind") == "grid" and kit.example_input(None) is None
