import pytest
import torch

from zoo import registry
from zoo.task import count_params
from zoo_task_image_fit import signal_set as task


def test_load_set_split_is_seeded_disjoint_and_in_range():
    a = task.load_set("digits", 16, n_train=20, n_test=10, seed=0)
    b = task.load_set("digits", 16, n_train=20, n_test=10, seed=0)
    c = task.load_set("digits", 16, n_train=20, n_test=10, seed=1)
    assert a.train.shape == (20, 16, 16, 1) and a.test.shape == (10, 16, 16, 1)
    assert torch.equal(a.train, b.train) and not torch.equal(a.train, c.train)
    assert float(a.train.min()) >= 0 and float(a.train.max()) <= 1
    flat_tr, flat_te = a.train.reshape(20, -1), a.test.reshape(10, -1)
    assert torch.cdist(flat_tr, flat_te).min() > 0  # no held-out image is a training image
    assert torch.equal(a.coords, task.coord_grid(16, 16))


def test_faces_and_native_digits():
    f = task.load_set("faces", 25)
    assert f.train.shape == (80, 25, 25, 1) and f.test.shape == (20, 25, 25, 1)
    from sklearn.datasets import load_digits

    d = task.load_set("digits", 8, n_train=5, n_test=5)
    raw = torch.tensor(load_digits().images / 16.0, dtype=torch.float32)
    assert any(torch.allclose(d.train[0, ..., 0], r) for r in raw)  # size 8: the original pixels
    with pytest.raises(ValueError):
        task.load_set("faces", 25, n_train=90, n_test=20)
    with pytest.raises(ValueError):
        task.load_set("mnist")


def test_baseline_sizes_and_fit_reduces_error():
    s = task.load_set("digits", 8, n_train=64, n_test=32)
    ae = task.build_baseline("ae", params=3000, data=s, latent_dim=8)
    ae2 = task.build_baseline("ae-2x", params=3000, data=s, latent_dim=8)
    assert abs(count_params(ae) - 3000) / 3000 < 0.1 and abs(count_params(ae2) - 6000) / 6000 < 0.1
    before = task.score(ae, s)["mse_test"]
    fig = ae.fit(s, steps=60, seed=0)
    assert len(fig["losses"]) == 60
    assert task.score(ae, s)["mse_test"] < before


def test_contract_and_spec():
    spec = registry.task("signal_set_fit")
    assert spec.baselines == ("ae", "ae-2x")
    x = task.example_input()
    ae = task.MLPAutoencoder((8, 8, 1), 8, 4)
    task.check_output(ae, ae(x))
    with pytest.raises(AssertionError):
        task.check_output(ae, ae(x)[:1])


def test_evaluate_returns_model_and_baseline_rows():
    s = task.load_set("digits", 8, n_train=32, n_test=16)
    torch.manual_seed(0)
    model = task.MLPAutoencoder((8, 8, 1), 16, 4)
    r = task.evaluate(model, steps=5, signal_set=s)
    assert r.task == "signal_set_fit" and set(r.baselines) == {"ae", "ae-2x"}
    assert {"mse_test", "psnr_test", "params", "steps"} <= set(r.metrics)
    assert r.baselines["ae-2x"]["params"] > r.baselines["ae"]["params"]
    with pytest.raises(ValueError):
        task.evaluate(model, budget_s=1.0, signal_set=s)


def test_describe_is_the_protocol_evaluate_runs():
    torch.manual_seed(0)
    model = task.MLPAutoencoder((8, 8, 1), 16, 4)
    r = task.evaluate(model, dataset="digits", size=8, steps=2, seed=3)
    d = task.describe(dataset="digits", size=8, steps=2)
    keys = ("dataset", "size", "n_train", "n_test", "steps")
    assert {k: d[k] for k in keys} == {k: r.config[k] for k in keys}
    assert r.n == d["n_test"] == 256 and set(d["baselines"]) == set(r.baselines)
    assert task.describe()["steps"] == task.DEFAULT_STEPS and task.describe(dataset="faces")["n_train"] == 80
    # the baselines train as described: Adam at the stated lr on minibatches of the stated size
    ae = d["baselines"]["ae"]
    assert (ae["lr"], ae["batch_size"]) == (task.MLPAutoencoder.default_lr, task.BATCH_SIZE)
    s = task.load_set("digits", 8, n_train=200, n_test=2)
    seen = []
    base = task.build_baseline("ae", params=3000, data=s, latent_dim=4)
    base.encoder.register_forward_pre_hook(lambda m, args: seen.append(args[0].shape[0]))
    base.fit(s, steps=2)
    assert seen == [ae["batch_size"]] * 2
    with pytest.raises(ValueError, match="params="):
        task.build_baseline("ae")


class _PerSignalCodes(torch.nn.Module):
    """A per-signal method in miniature: no trainable parameters, one stored code of 40 numbers per signal."""

    latent_dim = 8

    def stored_params(self, signal_set: task.SignalSet) -> int:
        return 40 * len(signal_set.train)

    def fit(self, signal_set, *, steps=None, seed=0, progress=None):
        return {}

    def reconstruct(self, images):
        return images.mean(0, keepdim=True).expand_as(images)


def test_baselines_are_sized_from_what_a_per_signal_model_stores():
    s = task.load_set("digits", 8, n_train=64, n_test=8)
    model = _PerSignalCodes()
    assert count_params(model) == 0 and task.stored_params(model, s) == 40 * 64
    r = task.evaluate(model, steps=1, signal_set=s)
    assert r.metrics["params"] == 0 and r.metrics["stored_params"] == 2560
    # sized from the declared 2,560 stored numbers, not from 0 trainable parameters (one hidden unit)
    assert abs(r.baselines["ae"]["params"] - 2560) / 2560 < 0.1
    assert abs(r.baselines["ae-2x"]["params"] - 5120) / 5120 < 0.1
    # an amortised model declares nothing: its trainable parameters are what it stores
    ae = task.MLPAutoencoder((8, 8, 1), 16, 4)
    assert task.stored_params(ae, s) == count_params(ae)
