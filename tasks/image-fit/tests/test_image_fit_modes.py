"""image_fit (issue 14): the lr a caller sets reaches a model's own fit; the gray, superres and 1-D modes."""
import pytest
import torch

from zoo_nn.inr import Siren
from zoo_task_image_fit import image_fit as T


class _Const(torch.nn.Module):
    """A model trained by its own ``fit``: a constant, set to the mean; records the options it got."""

    default_lr = 0.5

    def __init__(self):
        super().__init__()
        self.v = torch.nn.Parameter(torch.zeros(1))
        self.got: list[dict] = []

    def forward(self, x):
        return self.v.expand(x.shape[0], 1)

    def _set(self, signal):
        with torch.no_grad():
            self.v.fill_(float(signal.values.mean()))
        return {"steps": 1, "seconds_per_step": 0.0}


class WithLr(_Const):
    def fit(self, signal, *, steps, budget_s, seed, progress, lr=None, lr_decay=None):
        self.got.append({"lr": lr, "lr_decay": lr_decay})
        return self._set(signal)


class WithoutLr(_Const):
    def fit(self, signal, *, steps, budget_s, seed, progress):
        self.got.append({})
        return self._set(signal)


def test_own_fit_gets_the_callers_lr():
    s = T.make_signal("camera", 8)
    m = WithLr()
    T.fit(m, s, steps=3, lr=0.01, lr_decay=0.1)
    T.evaluate(m, size=8, steps=3, lr=0.02, baselines=[])
    T.fit(m, s, steps=3)  # unset: the model's fit chooses
    assert m.got == [{"lr": 0.01, "lr_decay": 0.1}, {"lr": 0.02, "lr_decay": None}, {"lr": None, "lr_decay": None}]


def test_own_fit_without_lr_refuses_an_lr_it_cannot_honour():
    s = T.make_signal("camera", 8)
    m = WithoutLr()
    with pytest.raises(ValueError, match="lr=0.01 cannot be honoured"):
        T.fit(m, s, steps=3, lr=0.01)
    with pytest.raises(ValueError, match="lr=0.01"):
        T.evaluate(m, size=8, steps=3, lr=0.01, baselines=[])
    assert m.got == []  # refused before training
    T.fit(m, s, steps=3)  # no lr set, or the model's own: trained as before
    T.fit(m, s, steps=3, lr=WithoutLr.default_lr)
    assert T.evaluate(m, size=8, steps=3, baselines=[]).metrics["psnr_train"] > 5 and len(m.got) == 3


def test_plain_fit_defaults_to_the_models_lr():
    s = T.make_signal("camera", 8)
    torch.manual_seed(0)
    a = Siren(hidden=8, layers=1)
    b = Siren(hidden=8, layers=1)
    b.load_state_dict(a.state_dict())
    b.default_lr = 1e-2  # an instance attribute: only this model's default
    fa, fb = T.fit(a, s, steps=3), T.fit(b, s, steps=3)
    assert fa["losses"][0] == fb["losses"][0] and fa["losses"][-1] != fb["losses"][-1]


def test_gray_mode_is_the_luminance():
    from skimage.color import rgb2gray

    g = T.load_image("astronaut", 16, gray=True)
    rgb = T.load_image("astronaut", 16)
    assert g.shape == (16, 16, 1) and rgb.shape == (16, 16, 3)
    # resizing is linear, so the luminance of the resized image equals the resized luminance up to clipping
    assert torch.allclose(g[..., 0], torch.from_numpy(rgb2gray(rgb.numpy())).float(), atol=2e-3)
    assert torch.equal(T.load_image("camera", 16, gray=True), T.load_image("camera", 16))  # gray stays gray
    s = T.make_signal("astronaut", 8, gray=True)
    assert s.channels == 1 and s.test_values.shape == (256, 1)
    r = T.evaluate(Siren(hidden=8, layers=1), image="astronaut", size=8, steps=1, gray=True, baselines=[])
    assert r.config["gray"] is True and T.describe(image="astronaut", gray=True)["gray"] is True


