"""algorithmic_seq: exact answers (hull vs Qhull, TSP vs exhaustive search, SUBLEQ vs Python), the contracts, and the
seq2seq baseline's fixed output classes."""
import itertools

import numpy as np
import pytest
import torch
from scipy.spatial import ConvexHull

from zoo_task_algorithmic_seq import data as D
from zoo_task_algorithmic_seq import task as T


def test_hull_matches_qhull_and_runs_counter_clockwise_from_the_lowest_index():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.random((int(rng.integers(4, 25)), 2))
        hull = D.convex_hull(p)
        assert set(hull) == set(ConvexHull(p).vertices.tolist()) and hull[0] == min(hull)
        q = p[hull]
        signed = 0.5 * float(np.dot(q[:, 0], np.roll(q[:, 1], -1)) - np.dot(q[:, 1], np.roll(q[:, 0], -1)))
        assert signed > 0 and abs(D.polygon_area(p, hull) - ConvexHull(p).volume) < 1e-12


def test_tsp_optimum_equals_an_exhaustive_search():
    rng = np.random.default_rng(1)
    for n in (4, 5, 6, 7):
        p = rng.random((n, 2))
        best = min(D.tour_length(p, (0,) + perm) for perm in itertools.permutations(range(1, n)))
        tour = D.tsp_optimal(p)
        assert sorted(tour) == list(range(n)) and tour[0] == 0 and tour[1] < tour[-1]
        assert abs(D.tour_length(p, tour) - best) < 1e-12
    with pytest.raises(ValueError, match="n <= 9"):
        D.tsp_optimal(rng.random((10, 2)))


def test_recall_answers_are_the_values_stored_with_the_query():
    ids, ans = D.recall_batch(64, 7, rng=np.random.default_rng(2))
    for row, a in zip(ids, ans, strict=True):
        keys, values = list(row[0:14:2]), list(row[1:14:2])
        assert len(set(keys)) == 7 and row[-2] == D.RecallVocab().query and values[keys.index(row[-1])] == a
    with pytest.raises(ValueError, match="distinct keys"):
        D.recall_batch(1, 65, rng=np.random.default_rng(0))


def test_recall_update_answers_the_latest_value_and_needs_overwriting():
    ids, ans = D.recall_batch(256, 6, rng=np.random.default_rng(3), repeats=2)
    assert ids.shape == (256, 2 * 12 + 2)
    first_value = []
    for row, a in zip(ids, ans, strict=True):
        keys, values = list(row[0:24:2]), list(row[1:24:2])
        assert set(keys[6:]) <= set(keys[:6]) and len(set(keys[:6])) == 6  # every key stored, then re-stored
        assert values[max(j for j, k in enumerate(keys) if k == row[-1])] == a  # the latest assignment
        first_value.append(values[keys.index(row[-1])])
    assert 0.4 < np.mean(np.array(first_value) != ans) < 0.8  # an add-only memory that keeps the first value fails often
    np.testing.assert_array_equal(D.recall_batch(8, 5, rng=np.random.default_rng(4))[1],
                                  D.recall_batch(8, 5, rng=np.random.default_rng(4), repeats=1)[1])
    r = T.evaluate(T.build_baseline("lstm", mode="recall_update", params=20_000), mode="recall_update", steps=2,
                   baselines=[], test_sizes=(4, 16), n_test=8)
    assert {"acc@4", "acc@16"} <= set(r.metrics) and r.config["assignments_per_key"] == 2


def test_pointer_targets_close_with_end_then_padding():
    x, t = D.pointer_batch("hull", 8, 9, rng=np.random.default_rng(3))
    for row, tgt in zip(x, t, strict=True):
        hull = D.convex_hull(row)
        assert list(tgt[:len(hull)]) == hull and tgt[len(hull)] == 9 and (tgt[len(hull) + 1:] == D.PAD).all()
    _, s = D.pointer_batch("sort", 2, 5, rng=np.random.default_rng(0))
    assert s.shape == (2, 6) and (s[:, -1] == 5).all()


@pytest.mark.parametrize("name", sorted(D.PROGRAMS))
def test_every_subleq_program_computes_its_function(name):
    prog = D.PROGRAMS[name]
    for mem, addr, expected in D.program_cases(name, 40, seed=4):
        final, steps, halted = D.run(mem)
        assert halted and steps > 0 and tuple(final[addr[o]] for o in prog.outputs) == expected


def test_interpreter_stops_unhalted_and_refuses_wild_addresses():
    loop = [0, 0, 0]  # mem[0] -= mem[0] -> 0 <= 0 -> jump to 0 forever
    assert D.run(loop, max_steps=25)[1:] == (25, False)
    with pytest.raises(ValueError, match="outside the 3-cell memory"):
        D.run([7, 0, -1])


class _Interpreter(torch.nn.Module):
    input_kind = "machine"

    def __init__(self, broken: bool = False):
        super().__init__()
        self.broken = broken

    def run(self, memory, *, max_steps):
        # the broken machine stops after two instructions: every program needs more, and the check must see it
        return torch.tensor([D.run(m, max_steps=2 if self.broken else max_steps)[0] for m in memory.tolist()])


def test_subleq_mode_demands_the_interpreters_whole_memory():
    assert T.evaluate(_Interpreter(), mode="subleq").metrics["exact"] == 1.0
    assert T.evaluate(_Interpreter(broken=True), mode="subleq").metrics["exact"] < 1.0


def test_seq2seq_cannot_name_positions_beyond_its_training_size():
    torch.manual_seed(0)
    m = T.build_baseline("seq2seq", mode="hull")  # positions 0..9 and END
    x, t = D.pointer_batch("hull", 2, 15, rng=np.random.default_rng(0))
    logp = m(torch.from_numpy(x), torch.from_numpy(t))
    assert logp.shape[-1] == 16 and torch.isinf(logp[..., 10:15]).all() and torch.isfinite(logp[..., :10]).all()
    assert torch.allclose(logp[..., [*range(10), 15]].exp().sum(-1), torch.ones(2, t.shape[1]), atol=1e-5)


def test_evaluate_reports_every_test_size_and_names_bad_requests():
    torch.manual_seed(0)
    m = T.build_baseline("seq2seq", mode="sort", params=5_000)
    r = T.evaluate(m, mode="sort", steps=3, baselines=["seq2seq"], test_sizes=(5, 12), n_test=8)
    assert {"acc@5", "acc@12", "token_acc@12", "params"} <= set(r.metrics) and "seq2seq" in r.baselines
    assert abs(r.baselines["seq2seq"]["params"] - r.metrics["params"]) <= 0.1 * r.metrics["params"]
    with pytest.raises(ValueError, match="unknown mode 'sorting'"):
        T.evaluate(m, mode="sorting")
    with pytest.raises(ValueError, match="mode 'recall' takes tokens models"):
        T.evaluate(m, mode="recall")
    with pytest.raises(ValueError, match="baseline 'lstm' is for recall modes"):
        T.build_baseline("lstm", mode="tsp")


def test_example_inputs_and_output_checks_follow_the_model_kind():
    tok = T.build_baseline("lstm", mode="recall")
    T.check_output(tok, tok(T.example_input(tok)))
    ptr = T.build_baseline("seq2seq", mode="hull")
    T.check_output(ptr, ptr(*T.example_input(ptr)))
    assert T.example_input(_Interpreter()) is None
    with pytest.raises(AssertionError, match="logprobs"):
        T.check_output(ptr, torch.zeros(2, 7, 3))
