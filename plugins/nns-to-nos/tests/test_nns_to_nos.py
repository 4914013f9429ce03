"""nns-to-nos: the conformance kit, the recipe's layers, and what tells a converted operator from the original U-Net."""
from __future__ import annotations

import copy
import math

import pytest
import torch

import zoo
from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_nn.operators import UNet1d, UNet2d
from zoo_nns_to_nos.model import PRESETS, OperatorUNet, convert_unet, fno_1d, fno_2d, unet_operator_1d
from zoo_nns_to_nos.recipe import GridScale, KernelInterpConv, fourier_resample, kernel_taps, linear_resample

TINY_FNO = {"modes": 4, "width": 4, "layers": 2, "projection": 8}
TINY_UNET = {"width": 2, "depth": 2}


def test_conformance(hub):
    check_plugin("nns-to-nos", overrides={"fno_1d": TINY_FNO, "fno_2d": TINY_FNO,
                                          "unet_operator_1d": TINY_UNET, "unet_operator_2d": TINY_UNET})


def _band_limited(n: int, modes: int = 6, batch: int = 3, seed: int = 0) -> torch.Tensor:
    """Random periodic functions with frequencies below ``modes`` sampled at ``j / n``: (batch, 1, n)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(n) / n
    k = torch.arange(1, modes)
    amp, phase = torch.randn(batch, modes - 1, generator=g) / k, 2 * math.pi * torch.rand(batch, modes - 1, generator=g)
    x = (amp[:, :, None] * torch.sin(2 * math.pi * k[None, :, None] * t + phase[:, :, None])).sum(1)
    return (x + torch.randn(batch, 1, generator=g))[:, None]


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def test_presets_follow_the_papers():
    assert (fno_1d(preset="paper").modes, fno_1d(preset="paper").width, fno_1d(preset="paper").layers) == (16, 64, 4)
    assert (fno_2d(preset="paper").modes, fno_2d(preset="paper").width) == (12, 32)
    assert fno_1d(width=8).width == 8 and fno_1d().width == PRESETS["fno_1d"]["cpu"]["width"]
    with pytest.raises(ValueError, match="preset"):
        fno_1d(preset="huge")


@torch.no_grad()
def test_fno_runs_at_every_grid_and_is_consistent_across_resolutions():
    torch.manual_seed(0)
    net = fno_1d().eval()
    x = _band_limited(64)
    outs = {n: net(fourier_resample(x, n)) for n in (64, 128, 256)}
    assert {n: tuple(y.shape) for n, y in outs.items()} == {n: (3, 1, n) for n in (64, 128, 256)}
    # the same function at 2x / 4x: the finer outputs hold the coarse output's values at the shared points
    assert _rel(outs[128][..., ::2], outs[64]) < 0.02 and _rel(outs[256][..., ::4], outs[64]) < 0.02


def test_fourier_and_linear_resampling():
    x = _band_limited(32, modes=10)
    assert torch.allclose(fourier_resample(fourier_resample(x, 96), 32), x, atol=1e-5)  # exact for band-limited
    assert torch.allclose(fourier_resample(x, 64)[..., ::2], x, atol=1e-5)
    low = fourier_resample(x, 16)  # coarsening drops the modes a 16-point grid cannot hold
    assert _rel(fourier_resample(low, 32), x) > 0.01  # modes 8-9 of x (amplitude ~1/k) are gone
    assert torch.allclose(fourier_resample(fourier_resample(low, 32), 16), low, atol=1e-5)
    assert torch.equal(linear_resample(x, 16), x[..., ::2])  # halving keeps every other grid point j / n
    y = linear_resample(x, 64, periodic=True)
    assert torch.equal(y[..., ::2], x) and torch.allclose(y[..., -1], (x[..., -1] + x[..., 0]) / 2)
    assert linear_resample(torch.zeros(1, 2, 6, 10), [3, 20]).shape == (1, 2, 3, 20)


def test_kernel_taps_are_the_kernel_resampled_with_quadrature_weights():
    assert torch.equal(kernel_taps(5, 1.0), torch.eye(5))
    for k, s in ((3, 2.0), (3, 3.0), (5, 4.0), (5, 1.5)):
        taps = kernel_taps(k, s)
        assert taps.shape[0] % 2 == 1 and torch.allclose(taps, taps.flip(0).flip(1))  # centred, symmetric
        # each stencil entry's weight is spread over the finer taps and kept (exactly on integer refinements)
        assert torch.allclose(taps.sum(0), torch.ones(k), atol=1e-6 if s.is_integer() else 0.15)
    assert torch.allclose(kernel_taps(3, 2.0)[:, 1], torch.tensor([0, 0, 0.25, 0.5, 0.25, 0, 0]))  # the hat at h/2
    with pytest.raises(ValueError, match="odd"):
        kernel_taps(4, 2.0)


@torch.no_grad()
def test_a_converted_convolution_computes_the_same_integral_operator_on_a_finer_grid():
    # a smoothing kernel followed by a difference kernel: an operator with a physical length scale
    conv = torch.nn.Conv1d(1, 2, 3, padding=1, padding_mode="circular")
    conv.weight.copy_(torch.tensor([[[0.25, 0.5, 0.25]], [[-32.0, 0.0, 32.0]]]))
    scale = GridScale(1)
    op = KernelInterpConv(conv, scale)
    x = _band_limited(64, modes=5)
    assert torch.equal(op(x), conv(x))
    for s in (2, 4):
        scale.value = (float(s),)
        fine = fourier_resample(x, 64 * s)
        want = fourier_resample(conv(x), 64 * s)
        assert _rel(op(fine), want) < 0.03  # the converted layer: the same function, sampled finer
        assert _rel(conv(fine), want) > 0.4  # the original stencil covers 1/s of the length: another operator


@torch.no_grad()
def test_converted_unet_output_at_2x_is_its_interpolated_1x_output_the_original_is_not():
    errors = {"converted": [], "original": []}
    for seed in range(3):
        torch.manual_seed(seed)
        unet = UNet1d(width=8, circular=True).eval()
        op = convert_unet(copy.deepcopy(unet), 64).eval()
        x = _band_limited(64, modes=12, seed=seed)
        for name, net in (("converted", op), ("original", unet)):
            errors[name].append(_rel(net(fourier_resample(x, 128)), fourier_resample(net(x), 128)))
    assert all(c < 0.5 * o for c, o in zip(errors["converted"], errors["original"], strict=True)), errors


def test_conversion_keeps_the_parameters():
    unet = UNet2d(width=4, depth=2)
    op = convert_unet(copy.deepcopy(unet), 32)
    assert count_params(op) == count_params(unet)
    op.unet.load_state_dict(unet.state_dict())  # same modules, same names: an original's weights load as they are
    assert unet_operator_1d(width=4, base_res=64).resample == "linear"
    assert unet_operator_1d(width=4, circular=True).resample == "fourier"
    assert OperatorUNet(UNet1d(width=2, depth=1), 64, resample="fourier").resample == "fourier"
    with pytest.raises(ValueError, match="resample"):
        OperatorUNet(UNet1d(width=2, depth=1), 64, resample="cubic")
    x = torch.randn(2, 1, 48, 40)
    assert op(x).shape == (2, 1, 48, 40)


def test_float16_storage_round_trips_through_save_and_load(tmp_path):
    torch.manual_seed(0)
    model = zoo.create("fno_1d", weights_dtype="float16", **TINY_FNO)
    state = model.state_dict()
    assert all(v.dtype == torch.float16 for v in state.values())
    assert state["spectral.0.weight"].shape[-1] == 2  # complex weights stored as (real, imag)
    zoo.save_pretrained(model, tmp_path / "fno")
    again = zoo.create(f"local-dir:{tmp_path / 'fno'}", pretrained=True)
    assert again.spectral[0].weight.dtype == torch.complex64
    x = _band_limited(64)
    with torch.no_grad():
        assert _rel(again(x), model(x)) < 1e-2  # half-precision weights, float32 compute


@pytest.mark.parametrize(("name", "problem"), [("fno_1d.burgers", "burgers"), ("fno_2d.darcy", "darcy")])
def test_pretrained_snapshot_loads_and_reaches_its_card_error(name, problem):
    import json
    from importlib.resources import files

    from zoo_task_operator_learn import data, task

    card = json.loads((files("zoo_nns_to_nos") / "weights" / name / "config.json").read_text())["metrics"]
    model = zoo.create(name, pretrained=True).eval()
    assert model.zoo.tag == name.split(".")[1] and next(model.parameters()).dtype != torch.float16
    res = int(card["train_res"])
    scale = card.get("target_scale")
    if scale is None:  # a card from before the recipe recorded it: the RMS of the training targets, as the task takes it
        u = data.load(problem, split="train", n=int(card["n_train"]), resolution=res).u
        scale = float((u.astype("float64") ** 2).mean() ** 0.5)
    errors = {}
    for r, key in ((res, "rel_l2"), (2 * res, "rel_l2_2x")):
        d = data.load(problem, split="test", n=20, resolution=r)
        a = (torch.from_numpy(d.a) - card["input_mean"]) / card["input_std"]
        with torch.no_grad():  # the model predicts u / target_scale (the task's scaling of the targets)
            errors[key] = float(task.rel_l2(model(a) * scale, torch.from_numpy(d.u)).mean())
    # 20 of the card's 100 (Burgers) / 50 (Darcy) test functions: within 30% of the card's mean, far below an
    # untrained model's ~1
    for key, value in errors.items():
        assert value < 1.3 * card[key] and value < 0.5, (key, value, card[key])
