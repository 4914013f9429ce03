"""vsa-capacity: the conformance kit, each VSA's decision rule and estimator, the bounds' numbers, and a quick
reproduction at the bound and at a quarter of it."""
from __future__ import annotations

import math

import pytest
import torch

from zoo.testing import check_plugin
from zoo_task_vsa_bench import task
from zoo_vsa_capacity.model import VSAS, Hopfield, MapB, MapI, SparseBloom, SparseCounting, member_correlation
from zoo_vsa_capacity.reproduce import intersection_row, membership_row

SMALL = {"vsa_sparse_bloom": {"set_size": 4}, "vsa_sparse_counting": {"set_size": 4}}


def test_conformance(hub):
    check_plugin("vsa-capacity", overrides=SMALL)


def test_member_correlation_matches_simulation_and_closed_forms():
    assert member_correlation(1) == 1.0 and member_correlation(2) == 0.5 and member_correlation(3) == 0.5
    x = torch.randint(0, 2, (20000, 16), generator=torch.Generator().manual_seed(0)).float() * 2 - 1
    s = x.sum(1)
    agree = torch.where(s == 0, 0.0, torch.sign(s) * x[:, 0])  # ties count half agree, half disagree: 0 on average
    assert abs(float(agree.mean()) - member_correlation(16)) < 0.015
    assert abs(member_correlation(400) - math.sqrt(2 / (math.pi * 400))) < 0.002  # the large-k limit


def test_bounds_numbers():
    assert MapI().dimension_bound(16, 0.01) == pytest.approx(8 * 16 * math.log(100))
    assert MapI().intersection_dimension(0.1, 0.01) == pytest.approx(400 * math.log(200))
    assert MapB().error_bound(math.ceil(MapB().dimension_bound(16, 0.01)), 16) <= 0.01
    d = Hopfield().dimension_bound(16, 0.01)
    assert Hopfield().error_bound(d, 16) <= 0.01 < Hopfield().error_bound(d - 1, 16)
    assert d < 100  # sqrt-type: far below MAP-I's 590 for the same set size (d^2 storage)


@pytest.mark.parametrize("name", sorted(VSAS))
def test_decisions_and_intersections_are_exact_where_noise_vanishes(name):
    # a large dimension and few symbols: every VSA answers membership exactly and estimates |A & B| closely
    model = VSAS[name](4) if name.startswith("sparse") else VSAS[name]()
    dim = 96 if name == "hopfield" else 4096
    atoms = model.atoms(50, dim, seed=1)
    a, b = torch.tensor([[0, 1, 2, 3]]), torch.tensor([[2, 3, 4, 5]])
    mem_a, mem_b = model.bundle(atoms, a), model.bundle(atoms, b)
    assert model.contains(atoms, mem_a, torch.tensor([[0, 3, 4, 40]])).tolist() == [[True, True, False, False]]
    assert abs(float(model.intersection(atoms, mem_a, mem_b)[0]) - 2) < 0.6


def test_bloom_has_no_false_negatives_and_matches_its_false_positive_formula():
    r = task.evaluate(SparseBloom(16), mode="membership", D=154, set_size=16, n=200, seed=0, baselines=[]).metrics
    assert r["false_negative"] == 0.0
    assert abs(r["false_positive"] - SparseBloom(16).error_bound(154, 16)) < 0.006
    counting = task.evaluate(SparseCounting(16), mode="membership", D=154, set_size=16, n=200, seed=0, baselines=[])
    assert counting.metrics == r  # same atoms, same membership decisions


def test_hopfield_stores_more_than_map_i_at_the_same_dimension():
    # d = 64, |S| = 64: MAP-I's noise (std sqrt(k d) = 64) swamps the threshold d/2; the quadratic memory does not
    kw = dict(mode="membership", D=64, set_size=64, n=50, seed=0, baselines=[])
    assert task.evaluate(Hopfield(), **kw).metrics["membership_error"] < 0.05
    assert task.evaluate(MapI(), **kw).metrics["membership_error"] > 0.25


def test_quick_reproduction_bound_holds_and_quarter_fails():
    at = membership_row(seed=0, quick=True, vsa="map_i", set_size=16, scale=1.0)
    quarter = membership_row(seed=0, quick=True, vsa="map_i", set_size=16, scale=0.25)
    assert at["dim"] == 590 and at["error"] <= 0.01 < quarter["error"]
    tails = [intersection_row(seed=0, quick=True, scale=s)["tail"] for s in (1.0, 0.25)]
    assert tails[0] <= 0.02 < tails[1]


@pytest.mark.slow  # matplotlib's import: a few seconds
def test_reference_curves_feed_the_task_figure(tmp_path):
    r = task.evaluate(MapI(), mode="membership", D=[128, 512], set_size=16, n=20, seed=0, out_dir=str(tmp_path))
    assert (tmp_path / "membership_vs_dim.png").stat().st_size > 1000 and r.artifacts["membership"]
    assert MapI().reference_curves("membership", [128, 512], 16, 1000)["MAP-I bound"][1] == pytest.approx(math.exp(-4))
