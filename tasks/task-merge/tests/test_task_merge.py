"""task_merge: the task transforms, the suite's data access, the baselines' exact special cases and the contract."""
import pytest
import torch

from zoo_task_task_merge import baselines as B
from zoo_task_task_merge import suite as S
from zoo_task_task_merge import task as T


@pytest.fixture(scope="module")
def tiny():
    """A 3-task suite trained for a few steps (hidden 16): seconds, cached in the session's zoo cache."""
    return S.build_suite(seed=0, tasks=("parity", "mod3", "loops"), pre_steps=60, ft_steps=20, hidden=16)


def synthetic(vectors, tasks=("parity", "ge5")):
    """A suite with hand-made states (hidden 4) around a random base, for exact checks of the mergers."""
    g = torch.Generator().manual_seed(0)
    base = {k: torch.randn(v.shape, generator=g) for k, v in S.MergeMLP(4).state_dict().items()}
    states = [{k: base[k] + vec.get(k, torch.zeros_like(base[k])) for k in base} for vec in vectors]
    return S.Suite(dataset="digits", seed=0, tasks=list(tasks), base_state=base, task_states=states, hidden=4,
                   data=S._splits("digits"))


def test_label_tasks_regroup_the_classes():
    x = torch.rand(10, 1, 8, 8)
    y = torch.arange(10)
    assert S.transform("parity", x, y)[1].tolist() == [0, 1] * 5
    assert S.transform("ge5", x, y)[1].tolist() == [0] * 5 + [1] * 5
    assert S.transform("mod3", x, y)[1].tolist() == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    assert S.transform("mod4", x, y)[1].tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    assert S.transform("mod5", x, y)[1].tolist() == [0, 1, 2, 3, 4] * 2
    assert S.transform("prime", x, y)[1].nonzero().flatten().tolist() == [2, 3, 5, 7]
    assert S.transform("lt3", x, y)[1].nonzero().flatten().tolist() == [0, 1, 2]
    assert S.transform("loops", x, y)[1].tolist() == [1, 0, 0, 0, 1, 0, 1, 0, 2, 1]
    assert all(S.transform(t, x, y)[0] is x for t in S.TASKS)  # the images are shared
    assert torch.equal(S.transform(S.CONTROL, x, y)[1], y)
    with pytest.raises(ValueError, match="choose from"):
        S.transform("rotate45", x, y)


def test_transform_tasks_are_there_by_name():
    x = torch.arange(64.0).view(1, 1, 8, 8) / 64
    y = torch.tensor([3])
    assert S.check_tasks(["rotate90", "parity"]) == ["rotate90", "parity"] and "rotate90" not in S.TASKS
    assert torch.equal(S.transform("rotate90", x, y)[0][0, 0, 0], x[0, 0, :, 7])  # first row <- last column
    assert torch.equal(S.transform("flip_h", x, y)[0][..., 0], x[..., 7])
    assert torch.allclose(S.transform("invert", x, y)[0], 1 - x)
    assert torch.equal(S.transform("shift", x, y)[0][0, 0, 2, 2], x[0, 0, 0, 0])
    perm = S.transform("permute", x, y)[0].flatten()
    assert sorted(perm.tolist()) == sorted(x.flatten().tolist()) and not torch.equal(perm, x.flatten())


def test_bad_arguments_name_the_valid_choices(tiny):
    with pytest.raises(ValueError, match="tasks must be distinct"):
        S.check_tasks(["parity", "parity"])
    with pytest.raises(ValueError, match="unknown dataset"):
        S.build_suite(dataset="mnist")
    with pytest.raises(ValueError, match="not in this suite"):
        tiny.test("prime")
    with pytest.raises(ValueError, match="unknown mode"):
        T.evaluate(B.Base(), mode="fuse")
    with pytest.raises(ValueError, match="unknown baseline"):
        T.evaluate(B.Base(), baselines=["fisher"])
    with pytest.raises(ValueError, match="valid"):
        T.evaluate(B.Base(), lam=3)
    with pytest.raises(ValueError, match="choose from"):
        T.build_baseline("fisher")


def test_suite_holds_states_vectors_and_data(tiny):
    assert tiny.tasks == ["parity", "mod3", "loops"] and len(tiny.task_states) == 3
    for s, v in zip(tiny.task_states, tiny.task_vectors, strict=True):
        assert all(torch.allclose(tiny.base_state[k] + v[k], s[k]) for k in s)
        assert torch.count_nonzero(v["heads"]) == 0 and v["fc1.weight"].abs().sum() > 0  # heads frozen
    m = tiny.architecture()
    m.load_state_dict(tiny.task_states[0])
    x, y = tiny.test("mod3")
    logits = m(x, "mod3")
    assert x.shape == (450, 1, 8, 8) and logits.shape == (450, 10) and int(logits.argmax(1).max()) <= 2  # 3 classes
    assert len(tiny.val(0)[1]) == 269 and len(tiny.train(0)[1]) == 1347 - 269 and len(tiny.train(0, n=5)[1]) == 5
    xs, ys = tiny.few_shot("mod3", 3, seed=1)
    assert torch.equal(torch.bincount(ys), torch.full((3,), 3))  # k per class of the task
    assert torch.equal(xs, tiny.few_shot("mod3", 3, seed=1)[0]) and not torch.equal(xs, tiny.few_shot(1, 3, seed=2)[0])
    assert tiny.unlabeled("loops", 7).shape == (7, 1, 8, 8)
    assert tiny.individual_accuracy(1) == tiny.accuracy(tiny.task_states[1], "mod3")


