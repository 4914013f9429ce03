import math

import torch

from zoo.claims import run_claim
from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_doh_hypernet.baselines import siren_width
from zoo_doh_hypernet.model import DOH
from zoo_doh_hypernet.reproduce import LATENTS, REPRODUCTION
from zoo_task_image_fit import signal_set as task

TINY = {"latent_dim": 8, "hidden": 4, "layers": 2, "inner_steps": 2}


def test_conformance(hub):
    check_plugin("doh-hypernet", overrides={"doh_siren": TINY})


def test_no_trainable_shared_parameters_and_fixed_seeded_projections():
    a, b, c = DOH(**TINY), DOH(**TINY), DOH(**TINY, seed=1)
    assert count_params(a) == 0  # decoder-only: nothing shared is trained
    assert torch.equal(a.P0_w, b.P0_w) and not torch.equal(a.P0_w, c.P0_w)
    assert a.P0_w.shape == (4 * 2, 8) and a.P2_b.shape == (1, 8)
    assert a.target_params == (2 * 4 + 4) + (4 * 4 + 4) + (4 + 1)


def test_weights_are_scaled_random_projections_of_the_latent():
    m = DOH(latent_dim=16, hidden=4, layers=2)
    z = torch.randn(3, 16)
    (w0, b0), (w1, _), _ = m.weights(z)
    assert torch.allclose(w0, (z @ m.P0_w.T).reshape(3, 4, 2) * (1 / 2) / math.sqrt(3))  # first layer: U(-1/in, 1/in) std
    assert torch.allclose(w1, (z @ m.P1_w.T).reshape(3, 4, 4) * (math.sqrt(6 / 4) / 30) / math.sqrt(3))
    assert torch.allclose(b0, (z @ m.P0_b.T) * (1 / math.sqrt(2)) / math.sqrt(3))


def test_decode_is_the_generated_siren():
    m = DOH(latent_dim=16, hidden=4, layers=2)
    z, coords = torch.randn(2, 16), torch.rand(5, 2) * 2 - 1
    out = m.decode(z, coords)
    for i in range(2):
        (w0, b0), (w1, b1), (w2, b2) = [(w[i], b[i]) for w, b in m.weights(z)]
        h = torch.sin(30 * (coords @ w0.T + b0))
        h = torch.sin(30 * (h @ w1.T + b1))
        assert torch.allclose(out[i], h @ w2.T + b2, atol=1e-5)


def test_latent_optimisation_lowers_the_error_and_only_the_latent_changes():
    m = DOH(latent_dim=32, hidden=8, layers=2, inner_steps=40)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    x = torch.rand(2, 6, 6, 1)
    _, losses = m.encode(x)
    assert losses[-1] < losses[0]
    assert all(torch.equal(before[k], v) for k, v in m.state_dict().items())
    assert m.memory_bytes() == 4 * 32 + 8


def test_quick_reproduction_measures_every_latent_size():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert set(r.table) == {f"doh m={m}" for m in LATENTS} | {f"siren <= doh m={m} bytes" for m in LATENTS}
    assert [r.table[f"doh m={m}"]["bytes_per_signal"] for m in LATENTS] == [4 * m + 8 for m in LATENTS]
    # equal bytes: each SIREN is the widest that fits in D'OH's bytes per signal
    for m in LATENTS:
        siren = r.table[f"siren <= doh m={m} bytes"]["bytes_per_signal"]
        assert 4 * m + 8 - siren < 4 * (4 * siren_width(m + 2, at_most=True) + 8) and siren <= 4 * m + 8
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    # each check compares two latent sizes over the same target SIREN: different generated weights, different PSNR
    assert r.per_seed["doh m=128"]["psnr"] != r.per_seed["doh m=64"]["psnr"]
    assert r.per_seed["doh m=256"]["psnr"] != r.per_seed["siren <= doh m=256 bytes"]["psnr"]
    assert [c["check"] for c in r.checks] == [f"psnr: doh m={b} - doh m={a} >= 0"
                                              for a, b in zip(LATENTS[:-1], LATENTS[1:], strict=True)] + [
        f"psnr: doh m={m} - siren <= doh m={m} bytes >= 0" for m in LATENTS]


def test_signal_set_baselines_are_sized_from_the_stored_latents_not_zero_parameters():
    s = task.load_set("digits", 8, n_train=64, n_test=4)
    m = DOH(latent_dim=32, hidden=4, layers=2, inner_steps=2)
    assert count_params(m) == 0 and m.stored_params(s) == 64 * 32 == task.stored_params(m, s)
    r = task.evaluate(m, steps=2, signal_set=s)
    assert r.metrics["stored_params"] == 2048
    # before: sized from 0 trainable parameters, the autoencoders had one hidden unit (about 260 parameters)
    assert abs(r.baselines["ae"]["params"] - 2048) / 2048 < 0.1
    assert abs(r.baselines["ae-2x"]["params"] - 4096) / 4096 < 0.1


def test_pretrained_tag_is_unpinned_and_its_recipe_resolves():
    from zoo import registry
    from zoo.factory import resolve_target

    w = registry.catalog().models["doh_siren"][0].weights["digits"]
    assert (w.repo, w.recipe) == ("zoo-models/doh-siren-digits", "zoo_doh_hypernet.train:digits")
    assert w.revision == "main" and not w.files  # unpinned: no weights pushed to a public Hub yet
    assert callable(resolve_target(w.recipe))
