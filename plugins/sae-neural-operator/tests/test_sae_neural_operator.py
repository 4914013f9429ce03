"""sae-neural-operator: the conformance kit, top-k sparsity, SAE-NO across resolutions, planted-dictionary recovery."""
from __future__ import annotations

import math

import pytest
import torch

from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_sae_neural_operator.concepts import fit, recovery, sparse_concepts
from zoo_sae_neural_operator.model import PRESETS, lifted_sae, sae, sae_no

TINY = {"sae_vector": {"resolution": 16, "codes": 4}, "sae_lifted": {"resolution": 16, "codes": 4},
        "sae_no": {"codes": 4, "lift": 2, "modes": 4}}


def test_conformance(hub):
    check_plugin("sae-neural-operator", overrides=TINY)


def test_presets_are_matched_in_parameters():
    counts = [count_params(b()) for b in (sae, lifted_sae, sae_no)]
    assert max(counts) <= 1.1 * min(counts), counts
    assert sae(preset="paper").resolution == PRESETS["sae"]["paper"]["resolution"]
    with pytest.raises(ValueError, match="preset"):
        sae_no(preset="huge")


def test_topk_codes_have_exactly_k_nonzeros():
    torch.manual_seed(0)
    x = torch.randn(32, 1, 64)
    with torch.no_grad():
        codes = sae(activation="topk", k=3, codes=16)(x)[0]
        dense = sae(activation="relu", codes=16)(x)[0]
    assert ((codes > 0).sum(-1) == 3).all()  # 16 random pre-activations: always at least 3 positive here
    assert (dense > 0).sum(-1).float().mean() > 5  # the ReLU SAE is not k-sparse by itself


def test_sae_no_runs_at_2x_and_its_codes_match_the_1x_codes():
    torch.manual_seed(0)
    model = sae_no(codes=4, lift=4, modes=8)
    t1, t2 = torch.arange(64) / 64, torch.arange(128) / 128
    f = lambda t: torch.sin(2 * math.pi * t) + 0.5 * torch.cos(6 * math.pi * t + 1)  # noqa: E731 - band-limited
    with torch.no_grad():
        z1, r1 = model(f(t1)[None, None])
        z2, r2 = model(f(t2)[None, None])
    assert z2.shape == (1, 4, 128)
    torch.testing.assert_close(z2[..., ::2], z1, atol=1e-5, rtol=1e-4)  # the same function, the same codes
    torch.testing.assert_close(r2[..., ::2], r1, atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="resolution"):
        sae()(f(t2)[None, None])  # a vector SAE cannot


def test_sae_no_atoms_are_band_limited_functions():
    torch.manual_seed(0)
    model = sae_no(codes=4, lift=2, modes=6)
    spectrum = torch.fft.rfft(model.atoms(64), dim=-1).abs()
    assert spectrum[..., 6:].max() < 1e-5 < spectrum[..., :6].max()  # the smooth-concept bias of truncated modes
    vector = torch.fft.rfft(sae().atoms(), dim=-1).abs()
    assert vector[..., 6:].max() > 0.1  # a vector SAE's atoms have no such limit


def test_recovery_is_shift_invariant_only_when_asked():
    truth = sparse_concepts(1, resolution=64).dictionary
    rolled = torch.roll(truth, 9, -1)
    assert recovery(rolled, truth).min() > 0.999
    assert recovery(rolled, truth, shift=False).mean() < 0.9


def test_planted_dictionary_is_recovered_by_the_fit():
    data = sparse_concepts(1000, resolution=64, concepts=4, active=1, shift=False, noise=0.02)
    torch.manual_seed(0)
    model = sae(resolution=64, codes=8)
    out = fit(model, data, steps=300, seed=0, every=300, shift=False, lr=1e-2)
    assert out["recovery"][0] < 0.5 and out["recovery"][-1] > 0.9, out["recovery"]