def test_suite_is_cached_and_seeded(tiny):
    again = S.build_suite(seed=0, tasks=("mod3",), pre_steps=60, ft_steps=20, hidden=16)
    assert all(torch.equal(again.task_states[0][k], tiny.task_states[1][k]) for k in again.base_state)
    other = S.build_suite(seed=1, tasks=("mod3",), pre_steps=60, ft_steps=20, hidden=16)
    assert not torch.equal(other.base_state["fc1.weight"], tiny.base_state["fc1.weight"])


def test_weight_averaging_is_task_arithmetic_at_one_over_t(tiny):
    wa, ta = B.weight_averaging(tiny), B.task_arithmetic(tiny, 1 / 3)
    assert all(torch.allclose(wa[k], ta[k], atol=1e-6) for k in wa)
    assert all(torch.equal(B.task_arithmetic(tiny, 0.0)[k], tiny.base_state[k]) for k in wa)


def test_ties_trims_elects_and_takes_the_disjoint_mean():
    w = torch.zeros(4, 64)
    a, b = w.clone(), w.clone()
    a[0, :4] = torch.tensor([3.0, -1.0, 2.0, 0.1])
    b[0, :4] = torch.tensor([1.0, 4.0, -1.0, 0.2])
    suite = synthetic([{"fc1.weight": a}, {"fc1.weight": b}])
    n = sum(v.numel() for v in suite.base_state.values())
    tau = B.ties_vector(suite, k=3 / n)  # keep each vector's top 3 entries
    # entry 0: both +, mean 2; entry 1: -1 vs +4 -> elected +, only b; entry 2: +2 vs -1 -> +, only a; entry 3 trimmed
    assert torch.allclose(tau["fc1.weight"][0, :4], torch.tensor([2.0, 4.0, 2.0, 0.0]))
    assert float(sum(t.abs().sum() for t in tau.values())) == pytest.approx(8.0)
    single = synthetic([{"fc1.weight": a}], tasks=("parity",))  # one task, nothing trimmed: task arithmetic
    merged, ta = B.ties(single, 0.7, k=1.0), B.task_arithmetic(single, 0.7)
    assert all(torch.allclose(merged[k], ta[k]) for k in merged)
    with pytest.raises(ValueError, match="kept fraction"):
        B.ties_vector(single, k=0.0)


def test_select_lambda_and_negation_follow_the_protocol(tiny):
    lam, state = B.select_lambda(tiny, lambda lam: B.task_arithmetic(tiny, lam), grid=(0.0, 0.3, 1.0))
    accs = {g: B.mean_accuracy(tiny, B.task_arithmetic(tiny, g)) for g in (0.0, 0.3, 1.0)}
    assert lam == max(accs, key=accs.get) and B.mean_accuracy(tiny, state) == accs[lam]
    lam, neg = B.select_negation(tiny, "mod3", grid=(0.5, 1.0, 2.0))
    assert tiny.accuracy(neg, S.CONTROL, "val") >= 0.95 * tiny.accuracy(tiny.base_state, S.CONTROL, "val")
    assert tiny.accuracy(neg, "mod3", "val") <= tiny.accuracy(tiny.base_state, "mod3", "val")


def test_evaluate_scores_a_merger_and_the_baselines(monkeypatch):
    monkeypatch.setattr(S, "PRE_STEPS", 60)
    monkeypatch.setattr(S, "FT_STEPS", 20)
    monkeypatch.setattr(S, "HIDDEN", 16)
    res = T.evaluate(B.build("task_arithmetic"), tasks="parity,mod3", baselines=["base", "individual"])
    m = res.metrics
    assert set(m) >= {"acc/parity", "acc/mod3", "avg_acc", "normalized_acc", "stored_floats",
                      "neg/target_acc", "neg/target_drop", "neg/control_acc", "neg/control_retention"}
    assert m["neg/control_retention"] >= 0.9  # chosen on val to keep >= 95% there
    assert res.baselines["individual"]["normalized_acc"] == pytest.approx(1.0)
    assert res.baselines["individual"]["stored_floats"] == 2 * res.baselines["base"]["stored_floats"]
    assert "neg/target_acc" not in res.baselines["base"]
    assert res.config["tasks"] == ["parity", "mod3"] and res.n == 900


def test_a_merger_must_return_a_full_state(monkeypatch):
    monkeypatch.setattr(S, "PRE_STEPS", 60)
    monkeypatch.setattr(S, "FT_STEPS", 20)
    monkeypatch.setattr(S, "HIDDEN", 16)

    class Broken(B.Merger):
        def merge(self, suite, *, tasks=None, few_shot=None):
            return {"fc1.weight": suite.base_state["fc1.weight"]}

    with pytest.raises(ValueError, match="missing keys"):
        T.evaluate(Broken(), tasks=["mod3"], baselines=[])
    with pytest.raises(TypeError, match="merge"):
        T.evaluate(torch.nn.Linear(2, 2), tasks=["mod3"], baselines=[])


def test_stitching_mode_is_delegated():
    try:
        import zoo_task_task_merge.stitching  # noqa: F401
    except ImportError:
        with pytest.raises(NotImplementedError, match="stitching"):
            T.evaluate(B.Base(), mode="stitching")
