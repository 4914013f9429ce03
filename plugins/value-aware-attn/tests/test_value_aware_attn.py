"""value-aware-attn: the conformance kit, the tool's exact special cases, and value-aware <= top-r always."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_value_aware_attn.value_aware import attention_weights, compare, sparse_errors, top_r, value_aware_row

TINY = {"dim": 16, "depth": 1, "heads": 2, "block_size": 16}


def test_conformance(hub):
    check_plugin("value-aware-attn", overrides={"attention_probe_gpt": TINY})


def _qkv(seed=0, n=3, t=8, d=5):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, t, d)) for _ in range(3))


def test_r_equal_t_gives_zero_error_for_both():
    q, k, v = _qkv()
    res = compare(q, k, v, r=(8,), kernels=("softmax", "relu"), temperatures=(1.0,))
    for m in res.values():
        assert m["aware"] == pytest.approx(0.0, abs=1e-12) and m["oblivious"] == pytest.approx(0.0, abs=1e-12)


def test_identical_value_rows_make_both_equal():
    # every value row the same vector: any renormalised top-r keeps a V exactly, and the value-aware optimum too
    q, k, _ = _qkv(1)
    v = np.tile(np.array([1.0, -2.0, 0.5, 3.0, 0.0]), (3, 8, 1))
    res = compare(q, k, v, r=(2,), kernels=("softmax",), temperatures=(1.0,))["softmax@1/r=2"]
    assert res["aware"] == pytest.approx(res["oblivious"], abs=1e-6) and res["oblivious"] == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_value_aware_is_never_worse_than_top_r(seed):
    q, k, v = _qkv(seed, t=10)
    for kernel, tau in (("softmax", 0.5), ("softmax", 4.0), ("relu", 1.0), ("quadratic", 1.0)):
        a = attention_weights(q, k, kernel, tau)
        for r in (1, 3):
            # a small exhaustive limit forces the swap search on the long rows: still never worse
            for limit in (3000, 5):
                e = sparse_errors(a, v, r, exhaustive_limit=limit)
                assert e["aware"] <= min(e["oblivious"], e["oblivious_raw"]) + 1e-9


def test_value_aware_beats_top_r_where_values_cancel():
    # a = (0.4, 0.3, 0.3) over values +1, -1, 0 (1-d): a V = 0.1; top-1 keeps 0.4 * (+1), error 0.3; the best single
    # weight on any value reproduces 0.1 exactly
    a = np.array([0.4, 0.3, 0.3])
    vs = np.array([[1.0], [-1.0], [0.0]])
    approx, exact = value_aware_row(a, vs, 1)
    assert exact and float((approx @ vs)[0]) == pytest.approx(0.1)
    assert float((top_r(a, 1, False) @ vs)[0]) == pytest.approx(0.4)


def test_exhaustive_and_swap_search_agree_on_a_small_problem():
    rng = np.random.default_rng(3)
    a = rng.dirichlet(np.ones(9))
    vs = rng.standard_normal((9, 6))
    y = a @ vs
    exact, _ = value_aware_row(a, vs, 3, exhaustive_limit=10_000)
    search, flag = value_aware_row(a, vs, 3, exhaustive_limit=1)
    assert not flag and np.sum((y - search @ vs) ** 2) <= np.sum((y - exact @ vs) ** 2) * 1.05 + 1e-12


def test_kernels_are_causal_row_distributions():
    q, k, _ = _qkv(2)
    for kernel in ("softmax", "relu", "quadratic"):
        a = attention_weights(q, k, kernel)
        assert np.allclose(np.triu(a, 1), 0) and (a >= 0).all()
        sums = a.sum(-1)
        assert np.all(np.isclose(sums, 1) | np.isclose(sums, 0))
    cold, hot = attention_weights(q, k, "softmax", 0.25), attention_weights(q, k, "softmax", 4.0)
    assert cold.max(-1)[:, 1:].mean() > hot.max(-1)[:, 1:].mean()  # higher temperature: less skewed


def test_tool_through_analyze_and_model_qkv(tmp_path):
    torch.manual_seed(0)
    model = zoo.create("attention_probe_gpt", **TINY)
    ids = torch.randint(0, 97, (2, 8))
    qkv = model.qkv(ids)
    q, k, v = qkv[0]
    assert q.shape == (2, 2, 8, 8)
    # the captured q, k, v reproduce the block's attention output
    attn = model.blocks[0].attn
    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    x = model.blocks[0].norm1(model.tok(ids) + model.pos(torch.arange(8)))
    assert torch.allclose(attn.out(y.transpose(1, 2).reshape(2, 8, 16)), attn(x), atol=1e-5)
    flat = {n: t.transpose(1, 2).reshape(2, 8, 16) for n, t in zip("qkv", qkv[0], strict=True)}
    res = zoo.analyze("value-aware-attn", flat, heads=2, r=[2], kernels=["softmax"], temperatures=[1.0],
                      out_dir=str(tmp_path))
    direct = compare(q, k, v, r=(2,), kernels=("softmax",), temperatures=(1.0,))
    assert res["results"]["softmax@1/r=2"]["aware"] == pytest.approx(direct["softmax@1/r=2"]["aware"], rel=1e-4)
    assert (tmp_path / "value_aware_errors.png").exists()


def test_quick_reproduction_value_aware_below_top_r():
    from zoo.claims import run_claim
    from zoo_value_aware_attn.reproduce import REPRODUCTION

    rows = run_claim(REPRODUCTION, quick=True).rows
    for src in ("syn", "lm"):
        key = f"{src}:softmax@1/r=4"
        aware = rows["value_aware"][key]["mean"]
        assert aware < rows["top_r"][key]["mean"] and aware < rows["top_r_renorm"][key]["mean"]


def test_tool_finds_module_paths_and_names_a_missing_layer():
    q, k, v = _qkv(4)
    acts = {"blocks.0.attn.q": q, "blocks.0.attn.k": k, "blocks.0.attn.v": v}
    res = zoo.analyze("value-aware-attn", acts, r=[2], kernels=["relu"])
    assert res["results"]["relu/r=2"]["aware"] == pytest.approx(compare(q, k, v, r=(2,), kernels=("relu",))["relu/r=2"]["aware"])
    with pytest.raises(ValueError, match="needs a layer 'v'"):
        zoo.analyze("value-aware-attn", {"q": q, "k": k}, r=[2])
