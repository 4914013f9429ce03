"""vsa_bench: seeded data, the three contracts, the baselines' exact cases, and metrics that can fail."""
from __future__ import annotations

import pytest
import torch

from zoo_task_vsa_bench import data, task
from zoo_task_vsa_bench.baselines import ClassicResonator, FPESum, MapIBundle, build_baseline, decode_states
from zoo_task_vsa_bench.contract import Factorizer, FunctionEncoder


def test_data_is_seeded_and_consistent():
    a = data.factorization_problems(5, 3, 8, 64, seed=1, flip=0.1)
    b = data.factorization_problems(5, 3, 8, 64, seed=1, flip=0.1)
    assert torch.equal(a.composite, b.composite) and torch.equal(a.indices, b.indices)
    clean = data.factorization_problems(5, 3, 8, 64, seed=1)
    flipped = (a.composite != clean.composite).float().mean()
    assert 0.03 < float(flipped) < 0.2  # about 10% of the signs
    s = data.symbol_sets(50, 8, 100, seed=0)
    for i in range(50):
        A, B = set(s.sets_a[i].tolist()), set(s.sets_b[i].tolist())
        assert len(A) == len(B) == 8 and len(A & B) == int(s.overlap[i])
        assert set(s.members[i].tolist()) <= A and not set(s.others[i].tolist()) & (A | B)
    with pytest.raises(ValueError, match="alphabet"):
        data.symbol_sets(2, 50, 100, seed=0)
    t = data.sample_points(200, 500, seed=0, sampling="skewed")
    assert float((t < 0.25).mean()) == pytest.approx(0.5, abs=0.03)  # t = u^2: half the points below 1/4


def test_classic_resonator_counts_iterations_and_resolves_sign_ambiguity():
    p = data.factorization_problems(4, 3, 1, 64, seed=0)
    idx, used = ClassicResonator().factorize(p.composite, list(p.codebooks), iters=9)
    assert used.tolist() == [1, 1, 1, 1] and not idx.any()  # one codeword: the start is the fixed point
    p = data.factorization_problems(6, 3, 8, 1024, seed=2)
    cbs = list(p.codebooks)
    truth = [cb[p.indices[:, f]] for f, cb in enumerate(cbs)]
    # (-x1)(-x2)x3 is the same composite: a network may settle there, and decoding must ignore the sign
    assert torch.equal(decode_states([-truth[0], -truth[1], truth[2]], cbs), p.indices)
    idx, used = ClassicResonator(update="concurrent").factorize(p.composite, cbs, iters=50)
    assert torch.equal(idx, p.indices)


def test_factorize_accuracy_drops_with_codebook_size():
    kw = dict(mode="factorize", D=256, F=3, n=30, seed=0, iters=60)
    easy = task.evaluate(ClassicResonator(), M=4, **kw)
    hard = task.evaluate(ClassicResonator(), M=64, **kw)
    assert easy.metrics["accuracy"] == 1.0 and easy.baselines["classic_resonator"] == easy.metrics
    assert hard.metrics["accuracy"] < 0.5 and hard.metrics["iterations"] > easy.metrics["iterations"]
    assert hard.metrics["max_iters"] == 60 and hard.metrics["converged"] < 1.0


def test_membership_error_follows_the_gaussian_estimate():
    r = task.evaluate(MapIBundle(), mode="membership", D=256, set_size=32, n=200, seed=0, baselines=[]).metrics
    # noise std sqrt(k d) = 90.5 against a d/2 = 128 margin: Phi(-1.41) = 0.079
    assert r["membership_error"] == pytest.approx(0.079, abs=0.02)
    sweep = task.evaluate(MapIBundle(), mode="intersection", D=[64, 1024], n=100, seed=0, baselines=[]).metrics
    assert sweep["intersection_mae_d1024"] < sweep["intersection_mae_d64"] / 2


def test_invariance_metrics_and_mask():
    class IgnoresMask(FunctionEncoder):
        def encode(self, x, y, mask):
            return FPESum(dim=256).encode(x, y, torch.ones_like(mask))

    good = task.evaluate(FPESum(dim=256), mode="invariance", n=8, seed=0, baselines=[]).metrics
    bad = task.evaluate(IgnoresMask(), mode="invariance", n=8, seed=0, baselines=[]).metrics
    assert good["mask_cos"] == pytest.approx(1.0, abs=1e-5) and bad["mask_cos"] < 0.9
    assert good["cos_density"] > good["cos_different"] and "decode_rel_l2" in good and "decode_rel_l2" not in bad
    with pytest.raises(ValueError, match="dim=128"):
        task.evaluate(FPESum(dim=256), mode="invariance", D=128, n=4, seed=0, baselines=[])


def test_errors_name_the_fix():
    with pytest.raises(ValueError, match="run mode='factorize'"):
        task.evaluate(ClassicResonator(), mode="membership")
    with pytest.raises(TypeError, match="vsa_kind"):
        task.evaluate(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="choose from"):
        build_baseline("nope")

    class Broken(Factorizer):
        def factorize(self, s, codebooks, iters):
            return torch.zeros(s.shape[0], len(codebooks), dtype=torch.long)

    with pytest.raises(TypeError, match="iterations"):
        task.evaluate(Broken(), D=64, n=2, baselines=[])


def test_example_input_and_check_output():
    x = task.example_input()
    for model in (ClassicResonator(), MapIBundle(), FPESum(dim=64)):
        task.check_output(model, model(x))
    with pytest.raises(AssertionError, match="factorize"):
        task.check_output(ClassicResonator(), torch.zeros(2, 3))
    with pytest.raises(AssertionError, match="complex"):
        task.check_output(FPESum(dim=64), torch.zeros(2, 64))
    assert set(task.describe()) == set(task.MODES)
    with pytest.raises(ValueError, match="unknown option"):
        task.describe(foo=1)
