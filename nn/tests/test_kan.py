"""KAN grid updates during training (issue 14): pykan's schedule, run by the module itself."""
import pytest
import torch

from zoo_nn.kan import KAN


def _outside(layer, x: torch.Tensor) -> float:
    """Fraction of inputs outside a layer's grid interval (where only the silu branch acts)."""
    k = layer.spline_order
    return float(((x < layer.grid[:, k]) | (x > layer.grid[:, -k - 1])).float().mean())


def test_grid_follows_the_inputs_on_pykans_schedule(monkeypatch):
    torch.manual_seed(0)
    net = KAN([3, 4, 2], grid_update_num=10, stop_grid_update_step=50).train()
    x = torch.randn(256, 3) * 2  # most inputs outside the initial grid [-1, 1]
    assert _outside(net.layers[0], x) > 0.5
    steps: list[int] = []
    update = net.update_grid
    monkeypatch.setattr(net, "update_grid", lambda v: (steps.append(net.train_steps), update(v)))
    net(x)
    assert _outside(net.layers[0], x) == 0.0  # step 0: knots at the inputs' quantiles, range covered
    hidden = net.layers[0](x)
    assert _outside(net.layers[1], hidden) == 0.0  # the hidden layer follows its own inputs
    for _ in range(69):
        net(torch.randn(256, 3) * 2)
    assert steps == list(range(0, 50, 5)) and net.train_steps == 70  # every 5 steps until step 50
    with torch.no_grad():  # scoring is not training: no update, no step
        net(x)
    net.eval()(x)
    assert net.train_steps == 70


def test_update_keeps_the_function_on_the_old_grid():
    torch.manual_seed(0)
    net = KAN([2, 3, 1], grid_update_num=1, stop_grid_update_step=1).train()
    x = torch.rand(500, 2) * 1.6 - 0.8  # inside the old grid: the refit must keep the function there
    with torch.no_grad():
        before = net(x)
    after = net(x)  # the first training call updates, then computes
    assert torch.allclose(after, before, atol=5e-3)
    assert float(net.layers[0].grid[0, 3]) == pytest.approx(float(x[:, 0].min()), abs=0.02)


def test_default_kan_never_moves_its_grid():
    torch.manual_seed(0)
    net = KAN([2, 3, 1]).train()
    grid = net.layers[0].grid.clone()
    for _ in range(6):
        net(torch.randn(64, 2) * 3)
    assert torch.equal(net.layers[0].grid, grid)
    with pytest.raises(ValueError):
        KAN([2, 1], grid_update_num=10, stop_grid_update_step=5)
