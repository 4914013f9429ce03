import math

import torch

from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_task_image_fit.signal_set import SignalSet, coord_grid, load_set
from zoo_vamoh.encoder import scaled_anchors
from zoo_vamoh.flow import FlowPrior, PlanarFlow
from zoo_vamoh.model import VaMoH, gaussian_log_prob, mixture_terms, random_masks
from zoo_vamoh.reproduce import REPRODUCTION

TINY = {"latent_dim": 4, "components": 2, "hidden": 4, "hyper_hidden": [8], "cat_hidden": [8], "enc_width": 8}


def test_conformance(hub):
    check_plugin("vamoh", overrides={"vamoh_ff": TINY})


def _planar(dim: int, seed: int, push: float = 0.0) -> PlanarFlow:
    torch.manual_seed(seed)
    f = PlanarFlow(dim)
    with torch.no_grad():
        f.u.normal_()
        f.b.normal_()
        f.u.add_(-push * f.w)  # w^T u very negative: the u_hat reparameterisation must keep it invertible
    return f


def test_planar_flow_is_invertible_with_exact_log_det():
    for seed, push in ((0, 0.0), (1, 5.0)):
        f = _planar(3, seed, push)
        e = torch.randn(64, 3, dtype=torch.float64)
        f = f.double()
        z, logdet = f(e)
        back, logdet_inv = f.inverse(z)
        assert torch.allclose(back, e, atol=1e-10) and torch.allclose(logdet, logdet_inv, atol=1e-10)
        fwd = lambda v, f=f: f(v.unsqueeze(0))[0][0]
        for i in range(4):  # log |det J| against the autograd Jacobian
            jac = torch.autograd.functional.jacobian(fwd, e[i])
            assert math.isclose(torch.linalg.slogdet(jac).logabsdet.item(), logdet[i].item(), abs_tol=1e-9)
        assert f._u_hat()[1].item() > -1.0


def test_fresh_flow_prior_is_standard_normal_and_log_prob_matches_change_of_variables():
    p = FlowPrior(5, layers=3)
    z = torch.randn(7, 5)
    normal = torch.distributions.Normal(0.0, 1.0).log_prob(z).sum(-1)
    assert torch.allclose(p.log_prob(z), normal, atol=1e-5)  # u_hat = 0: the identity
    for i, layer in enumerate(p.layers):
        with torch.no_grad():
            layer.u.normal_(generator=torch.Generator().manual_seed(i))
    e = torch.randn(7, 5)
    x, total = e, torch.zeros(7)
    for layer in p.layers:
        x, ld = layer(x)
        total = total + ld
    expect = torch.distributions.Normal(0.0, 1.0).log_prob(e).sum(-1) - total
    assert torch.allclose(p.log_prob(x), expect, atol=1e-4)


def test_mixture_terms_on_known_inputs():
    assert math.isclose(gaussian_log_prob(torch.tensor(0.3), torch.tensor(0.1), 0.1).item(),
                        -2.0 - math.log(0.1) - 0.5 * math.log(2 * math.pi), rel_tol=1e-6)
    log_lik = torch.tensor([[-1.0, -3.0]])
    prior = torch.log(torch.tensor([[0.25, 0.75]]))
    exact = torch.logsumexp(log_lik + prior, -1)  # log(0.25 e^-1 + 0.75 e^-3)
    assert math.isclose(exact.item(), math.log(0.25 * math.exp(-1) + 0.75 * math.exp(-3)), rel_tol=1e-6)
    resp = log_lik + prior - exact  # the true responsibilities: the bound is tight
    rec, kl = mixture_terms(log_lik, prior, resp)
    assert torch.allclose(rec - kl, exact, atol=1e-6)
    rec, kl = mixture_terms(log_lik, prior, torch.tensor([[5.0, -5.0]]))  # any other q: strictly below
    assert (rec - kl).item() < exact.item() - 1e-3 and kl.item() > 0


def test_decode_is_the_mixture_mean_and_likelihood_the_mixture_density():
    torch.manual_seed(0)
    m = VaMoH(**TINY).eval()
    z, coords, y = torch.randn(3, 4), coord_grid(4, 4), torch.rand(3, 16, 1)
    means = m.component_means(z, coords)  # (3, 16, 1, 2)
    pi = torch.softmax(m.mixture_logits(z, coords), -1)
    assert means.shape == (3, 16, 1, 2) and ((means > 0) & (means < 1)).all()
    assert torch.allclose(m.decode(z, coords), (means * pi.unsqueeze(2)).sum(-1), atol=1e-6)
    dens = (pi * torch.exp(-0.5 * ((y - means[:, :, 0]) / 0.1) ** 2) / (0.1 * math.sqrt(2 * math.pi))).sum(-1)
    assert torch.allclose(m.log_likelihood(z, coords, y), torch.log(dens), atol=1e-4)


