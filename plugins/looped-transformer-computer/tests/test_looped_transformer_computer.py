"""looped-transformer-computer: the conformance kit, one instruction through the layers, the task's programs and
random (self-modifying) programs against the reference interpreter, the temperature bound, constructed weights and
the bit width's errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_looped_transformer_computer.model import (
    LoopedTransformerComputer,
    looped_transformer_computer,
    temperature_bound,
)
from zoo_looped_transformer_computer.reproduce import machine_row
from zoo_task_algorithmic_seq import data


def test_conformance(hub):
    check_plugin("looped-transformer-computer")


def _one_step(model, memory, pc=0):
    x = model(model.encode(torch.tensor([memory]), pc=pc))
    regs = model.registers(x)
    return model.decode(x)[0].tolist(), int(regs["pc"][0]), bool(regs["halt"][0])


def test_one_instruction_through_the_layers():
    # mem[7] -= mem[6] with mem[6] = 5, mem[7] = 9: result 4 > 0, so pc += 3 (branch not taken)
    model = looped_transformer_computer()
    mem = [6, 7, 0, 7, 7, -1, 5, 9]
    got, pc, halted = _one_step(model, mem)
    assert got == [6, 7, 0, 7, 7, -1, 5, 4] and pc == 3 and not halted
    assert data.run(mem, max_steps=1)[0] == got
    # the second instruction (mem[7] -= mem[7] = 0 <= 0) jumps to c = -1, the halt target
    got2, pc2, _ = _one_step(model, got, pc=3)
    assert got2[7] == 0 and pc2 == -1
    _, pc3, halted3 = _one_step(model, got2, pc=pc2)  # a halted machine stays where it is and says so
    assert halted3 and pc3 == -1


@pytest.mark.parametrize("b_value, taken", [(5, False), (3, True), (-4, True)])
def test_branch_taken_and_not_taken(b_value, taken):
    model = looped_transformer_computer()
    mem = [6, 7, 9, 0, 0, 0, 3, b_value, 0, 0, 0, 0]  # mem[7] -= 3; if <= 0 goto 9 else 3
    got, pc, _ = _one_step(model, mem)
    assert got[7] == b_value - 3 and pc == (9 if taken else 3)


@pytest.mark.parametrize("name", ["negate", "add", "counter", "mul"])
def test_programs_match_the_interpreter(name):
    model = looped_transformer_computer()
    cases = data.program_cases(name, 6, seed=3)
    got, steps = model.run(torch.tensor([c[0] for c in cases]), max_steps=500, return_steps=True)
    for row, n_steps, (mem, addr, expected) in zip(got.tolist(), steps.tolist(), cases, strict=True):
        final, want_steps, halted = data.run(mem, max_steps=500)
        assert halted and row == final and n_steps == want_steps
        assert tuple(row[addr[o]] for o in data.PROGRAMS[name].outputs) == expected


def test_random_self_modifying_programs_match_the_interpreter():
    # code and data share the memory: random programs rewrite their own instructions; 16 bits keep 12 steps in range
    model = looped_transformer_computer(preset="paper")
    rng = np.random.default_rng(0)
    mems = []
    while len(mems) < 12:
        mem = [int(v) for v in rng.integers(-1, 24, 24)]
        try:
            data.run(mem, max_steps=12)
        except ValueError:  # the interpreter faults (an address outside memory): the machine raises too, tested below
            continue
        mems.append(mem)
    got = model.run(torch.tensor(mems), max_steps=12).tolist()
    assert got == [data.run(m, max_steps=12)[0] for m in mems]
    assert sum(g != m for g, m in zip(got, mems, strict=True)) >= 10  # they did compute something


def test_temperature_bound_separates_exact_from_blurred_machines():
    # the stated bound ln(6 columns) is sufficient; far below it reads and writes blur and runs fail
    cases = data.program_cases("add", 6, seed=0)
    mems = torch.tensor([c[0] for c in cases])
    want = [data.run(c[0])[0] for c in cases]
    at_bound = looped_transformer_computer(temperature=temperature_bound(mems.shape[1] + 1))
    assert at_bound.run(mems, max_steps=100).tolist() == want
    blurred = looped_transformer_computer(temperature=0.5, strict=False).run(mems, max_steps=100).tolist()
    assert sum(g == w for g, w in zip(blurred, want, strict=True)) <= 1


def test_memory_update_comes_out_of_the_layers():
    mem = torch.tensor([[3, 4, -1, 7, 2]])  # mem[4] -= mem[3]: 2 - 7 = -5, then halt
    assert looped_transformer_computer().run(mem, max_steps=5).tolist() == [[3, 4, -1, 7, -5]]
    model = looped_transformer_computer()
    with torch.no_grad():
        model.layers[4].wo.zero_()  # no write attention: memory never changes, whatever the MLPs compute
    assert model.run(mem, max_steps=5).tolist() == [[3, 4, -1, 7, 2]]


def test_weights_are_constructed_not_trained():
    a, b = looped_transformer_computer(), looped_transformer_computer()
    torch.manual_seed(123)  # the random state plays no part
    c = looped_transformer_computer()
    for (ka, va), (kb, vb), (_, vc) in zip(a.state_dict().items(), b.state_dict().items(), c.state_dict().items(),
                                           strict=True):
        assert ka == kb and torch.equal(va, vb) and torch.equal(va, vc)
    assert count_params(a) == 0 and not any(p.requires_grad for p in a.parameters())
    assert len(a.layers) == 5 and a.d == 14 * 8 + 7
    out = a(a.encode(torch.tensor([[0, 1, 2]])))
    assert not out.requires_grad  # no loss can reach the weights


def test_positional_encodings_are_binary_and_separate_columns():
    model = looped_transformer_computer()
    p = model.encode(torch.zeros(1, 40, dtype=torch.long))[0, 1:, model.layout["pos"]]
    assert set(p.unique().tolist()) == {-1.0, 1.0}
    gram = p @ p.T
    assert torch.all(gram.diagonal() == 8) and (gram - 100 * torch.eye(40)).max() <= 6


def test_out_of_range_values_name_the_width():
    model = looped_transformer_computer()
    with pytest.raises(OverflowError, match=r"bits=8 \(preset 'cpu'\).*-128\.\.127"):
        model.run(torch.tensor([[3, 4, -1, 200, 0]]))
    with pytest.raises(OverflowError, match="bits=8"):  # 100 - (-100) leaves the range while running
        model.run(torch.tensor([[3, 4, -1, -100, 100]]))
    assert LoopedTransformerComputer(bits=16).run(torch.tensor([[3, 4, -1, -100, 100]])).tolist() == [[3, 4, -1, -100, 200]]
    with pytest.raises(OverflowError, match="at most 127 cells"):
        model.run(torch.zeros(1, 130, dtype=torch.long))
    with pytest.raises(ValueError, match="outside the 5-cell memory"):
        model.run(torch.tensor([[3, 9, -1, 1, 0]]))
    with pytest.raises(ValueError, match="preset"):
        looped_transformer_computer(preset="huge")


def test_quick_reproduction_rows():
    good = machine_row(seed=0, quick=True, max_steps=100, cases=2)  # the recorded run: 20 inputs per program
    assert good["exact"] == 1.0 and good["layers"] == 5 and good["ms_per_instruction"] > 0
    broken = machine_row(seed=0, quick=True, random_layer=3, strict=False, max_steps=100, cases=2)
    assert broken["exact"] <= 0.5
