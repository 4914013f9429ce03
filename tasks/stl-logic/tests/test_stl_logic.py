"""stl_logic: the tokenizer round trip, the seeded generator and base measure, robustness closed forms, the kernel's
exact properties, and metrics that separate right from wrong models."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo_task_stl_logic import semantics as S
from zoo_task_stl_logic import syntax as Y
from zoo_task_stl_logic import task as T
from zoo_task_stl_logic.baselines import KernelEmbedding, build_baseline

TINY = {"n_train": 150, "n_test": 40, "n_traj": 80, "n_readout": 40, "n_anchors": 16}


def test_tokens_and_strings_round_trip_on_generated_formulae():
    fs = S.sample_formulae(300, seed=3, n_vars=3)
    for f in fs:
        assert Y.from_tokens(Y.to_tokens(f)) == f and Y.from_string(Y.to_string(f)) == f
        assert Y.from_tokens(Y.decode_ids(Y.encode_batch([f], T.MAX_LEN)[0])) == f
    assert {t for f in fs for t in Y.to_tokens(f)} <= set(Y.VOCAB) and len(Y.VOCAB) < 100


@pytest.mark.parametrize("toks", [["always", "0", "5"], ["x0", ">=", "0.5", "x1"], ["and", "x0", ">=", "0.5"],
                                  [">=", "x0", "0.5"], ["eventually", "5", "5", "x0", ">=", "0.5"],
                                  ["until", "inf", "3", "x0", ">=", "0.5", "x0", "<=", "1.0"], []])
def test_invalid_token_sequences_are_rejected(toks):
    assert not Y.is_valid_tokens(toks)
    with pytest.raises(Y.STLSyntaxError):
        Y.from_tokens(toks)


def test_strings_parse_whitespace_and_rounding_and_reject_garbage():
    assert Y.from_string("always[0,5](x0>=0.54)") == ("always", 0, 5, ("atom", 0, ">=", 0.5))
    assert Y.from_string("( x0 <= 1.0 until[2,inf] x1 >= -0.3 )") == ("until", 2, None, ("atom", 0, "<=", 1.0),
                                                                     ("atom", 1, ">=", -0.3))
    for bad in ("x0 >= 0.5 and x1 <= 0.2", "always x0 >= 1", "<invalid> x0 >=", "( x0 >= 1.0 )", "not x0 >= 1.0"):
        with pytest.raises(Y.STLSyntaxError):
            Y.from_string(bad)


def test_generator_is_seeded_and_follows_its_parameters():
    a, b = S.sample_formulae(200, seed=0), S.sample_formulae(200, seed=0)
    assert a == b and a != S.sample_formulae(200, seed=1) and len(set(a)) == 200
    assert all(f[0] != "atom" and Y.depth(f) <= S.MAX_DEPTH and Y.size(f) <= S.MAX_TOKENS for f in a)
    leafy = S.sample_formulae(200, seed=0, leaf_prob=0.9)
    assert np.mean([Y.size(f) for f in leafy]) < np.mean([Y.size(f) for f in a])
    only_not = S.sample_formulae(20, seed=0, inner_probs=[1, 0, 0, 0, 0, 0], max_depth=2, distinct=False)
    assert all(f[0] == "not" for f in only_not)
    bounds = [(f[1], f[2]) for f in S.sample_formulae(300, seed=2) if f[0] in ("eventually", "always", "until")]
    assert all(0 <= lo < S.MAX_RANGE and (hi is None or lo < hi <= lo + S.MAX_RANGE) for lo, hi in bounds)
    assert 0.03 < np.mean([hi is None for _, hi in bounds]) < 0.2  # unbound_prob 0.1


def test_base_measure_total_variation_and_monotone_case():
    a, b = S.sample_trajectories(50, seed=4), S.sample_trajectories(50, seed=4)
    assert a.shape == (50, 2, S.POINTS) and np.array_equal(a, b)
    x = S.sample_trajectories(30, seed=0, mu1=2.0, sigma1=0.0)  # total variation exactly 2^2
    assert np.allclose(np.abs(np.diff(x, axis=-1)).sum(-1), 4.0)
    mono = S.sample_trajectories(30, seed=0, q=0.0)  # no sign flips: every trajectory monotone
    d = np.diff(mono, axis=-1)
    assert ((d >= 0).all(-1) | (d <= 0).all(-1)).all()


def _ramp(n=20):
    return np.arange(n, dtype=float)[None, None, :]  # x0(t) = t


def test_robustness_closed_forms_on_a_ramp():
    x, rho = _ramp(), lambda f: float(S.robustness(f, _ramp())[0, 0])
    ge, le = ("atom", 0, ">=", 3.0), ("atom", 0, "<=", 5.0)
    assert rho(ge) == -3.0 and rho(le) == 5.0 and rho(("not", ge)) == 3.0
    assert rho(("and", ge, le)) == -3.0 and rho(("or", ge, le)) == 5.0
    assert rho(("eventually", 2, 7, ge)) == 7 - 3 and rho(("always", 2, 7, ge)) == 2 - 3
    assert rho(("eventually", 0, None, ge)) == 19 - 3 and rho(("always", 4, None, ge)) == 4 - 3
    # (x <= 5) until[0,10] (x >= 3): max over t' of min(t' - 3, min_{t'' <= t'} 5 - t'') = min(t' - 3, 5 - t') -> 1 at t' = 4
    assert rho(("until", 0, 10, le, ge)) == 1.0
    assert rho(("until", 6, 10, le, ge)) == -1.0  # the left side must hold up to t' >= 6: 5 - 6
    assert rho(("eventually", 15, 30, ge)) == 19 - 3  # past the horizon the last sample is held
    r = S.robustness(("always", 0, 3, ge), x)[0]
    assert r.tolist()[:3] == [-3.0, -2.0, -1.0] and r[-1] == 19 - 3


def _brute(f, x, t):
    n, op = x.shape[-1], f[0]
    at = lambda g, u: _brute(g, x, min(u, n - 1))  # noqa: E731
    if op == "atom":
        return x[:, f[1], t] - f[3] if f[2] == ">=" else f[3] - x[:, f[1], t]
    if op == "not":
        return -at(f[1], t)
    if op in ("and", "or"):
        return (np.minimum if op == "and" else np.maximum)(at(f[1], t), at(f[2], t))
    window = range(t + f[1], t + (n - 1 if f[2] is None else f[2]) + 1)
    if op == "eventually":
        return np.max([at(f[3], u) for u in window], 0)
    if op == "always":
        return np.min([at(f[3], u) for u in window], 0)
    return np.max([np.minimum(at(f[4], u), np.min([at(f[3], w) for w in range(t, u + 1)], 0)) for u in window], 0)


def test_vectorised_robustness_equals_the_definition():
    x = S.sample_trajectories(6, seed=1, points=16)
    for f in S.sample_formulae(40, seed=5, max_range=6):
        r = S.robustness(f, x)
        for t in (0, 5):
            assert np.allclose(r[:, t], _brute(f, x, t)), Y.to_string(f)


def test_kernel_is_normalised_symmetric_and_positive_semidefinite():
    fs = S.sample_formulae(60, seed=0)
    r = S.robustness_matrix(fs, S.sample_trajectories(300, seed=0))
    for exp in (False, True):
        k = S.kernel(r, r, exp=exp)
        assert np.allclose(np.diag(k), 1.0) and np.allclose(k, k.T)
        assert np.linalg.eigvalsh(k).min() > -1e-8
    neg = S.robustness_matrix([("not", f) for f in fs[:5]], S.sample_trajectories(300, seed=0))
    assert np.allclose(np.diag(S.kernel(r[:5], neg)), -1.0)  # phi and not phi: opposite robustness


def test_embed_mode_separates_the_exact_kernel_from_syntax():
    d = T.dataset(0, **TINY)
    kern = KernelEmbedding(d.anchors, d.traj_independent)
    r = T.evaluate(kern, mode="embed", seed=0, baselines=["bag_of_tokens"], **TINY)
    assert r.metrics["spearman"] > 0.8 > r.baselines["bag_of_tokens"]["spearman"] + 0.3
    assert r.metrics["robustness_r2"] > 0.6 and r.metrics["satisfaction_acc"] > 0.85
    assert r.metrics["kernel_ms"] > 0 and r.config["n_train"] == TINY["n_train"]
    with pytest.raises(ValueError, match="not baselines of mode"):
        T.evaluate(kern, mode="embed", baselines=["nn_retrieval"], **TINY)


def test_metrics_on_known_answers():
    assert T.spearman(np.arange(5.0), np.arange(5.0) ** 3) == pytest.approx(1.0)
    z = np.random.default_rng(0).normal(size=(200, 4))
    y = z @ np.array([[1.0], [2.0], [0.0], [-1.0]]) + 3
    assert T.r2(T.ridge_readout(z, y, z, alpha=1e-9), y) == pytest.approx(1.0)


class _Oracle(torch.nn.Module):
    """Decodes the gold formula of each test embedding (looked up), or garbage."""

    input_kind = "embedding"

    def __init__(self, data, garbage=False):
        super().__init__()
        self.data, self.garbage = data, garbage

    def decode(self, emb):
        return ["x0 >= and" if self.garbage else Y.to_string(f) for f in self.data.test]


def test_invert_mode_scores_oracle_garbage_and_retrieval():
    d = T.dataset(0, **TINY)
    good = T.evaluate(_Oracle(d), mode="invert", seed=0, baselines=["nn_retrieval"], **TINY)
    assert good.metrics["validity"] == 1.0 and good.metrics["exact"] == 1.0
    assert good.metrics["kernel_sim"] == pytest.approx(1.0) and good.metrics["length_ratio"] == 1.0
    nn_row = good.baselines["nn_retrieval"]
    assert nn_row["validity"] == 1.0 and 0.3 < nn_row["kernel_sim"] < 1.0 and nn_row["exact"] == 0.0
    bad = T.score_inversion(_Oracle(d, garbage=True), d)
    assert bad["validity"] == 0.0 and bad["kernel_sim"] == 0.0


def test_contract_helpers_and_errors():
    ids = T.example_input()
    assert ids.shape == (2, 12) and ids[0, 0] == Y.BOS
    enc = build_baseline("random_encoder", seed=0, arch={"dim": 8, "d_model": 16, "heads": 2, "layers": 1})
    T.check_output(enc, enc(ids))
    with pytest.raises(ValueError, match="unknown options"):
        T.evaluate(enc, mode="embed", n_formulae=3)
    with pytest.raises(ValueError, match="takes 'embedding' models"):
        T.evaluate(enc, mode="invert")
