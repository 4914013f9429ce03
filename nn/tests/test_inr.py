import math

import pytest
import torch

from zoo_nn.inr import Siren


def test_siren_first_layer_frequency_is_its_own_knob():
    # siren-pytorch's setting (w0_initial=30, w0=1): the first layer at 30, the later ones at 1
    torch.manual_seed(0)
    m = Siren(in_features=2, out_features=1, hidden=16, layers=3, w0=1.0, w0_initial=30.0)
    assert [layer.w0 for layer in m.body] == [30.0, 1.0, 1.0]
    x = torch.rand(7, 2) * 2 - 1
    first, second = m.body[0].linear, m.body[1].linear
    with torch.no_grad():
        h = torch.sin(30.0 * first(x))
        assert torch.allclose(m.body[0](x), h)
        assert torch.allclose(m.body[1](h), torch.sin(second(h)))
    # the hidden layers' init is scaled by w0 (here 1): U(-sqrt(6/16), sqrt(6/16))
    bound = math.sqrt(6 / 16)
    assert float(second.weight.detach().abs().max()) <= bound and float(second.weight.detach().abs().max()) > 0.8 * bound
    # the first layer's init does not depend on any w0: U(-1/in, 1/in)
    assert float(first.weight.detach().abs().max()) <= 0.5


def test_siren_defaults_are_the_papers_setting_and_unchanged():
    # the SIREN paper: w0 = 30 in the first layer and in the later ones; the same draws as before w0_initial existed
    torch.manual_seed(0)
    paper = Siren(hidden=32, layers=3)
    assert [layer.w0 for layer in paper.body] == [30.0, 30.0, 30.0]
    torch.manual_seed(0)
    explicit = Siren(hidden=32, layers=3, w0=30.0, w0_initial=30.0)
    x = torch.rand(9, 2)
    with torch.no_grad():
        assert torch.equal(paper(x), explicit(x))
    bound = math.sqrt(6 / 32) / 30
    assert float(paper.body[1].linear.weight.detach().abs().max()) <= bound
    with pytest.raises(ValueError, match="layers"):
        Siren(layers=0)