def test_fresh_hypernetworks_generate_z_dependent_distinct_inrs():
    torch.manual_seed(0)
    m = VaMoH()
    means = m.component_means(torch.randn(64, 16), coord_grid(8, 8))[..., 0, :]  # (64, 64 px, K)
    assert means.std(0).mean() > 0.02  # the generated functions depend on z from the start
    assert (means[..., 0] - means[..., 1]).abs().mean() > 0.02  # and the components differ
    head = m.hypernets[0][-1]
    assert torch.allclose(head.bias[:16 * 64].abs().max(), torch.tensor(1 / 8.0), atol=0.01)  # nn.Linear(64, 16) init


def test_encoder_and_observed_elbo_ignore_unobserved_pixels():
    torch.manual_seed(0)
    m = VaMoH(**TINY)
    coords = coord_grid(8, 8)
    x = torch.rand(2, 64, 1)
    mask = random_masks(2, 64, 0.75, torch.Generator().manual_seed(3))
    mask[:, 0] = False
    y = x.clone()
    y[~mask] = 1.0 - y[~mask]
    assert torch.allclose(m.encode(coords.expand(2, -1, -1), x, mask)[0], m.encode(coords.expand(2, -1, -1), y, mask)[0])
    torch.manual_seed(1)
    a = m.elbo(coords, x, mask)["elbo"]
    torch.manual_seed(1)
    b = m.elbo(coords, y, mask)["elbo"]
    assert torch.allclose(a, b, atol=1e-5)
    torch.manual_seed(1)
    assert not torch.allclose(a, m.elbo(coords, y, mask, score_all=True)["elbo"])


def test_default_training_scores_only_the_observed_pixels(monkeypatch):
    # the paper's objective: one step of fit on two sets that differ only at hidden pixels moves nothing differently
    import zoo_vamoh.model as vm

    x = load_set("digits", 8, n_train=8, n_test=2).train
    hidden = torch.zeros(8, 64, dtype=torch.bool)
    hidden[:, ::3] = True
    monkeypatch.setattr(vm, "random_masks", lambda b, n, r, g: ~hidden[:b])
    y = x.clone().reshape(8, 64, 1)
    y[hidden] = 1.0 - y[hidden]
    after = []
    for data in (x, y.reshape(x.shape)):
        torch.manual_seed(0)
        m = VaMoH(**TINY, batch_size=8)
        assert m.score_all is False
        m.fit(SignalSet("digits", data, data[:2], coord_grid(8, 8)), steps=1)
        after.append(torch.nn.utils.parameters_to_vector(m.parameters()))
    assert torch.allclose(after[0], after[1])


def test_encoder_anchors_scale_with_the_image_and_cover_every_pixel():
    assert scaled_anchors(8) == (4, 2) and scaled_anchors(25) == (13, 7)
    for size in (8, 25):
        m = VaMoH(**TINY, image_size=size)
        first = m.encoder.convs[0]
        assert [c.anchors.shape[0] for c in m.encoder.convs] == [a * a for a in scaled_anchors(size)]
        near = torch.cdist(first.anchors, coord_grid(size, size)).topk(first.neighbors, largest=False).indices
        assert len(set(near.flatten().tolist())) == size * size  # (4, 2) fixed anchors saw 144 of 625 at 25x25
    assert [c.anchors.shape[0] for c in VaMoH(**TINY, anchors=(3, 1)).encoder.convs] == [9, 1]


def test_short_training_reconstructs_distinct_digits_better_than_the_mean_image():
    s = load_set("digits", 8, n_train=256, n_test=32)
    torch.manual_seed(0)
    m = VaMoH()
    fig = m.fit(s, steps=200)
    assert len(fig["losses"]) == 200 and fig["losses"][-1] < fig["losses"][0]
    x = s.test
    rec = m.reconstruct(x).clamp(0, 1)
    mse, mean_mse = ((rec - x) ** 2).mean(), ((s.train.mean(0) - x) ** 2).mean()
    assert mse < 0.75 * mean_mse  # not collapsed to the mean image
    dist = torch.cdist(rec.flatten(1), rec.flatten(1))[~torch.eye(len(x), dtype=torch.bool)]
    assert dist.min() > 1e-2 and rec.std(0).mean() > 0.3 * x.std(0).mean()  # different digits, different outputs
    assert m.sample(3).shape == (3, 8, 8, 1)


def test_quick_reproduction_measures_vamoh_against_its_rivals():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert {"vamoh", "gon_implicit", "ae", "ae-2x", "bilinear", "mean image"} == set(r.table) and r.seeds == [0, 1]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    assert r.per_seed["bilinear"]["sr8to16_vs_bilinear"] == [0.0, 0.0]  # the 16x16 reference is the bilinear resize
    p = r.table["vamoh"]["params"]
    assert abs(r.table["ae-2x"]["params"] - 2 * p) / (2 * p) < 0.1
    # different methods in-painting the same observed pixels
    for rival in ("gon_implicit", "ae", "ae-2x"):
        assert r.per_seed["vamoh"]["inpaint_mse"] != r.per_seed[rival]["inpaint_mse"]
    rivals = ("gon_implicit", "ae", "ae-2x")  # VaMoH's MSE <= 1.05 x each: log margin -ln 1.05
    assert [c["check"] for c in r.checks] == [f"log_inpaint_mse: {b} - vamoh >= -0.0487902" for b in rivals] \
        + ["inpaint_cpu_ms: gon_implicit - vamoh >= 0"]
