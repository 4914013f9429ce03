"""clip-second-order-lens: conformance; the second-order effect is exactly what flows through the later heads (a
frozen-pattern forward pass reproduces it to float64 precision, and it vanishes when those heads write nothing, where
the first-order effect does not); known answers of the statistics (a planted selective one-direction effect, a dense
isotropic one, OMP recovering planted text atoms); validation; the tool on arrays, on the hooked model, and through
the CLI; and, with the trained model cached, whether ablating the top second-order neurons beats random neurons
(an expected failure on the tiny model: recorded as not reproduced)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_clip_second_order_lens.lens import directions, lens_statistics, omp, selectivity
from zoo_clip_second_order_lens.model import TinyCLIP, second_order_effects, tokenize

TINY = {"dim": 16, "depth": 2, "heads": 2, "mlp": 8, "embed": 8, "text_depth": 1}


def test_conformance(hub):
    check_plugin("clip-second-order-lens", overrides={"tiny_clip_digits": TINY})


def _double_model(seed=0, depth=3):
    torch.manual_seed(seed)
    m = TinyCLIP(**{**TINY, "depth": depth}).double().eval()
    with torch.no_grad():
        for p in m.parameters():  # move away from the ones/zeros LayerNorm init so every term matters
            p.add_(0.2 * torch.randn_like(p))
    return m


@pytest.mark.parametrize(("depth", "layer"), [(2, 0), (3, 1)])
def test_effect_equals_the_frozen_pattern_forward_difference(depth, layer):
    """With attention patterns and LayerNorm scales frozen and the later MLPs silenced, the embedding is linear in a
    neuron's activation: zeroing neuron n changes it by exactly its first-order plus second-order effect (one later
    layer, so no head-to-head third-order path exists)."""
    m = _double_model(depth=depth)
    with torch.no_grad():
        for blk in m.blocks[layer + 1:]:
            blk.fc2.weight.zero_()
            blk.fc2.bias.zero_()
        x = torch.rand(6, 1, 8, 8, dtype=torch.float64)
        recs: list = []
        emb = m.image_features(x, records=recs)
        eff = second_order_effects(m, x, layers=[layer], records=recs)
        for n in (0, 5):
            mask = torch.zeros(8, dtype=torch.bool)
            mask[n] = True
            zero = torch.zeros(17, 8, dtype=torch.float64)
            emb0 = m.image_features(x, frozen=recs, ablate={layer: (mask, zero)})
            total = (eff["first_order"][:, 0, n] + eff["second_order"][:, 0, n]) * emb.norm(dim=-1)[:, None]
            assert torch.allclose(emb - emb0, total, atol=1e-12, rtol=0)
            assert (emb - emb0).abs().max() > 1e-3 and eff["second_order"][:, 0, n].abs().max() > 1e-4


def test_second_order_vanishes_when_later_heads_write_nothing():
    m = _double_model(1, depth=2)
    x = torch.rand(5, 1, 8, 8, dtype=torch.float64)
    with torch.no_grad():
        m.blocks[1].attn.out.weight.zero_()  # W_O = 0 in the only later layer
        eff = second_order_effects(m, x)
    assert eff["second_order"].abs().max() == 0 and eff["first_order"].abs().max() > 1e-3


def test_uniform_attention_closed_form():
    """Later layer with W_Q = W_K = 0 (attention 1/T everywhere), LN gains 1: phi_n = sum_h P C W_VO^h C w_n *
    (1/T) sum_i p_n(i) / sigma_1(i) / sigma_post / |embedding|."""
    m = _double_model(2, depth=2)
    with torch.no_grad():
        d = m.blocks[1].attn.qkv.in_features
        m.blocks[1].attn.qkv.weight[: 2 * d].zero_()
        m.blocks[1].attn.qkv.bias[: 2 * d].zero_()
        for ln in (m.blocks[1].ln1, m.ln_post):
            ln.weight.fill_(1.0)
        x = torch.rand(4, 1, 8, 8, dtype=torch.float64)
        recs: list = []
        emb = m.image_features(x, records=recs)
        eff = second_order_effects(m, x, records=recs)
        p, sig1, sp = recs[0]["post_gelu"], recs[1]["sigma1"][..., 0], recs[-1]["sigma_post"][:, 0]
        t = p.shape[1]
        n = 3
        w = m.blocks[0].fc2.weight[:, n]
        w = w - w.mean()
        vo = sum(m.blocks[1].attn.w_vo(h) for h in range(2)) @ w
        direction = (vo - vo.mean()) @ m.proj
        coef = (p[:, :, n] / sig1).sum(1) / t / sp / emb.norm(dim=-1)
        assert torch.allclose(eff["second_order"][:, 0, n], coef[:, None] * direction[None], atol=1e-12)


def _planted(seed=0, n=400, d=16):
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    sel = np.zeros((n, d))
    hot = rng.choice(n, 6, replace=False)
    sel[hot] = np.outer(rng.uniform(2, 3, 6), u)
    sel += 0.001 * rng.standard_normal((n, d))
    dense = rng.standard_normal((n, d))
    return np.stack([sel, dense], 1), u, hot


def test_planted_selective_effect_is_found_with_its_direction():
    e, u, hot = _planted()
    frac, mask = selectivity(e)
    assert frac[0] <= 6 / 400 and set(np.nonzero(mask[:, 0])[0]) <= set(hot)
    assert frac[1] > 0.6  # a dense isotropic effect is significant almost everywhere
    v, ex = directions(e, mask)
    assert abs(v[0] @ u) > 0.999 and v[0] @ u > 0 and ex[0] > 0.99
    st = lens_statistics(e)
    assert st["explained"][0] > 0.99 and st["explained"][1] < 0.2


def test_omp_recovers_planted_text_atoms():
    rng = np.random.default_rng(3)
    dic = rng.standard_normal((40, 32))
    dic /= np.linalg.norm(dic, axis=1, keepdims=True)
    y = 0.8 * dic[3] - 0.5 * dic[17] + 0.3 * dic[29]
    idx, coef, resid = omp(y, dic, atoms=3)
    assert set(idx.tolist()) == {3, 17, 29} and resid < 1e-20
    assert np.allclose(dict(zip(idx.tolist(), coef, strict=True)).get(17), -0.5)


def test_validation_names_the_requirement():
    e, _, _ = _planted()
    with pytest.raises(ValueError, match="at least 10"):
        lens_statistics(e[:5])
    with pytest.raises(ValueError, match="NaN"):
        bad = e.copy()
        bad[0, 0, 0] = np.nan
        lens_statistics(bad)
    with pytest.raises(ValueError, match="D >= 2"):
        lens_statistics(e[:, :, :1])
    with pytest.raises(ValueError, match="energy must be"):
        selectivity(e, energy=1.5)
    with pytest.raises(ValueError, match=r"\(K, 16\)"):
        omp(e[0, 0], np.ones((4, 3)))
    with pytest.raises(ValueError, match="same joint space"):
        zoo.analyze("second-order-lens", {"phi": e}, texts=np.ones((4, 3)))
    with pytest.raises(ValueError, match="words names 2 texts"):
        zoo.analyze("second-order-lens", {"phi": e}, texts=np.ones((4, 16)), words=["a", "b"])
    with pytest.raises(ValueError, match="no later attention heads"):
        second_order_effects(TinyCLIP(**TINY).eval(), torch.rand(2, 1, 8, 8), layers=[1])
    with pytest.raises(ValueError, match="vocabulary"):
        tokenize(["a photo of a cat"])
    with pytest.raises(ValueError, match="images must be"):
        TinyCLIP(**TINY).eval()(torch.rand(2, 1, 7, 7))
    with pytest.raises(ValueError, match="depth must be at least 2"):
        TinyCLIP(**{**TINY, "depth": 1})


def test_tool_on_raw_arrays(tmp_path):
    e, u, _ = _planted()
    rng = np.random.default_rng(1)
    dic = rng.standard_normal((12, 16))
    dic[4] = u
    res = zoo.analyze("second-order-lens", {"phi": e}, texts=dic, words=[f"w{i}" for i in range(12)], atoms=2,
                      describe=2, out_dir=str(tmp_path))
    layer = res["layers"]["phi"]
    assert layer["n_neurons"] == 2 and layer["selectivity"][0] <= 6 / 400
    top = {t["neuron"]: t for t in layer["top_neurons"]}
    assert top[0]["texts"][0] == "w4" and top[0]["coefficients"][0] == pytest.approx(1.0, abs=1e-3)
    assert (tmp_path / "second_order_lens.png").exists()
    one = zoo.analyze("second-order-lens", e[:, 0])["layers"]["x"]  # one neuron as (N, D)
    assert one["n_neurons"] == 1 and one["explained"][0] > 0.99


def test_tool_through_the_hooked_model_and_the_cli(capsys):
    from zoo.cli import main
    from zoo_task_digits.task import probe_data

    xs, ys = probe_data(40)
    model = zoo.create("tiny_clip_digits", **TINY)
    res = zoo.analyze("second-order-lens", model, inputs=xs, labels=ys, layers=["lens"], describe=1)
    assert res["layers"]["lens"]["n_neurons"] == 8 and res["layers"]["lens"]["n_images"] == 40
    assert main(["analyze", "second-order-lens", "tiny_clip_digits", "--layers", "lens", "--n", "30",
                 "--set", "dim=16", "--set", "depth=2", "--set", "heads=2", "--set", "mlp=8", "--set", "embed=8",
                 "--set", "text_depth=1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"]["layers"]["lens"]["n_images"] == 30


def test_lens_hook_matches_direct_computation_and_forward_is_zero_shot():
    m = TinyCLIP(**TINY).eval()
    x = torch.rand(7, 1, 8, 8)
    from zoo.activations import activations

    acts = activations(m, x, layers=["lens", "output"])
    eff = second_order_effects(m, x)["second_order"].flatten(1, 2)
    assert np.allclose(acts["lens"], eff.numpy(), atol=1e-6)
    with torch.no_grad():
        logits = m(x)
        manual = m.logit_scale.exp() * m.encode_image(x) @ m.class_embeddings().T
    assert torch.allclose(logits, manual, atol=1e-5) and logits.shape == (7, 10)


def _cached_trained():
    import os
    from pathlib import Path

    from safetensors.torch import load_file

    from zoo_clip_second_order_lens.model import build, cache_path

    name = cache_path(0).name
    roots = [Path(os.path.expanduser("~/.cache")) / "zoo", Path(os.environ.get("ZOO_CACHE_DIR") or "~")]
    path = next((r / "clip_second_order_lens" / name for r in roots
                 if (r / "clip_second_order_lens" / name).exists()), None)
    if path is None:
        pytest.skip("trained tiny CLIP (seed 0) not cached; `zoo reproduce clip-second-order-lens` trains it")
    m = build(0)
    m.load_state_dict(load_file(str(path)))
    return m.eval().requires_grad_(False)


@pytest.mark.xfail(reason="written before the measurement and kept unchanged: on the trained tiny digits CLIP "
                   "(seed 0, 0.944 zero-shot) mean-ablating the top-24 second-order neurons costs no zero-shot "
                   "accuracy (0.944 -> 0.944), no more than 24 random ones (0.942): the paper's ablation result is "
                   "not reproduced at this scale (see the README)", strict=False)
def test_ablating_top_second_order_neurons_beats_random():
    from zoo_clip_second_order_lens.model import zero_shot_accuracy
    from zoo_task_digits.task import load_split

    m = _cached_trained()
    x, _, xt, yt = load_split("digits")
    with torch.no_grad():
        eff = second_order_effects(m, x[:400])
    norms = eff["second_order"].norm(dim=-1).mean(0)  # (L, M)
    means = eff["activations"].mean(0)
    top = torch.argsort(norms.flatten(), descending=True)[:24]
    rand = torch.as_tensor(np.random.default_rng(0).choice(norms.numel(), 24, replace=False))

    def abl(idx):
        out = {}
        for layer in range(norms.shape[0]):
            mask = torch.zeros(norms.shape[1], dtype=torch.bool)
            mask[idx[idx // norms.shape[1] == layer] % norms.shape[1]] = True
            out[layer] = (mask, means[layer])
        return out

    clean = zero_shot_accuracy(m, xt, yt)
    assert clean > 0.85
    assert clean - zero_shot_accuracy(m, xt, yt, abl(top)) > clean - zero_shot_accuracy(m, xt, yt, abl(rand)) + 0.03
