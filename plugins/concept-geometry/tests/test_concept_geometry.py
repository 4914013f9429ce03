"""concept-geometry: conformance, known answers (planted parallelograms hidden by distractor directions come back
after LDA and not after a random projection; a planted power law gives its slope; planted lobes give AMI ~1 and
shuffled positions ~0; phi is the binary Pearson correlation; a Gaussian has clustering entropy ~0), the SAE's
constraints, validation, and the tools via zoo.analyze on raw arrays and on a model."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_concept_geometry.geometry import (
    clustering_entropy,
    lda_projection,
    phi_cooccurrence,
    power_law_slope,
    quad_quality,
    random_projection,
    spatial_modularity,
)
from zoo_concept_geometry.planted import planted_crystals, planted_lobes, planted_power_law


def test_conformance(hub):
    check_plugin("concept-geometry")


def test_quality_closed_forms():
    pts = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [2, 2.0]])
    q = quad_quality(pts, [[0, 1, 2, 3], [0, 1, 4, 5], [0, 1, 1, 0], [0, 0, 2, 3]])
    # exact parallelogram; trapezoid (parallel, twice as long: 1 - 1/3); opposite edges; a zero edge
    assert q["parallelogram"][:3] == pytest.approx([1.0, 2 / 3, 0.0])
    assert q["trapezoid"][:3] == pytest.approx([1.0, 1.0, -1.0])
    assert q["parallelogram"][3] == pytest.approx(0.0) and np.isnan(q["trapezoid"][3])
    assert np.isnan(quad_quality(pts, [[0, 0, 1, 1]])["parallelogram"][0])  # no edges at all: undefined


def test_lda_recovers_planted_parallelograms_on_held_out_quads():
    d = planted_crystals(seed=0)
    f, pts, q = d["fit"], d["points"], d["quads"]
    pairs = np.concatenate([q[f][:, :2], q[f][:, 2:]])
    rel = np.concatenate([d["relations"][f], d["relations"][f]])
    w = lda_projection(pts, pairs, rel, k=8)
    held = q[~f]
    raw = np.nanmean(quad_quality(pts, held)["parallelogram"])
    lda = np.nanmean(quad_quality(pts, held, w)["parallelogram"])
    rnd = np.nanmean(quad_quality(pts, held, random_projection(pts.shape[1], 8, seed=1))["parallelogram"])
    assert raw < 0.5 and rnd < 0.5 and lda > 0.95
    # the LDA directions are (nearly) orthogonal to the planted distractor subspace
    wn = w / np.linalg.norm(w, axis=0)
    assert np.abs(d["distractor_basis"].T @ wn).max() < 0.05


@pytest.mark.parametrize("alpha", [0.8, 1.5])
def test_planted_power_law_slope(alpha):
    r = power_law_slope(planted_power_law(alpha, seed=1))
    assert r["slope"] == pytest.approx(-alpha, abs=0.06) and r["r2"] > 0.99
    iso = power_law_slope(np.random.default_rng(2).standard_normal((20000, 32)))
    assert abs(iso["slope"]) < 0.05


def test_clustering_entropy_gaussian_vs_clusters():
    rng = np.random.default_rng(3)
    g = clustering_entropy(rng.standard_normal((2000, 5)) @ rng.standard_normal((5, 5)), dims=None)
    c = np.concatenate([0.05 * rng.standard_normal((300, 5)) + 3 * rng.standard_normal(5) for _ in range(10)])
    assert abs(g["clustering_entropy"]) < 0.1 and clustering_entropy(c, dims=None)["clustering_entropy"] > 2


def test_phi_is_binary_pearson():
    f = np.random.default_rng(4).random((200, 6)) < [0.1, 0.3, 0.5, 0.7, 0.2, 0.9]
    phi = phi_cooccurrence(f)
    assert np.allclose(phi, np.corrcoef(f.T.astype(float)))
    assert np.allclose(phi_cooccurrence(np.c_[f, np.ones(200, bool)])[-1, :-1], 0.0)  # constant feature: phi 0


def test_planted_lobes_are_spatially_modular():
    d = planted_lobes(seed=0)
    r = spatial_modularity(d["decoder"], phi_cooccurrence(d["fired"]), 4, seed=0, n_shuffles=3)
    assert r["ami"] > 0.9 and abs(r["ami_shuffled"]) < 0.1
    # co-occurrence that ignores the lobes: no agreement
    rng = np.random.default_rng(1)
    r0 = spatial_modularity(d["decoder"], phi_cooccurrence(rng.random(d["fired"].shape) < 0.2), 4, seed=0,
                            n_shuffles=1)
    assert r0["ami"] < 0.2


def test_sae_decoder_rows_unit_norm_and_sparse():
    from zoo_concept_geometry.sae import fraction_variance_explained, sae_codes, train_sae

    rng = np.random.default_rng(0)
    atoms = rng.standard_normal((12, 8))
    codes = (rng.random((400, 12)) < 0.15) * rng.random((400, 12)) * 3
    x = codes @ atoms
    sae, scale = train_sae(x, n_features=24, l1=0.3, steps=150, seed=0)
    assert np.allclose(sae.w_dec.detach().norm(dim=1).numpy(), 1.0, atol=1e-5)
    c = sae_codes(sae, x, scale)
    assert (c >= 0).all() and (c > 0).mean() < 0.5 and fraction_variance_explained(sae, x, scale) > 0.8
    with pytest.raises(ValueError, match="NaN"):
        train_sae(np.full((5, 3), np.nan))


def test_validation_names_the_requirement():
    x = np.random.default_rng(0).standard_normal((10, 4))
    with pytest.raises(ValueError, match=r"\(Q, 4\)"):
        quad_quality(x, [[0, 1, 2]])
    with pytest.raises(ValueError, match="index points 0..9"):
        quad_quality(x, [[0, 1, 2, 10]])
    with pytest.raises(ValueError, match="NaN"):
        quad_quality(np.r_[x, [[np.nan] * 4]], [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="k \\(the LDA dimension\\)"):
        lda_projection(x, [[0, 1], [2, 3]], [0, 0], k=9)
    with pytest.raises(ValueError, match="cooccurrence must be \\(10, 10\\)"):
        spatial_modularity(x, np.eye(3), 2)
    with pytest.raises(ValueError, match="n_clusters must be in"):
        spatial_modularity(x, np.eye(10), 1)
    with pytest.raises(ValueError, match="power-law fit"):
        power_law_slope(x, lo=2, hi=3)
    with pytest.raises(ValueError, match="NaN"):
        zoo.analyze("concept-galaxy", {"h": np.r_[x, [[np.nan] * 4]]})
    with pytest.raises(ValueError, match="relations must hold one id"):
        zoo.analyze("concept-crystals", {"h": x}, quads=[[0, 1, 2, 3]], relations=[0, 1])


def test_tools_on_raw_arrays(tmp_path):
    d = planted_crystals(seed=1)
    res = zoo.analyze("concept-crystals", {"h": d["points"]}, quads=d["quads"], relations=d["relations"],
                      fit=d["fit"], out_dir=str(tmp_path))["layers"]["h"]
    assert res["held_out"] and res["parallelogram_lda"] > 0.95 > 0.5 > res["parallelogram_raw"]
    assert (tmp_path / "concept_crystals.png").exists()
    lob = planted_lobes(seed=2)
    r = zoo.analyze("concept-lobes", {"W_dec": lob["decoder"]}, cooccurrence=phi_cooccurrence(lob["fired"]),
                    n_clusters=4, n_shuffles=3)["layers"]["W_dec"]
    assert r["ami"] > 0.9 > 0.2 > r["ami_shuffled"]
    gal = zoo.analyze("concept-galaxy", {"a": planted_power_law(1.0, n=5000, seed=3),
                                         "b": planted_power_law(2.0, n=5000, seed=4)}, out_dir=str(tmp_path))
    assert gal["steepest_layer"] == "b" and gal["layers"]["a"]["slope"] == pytest.approx(-1.0, abs=0.1)
    assert (tmp_path / "concept_galaxy.png").exists()


def test_tools_through_a_model():
    from zoo_task_digits.task import probe_data

    xs, ys = probe_data(150)
    model = zoo.create("gelu_mlp_digits")
    cry = zoo.analyze("concept-crystals", model, inputs=xs, labels=ys, layers=["output"], n_relations=4, k=4)
    assert cry["layers"]["output"]["n_quads"] > 0 and not cry["layers"]["output"]["held_out"]
    lob = zoo.analyze("concept-lobes", model, inputs=xs, layers=["output"], n_features=32, l1=0.1, steps=60,
                      n_clusters=3, n_shuffles=2)
    assert -1 <= lob["layers"]["output"]["ami"] <= 1
    gal = zoo.analyze("concept-galaxy", model, inputs=xs, layers=["output"], sae=True, n_features=32, steps=60)
    assert gal["layers"]["output"]["slope"] < 0


def _trained_token_gpt():
    """The icl_toy token GPT from the user's zoo cache (the tests' hermetic cache is empty and training it takes
    minutes): skipped when it was never trained (``zoo reproduce concept-geometry`` trains and caches it)."""
    import os
    from pathlib import Path

    from safetensors.torch import load_file

    from zoo_task_icl_toy.models import build_gpt, cache_path

    name = cache_path("token").name
    roots = [Path(os.path.expanduser("~/.cache")), Path(os.environ.get("XDG_CACHE_HOME") or "~")]
    path = next((r / "zoo" / "icl_toy" / name for r in roots if (r / "zoo" / "icl_toy" / name).exists()),
                roots[0] / "zoo" / "icl_toy" / name)
    if not path.exists():
        pytest.skip(f"icl_toy token GPT not cached at {path}; run `zoo reproduce concept-geometry` once")
    gpt = build_gpt("token")
    gpt.load_state_dict(load_file(str(path)))
    return gpt.eval().requires_grad_(False)


def test_quick_crystals_on_the_icl_toy_gpt():
    import torch

    from zoo_concept_geometry.experiment import crystal_experiment

    with torch.no_grad():
        r = crystal_experiment(_trained_token_gpt(), seed=0, n_per=4, n_quads=600)
    assert r["first_layer_chosen"] == 3  # the query token carries the task from layer 3 on, not before
    assert r["lda_parallelogram"] > r["raw_parallelogram"] + 0.03 and r["lda_parallelogram"] > r["random_parallelogram"]
