"""``zoo reproduce vsa-capacity``: measured membership and intersection errors at the dimension each bound prescribes
and at a quarter of it.

Membership rows are ``vsa_bench.evaluate(vsa, mode="membership", D=d, set_size=k, n=N_SETS, seed=seed)``: the seed
draws the atoms, the sets and the probes (16 members and 16 non-members per set); ``error`` is the larger of the
false-negative and false-positive rates (the bounds bound each). Intersection rows draw vsa_bench's set pairs
(``data.symbol_sets``, overlap uniform in 0..k) and report ``tail``: the fraction of pairs whose MAP-I estimate is off
by more than ``eps sqrt(|A||B|)``.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo_task_vsa_bench import data, task

from .model import VSAS, MapI
from .plugin import CLAIM

DELTA, EPS, SET_SIZE, ALPHABET = 0.01, 0.1, 16, 1000
N_SETS, QUICK_SETS = 500, 50
CHECKED = (("map_i", SET_SIZE), ("map_i", 64), ("map_b", SET_SIZE), ("hopfield", SET_SIZE))
REPORTED = (("sparse_bloom", SET_SIZE), ("sparse_counting", SET_SIZE))


def _vsa(name: str, set_size: int):
    return VSAS[name](set_size) if name.startswith("sparse") else VSAS[name]()


def membership_row(*, seed: int, quick: bool, vsa: str, set_size: int, scale: float) -> dict[str, float]:
    """``vsa`` at ``scale`` times its bound's dimension for sets of ``set_size`` and target ``DELTA``."""
    model = _vsa(vsa, set_size)
    dim = max(1, math.ceil(scale * model.dimension_bound(set_size, DELTA)))
    res = task.evaluate(model, mode="membership", D=dim, set_size=set_size, alphabet=ALPHABET,
                        n=QUICK_SETS if quick else N_SETS, seed=seed, baselines=[])
    fn, fp = res.metrics["false_negative"], res.metrics["false_positive"]
    return {"error": max(fn, fp), "false_negative": fn, "false_positive": fp, "dim": float(dim),
            "bound": min(1.0, model.error_bound(dim, set_size))}


def intersection_row(*, seed: int, quick: bool, scale: float) -> dict[str, float]:
    """MAP-I's intersection estimates at ``scale`` times ``4 ln(2/delta) / eps^2``."""
    model = MapI()
    dim = math.ceil(scale * model.intersection_dimension(EPS, DELTA))
    sets = data.symbol_sets(QUICK_SETS if quick else N_SETS, SET_SIZE, ALPHABET, seed=seed)
    with torch.no_grad():
        atoms = model.atoms(ALPHABET, dim, seed)
        est = model.intersection(atoms, model.bundle(atoms, sets.sets_a), model.bundle(atoms, sets.sets_b))
    err = (est.double() - sets.overlap.double()).abs()
    return {"tail": float((err > EPS * SET_SIZE).double().mean()), "mae": float(err.mean()), "dim": float(dim)}


ROWS = [Row(f"{v}_k{k}@{where}", membership_row, {"vsa": v, "set_size": k, "scale": s})
        for v, k in CHECKED + REPORTED for where, s in (("bound", 1.0), ("quarter", 0.25))]
ROWS += [Row(f"map_i_intersection@{where}", intersection_row, {"scale": s}) for where, s in (("bound", 1.0), ("quarter", 0.25))]

CHECKS = [c for v, k in CHECKED for c in (Check(f"{v}_k{k}@bound", "error", margin=DELTA, higher=False),
                                         Check(f"{v}_k{k}@quarter", "error", margin=DELTA, higher=True))]
CHECKS += [Check("map_i_intersection@bound", "tail", margin=DELTA, higher=False),
           Check("map_i_intersection@quarter", "tail", margin=DELTA, higher=True)]

SETTINGS: dict[str, Any] = {"delta": DELTA, "eps": EPS, "set_size": SET_SIZE, "alphabet": ALPHABET, "n_sets": N_SETS,
                            "quick_sets": QUICK_SETS, "probes_per_set": 16,
                            "bounds": {"map_i": "8 k ln(1/delta)", "map_b": "8 ln(1/delta) / c_k^2",
                                       "hopfield": "least d with Chernoff (false +) and Maurer (false -) tails <= delta",
                                       "sparse": "k log2(1/delta) / ln 2 (Bloom expectation, reported)",
                                       "map_i_intersection": "4 ln(2/delta) / eps^2"}}

REPRODUCTION = Claim(
    plugin="vsa-capacity", claim=CLAIM, task="vsa_bench", seeds=(0, 1, 2, 3, 4), quick_seeds=(0,),
    rows=ROWS, checks=CHECKS, settings=SETTINGS,
    task_options={"set_size": SET_SIZE, "alphabet": ALPHABET, "n": N_SETS},
    notes=f"margins fixed before the first run, from the claim itself: at the bound's dimension the error rate (the "
          f"larger of false negatives and false positives over {N_SETS} sets x 16 probes each, per seed) must be <= "
          f"delta = {DELTA} (the bound is a guarantee, so its target is the margin); at a quarter of it the error must "
          f"be >= delta (the check that can fail: a vacuous, far-too-large bound would still meet the target there). "
          f"Intersection: the fraction of {N_SETS} pairs whose MAP-I estimate misses |A & B| by more than "
          f"eps sqrt(|A||B|) = {EPS} x {SET_SIZE}, same two checks. The bounds' constants are derived in "
          "zoo_vsa_capacity.model from the concentration arguments the paper names (its text could not be read here). "
          "Sparse binary (Bloom, counting Bloom) rows are reported only: their formula is the expected false-positive "
          "rate, not a tail bound.",
)