def test_superres_trains_on_half_the_grid_and_scores_the_full_one():
    s = T.make_signal("camera", 16, mode="superres")
    assert s.shape == (8, 8, 1) and s.test_shape == (16, 16, 1) and s.mode == "superres"
    assert torch.equal(s.values.reshape(s.shape), T.load_image("camera", 8))
    assert torch.equal(s.test_values.reshape(s.test_shape), T.load_image("camera", 16))
    assert torch.equal(s.coords, T.coord_grid(8, 8)) and torch.equal(s.test_coords, T.coord_grid(16, 16))
    with pytest.raises(ValueError, match="even"):
        T.make_signal("camera", 15, mode="superres")
    torch.manual_seed(0)
    r = T.evaluate(Siren(hidden=16, layers=2), size=16, steps=2, mode="superres", baselines=["siren"])
    assert r.n == 256 and r.config["size"] == 16 and r.config["mode"] == "superres"
    assert {"psnr_test", "ssim_test"} <= set(r.metrics)
    d = T.describe(size=16, steps=2, mode="superres", baselines=["siren"])
    assert {k: d[k] for k in ("size", "mode", "steps")} == {k: r.config[k] for k in ("size", "mode", "steps")}
    assert "8x8" in d["train"] and "16x16" in d["test"]


def test_1d_mode_fits_a_row_of_a_bundled_image(tmp_path):
    s = T.make_signal("camera", 32, mode="1d")
    assert s.coords.shape == (32, 1) and s.test_coords.shape == (64, 1) and s.in_features == 1
    row = T.load_row("camera", 32)
    assert torch.equal(s.values, row) and float(row.std()) > 0.05  # a real signal, not a constant
    # the row at 64 samples, averaged in pairs, is close to the row at 32 (same signal, anti-aliased)
    assert float((T.load_row("camera", 64).reshape(32, 2, 1).mean(1) - row).abs().mean()) < 0.05
    torch.manual_seed(0)
    m = Siren(in_features=1, hidden=32, layers=2)
    r = T.evaluate(m, size=32, steps=200, mode="1d", out_dir=str(tmp_path))
    assert set(r.baselines) == {"siren", "relu-ff"} and "ssim_train" not in r.metrics
    assert r.metrics["psnr_train"] > 20 and r.n == 64
    assert (tmp_path / "siren.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="1d"):
        T.make_signal("camera", 8, mode="audio")


def _set_model(size):
    from zoo_task_image_fit import signal_set

    torch.manual_seed(0)
    return signal_set.MLPAutoencoder((size, size, 1), hidden=16, latent_dim=4)


def test_dataset_mode_is_the_signal_set_protocol():
    # issue 14: the catalog's "image_fit dataset mode on load_digits" (GON, VaMoH) was refused as an unknown mode
    from zoo_task_image_fit import signal_set

    assert "dataset" in T.MODES and "dataset" not in T.SIGNAL_MODES
    got = T.evaluate(_set_model(8), mode="dataset", dataset="digits", size=8, steps=20, seed=1, baselines=["ae"])
    want = signal_set.evaluate(_set_model(8), dataset="digits", size=8, steps=20, seed=1, baselines=["ae"])
    timing = ("seconds_per_step",)
    assert {k: v for k, v in got.metrics.items() if k not in timing} == {k: v for k, v in want.metrics.items() if k not in timing}
    assert got.baselines["ae"]["psnr_test"] == want.baselines["ae"]["psnr_test"] and got.n == want.n
    assert got.task == "signal_set_fit" and got.config == {**want.config, "mode": "dataset"}
    assert got.metrics["psnr_test"] > 5 and got.metrics["steps"] == 20
    faces = T.evaluate(_set_model(8), mode="dataset", dataset="faces", size=8, steps=2, baselines=[])
    assert faces.config["dataset"] == "faces" and faces.config["n_test"] == 20
    d = T.describe(mode="dataset", dataset="faces", size=8, steps=20)
    assert d == {**signal_set.describe(dataset="faces", size=8, steps=20), "mode": "dataset", "protocol": d["protocol"]}
    assert T.describe(mode="dataset")["size"] == 16 and T.describe()["size"] == 64  # each protocol's own default


def test_dataset_mode_refuses_one_image_options():
    m = _set_model(16)
    for bad in ({"lr": 1e-3}, {"gray": True}, {"image": "coins"}, {"budget_s": 1.0}, {"out_dir": "x"}):
        with pytest.raises(ValueError, match=f"no {next(iter(bad))}"):
            T.evaluate(m, mode="dataset", steps=1, **bad)
    with pytest.raises(ValueError, match="mode='dataset'"):
        T.evaluate(m, dataset="digits", steps=1)
    with pytest.raises(ValueError, match="signal_set"):
        T.make_signal("camera", 8, mode="dataset")
    with pytest.raises(ValueError, match="signal set"):
        T.evaluate(m, mode="dataset", dataset="mnist", steps=1)
