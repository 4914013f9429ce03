"""The example plugin's method: a two-layer ReLU MLP for 8x8 digits, He-initialised, with no normalization.

Initialisation (He et al. 2015, "Delving Deep into Rectifiers", Sec. 2.2): the hidden layer's weights are
drawn from N(0, 2 / fan_in), so that a ReLU layer keeps the variance of its input; every bias and the whole
output layer start at zero, so the untrained model predicts the uniform distribution (cross-entropy
exactly log 10). PyTorch's default for ``nn.Linear`` (uniform, variance 1 / (3 fan_in)) is what the task's
baseline ``mlp-ln-relu`` uses, with a LayerNorm after each hidden layer.
"""
from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["ExampleMLP", "example_mlp"]


class ExampleMLP(nn.Module):
    """``flatten -> Linear(in, hidden) -> ReLU -> Linear(hidden, classes)``.

    Args:
        num_classes: outputs of the last layer.
        in_features: size of the flattened input (8 x 8 x 1 for digits_classify).
        hidden: width of the hidden layer.

    >>> model = ExampleMLP(hidden=32)
    >>> model(torch.rand(2, 1, 8, 8)).shape
    torch.Size([2, 10])
    >>> bool(model(torch.rand(2, 1, 8, 8)).eq(0).all())  # zero output layer: uniform prediction before training
    True
    """

    reference_backbone = "mlp"  # zoo.evaluate compares it with the task's MLP baseline by default

    def __init__(self, num_classes: int = 10, in_features: int = 64, hidden: int = 256):
        super().__init__()
        self.hidden = nn.Linear(in_features, hidden)
        self.head = nn.Linear(hidden, num_classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # He et al. 2015, Eq. 10: std = sqrt(2 / fan_in) keeps the forward variance through a ReLU
        nn.init.normal_(self.hidden.weight, mean=0.0, std=math.sqrt(2.0 / self.hidden.in_features))
        nn.init.zeros_(self.hidden.bias)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.hidden(x.flatten(1))))


def example_mlp(num_classes: int = 10, in_features: int = 64, hidden: int = 256) -> ExampleMLP:
    """The builder ``zoo.create("example_mlp", **args)`` calls; its keyword arguments are the model's config.

    >>> example_mlp(hidden=8).hidden.weight.shape
    torch.Size([8, 64])
    """
    return ExampleMLP(num_classes=num_classes, in_features=in_features, hidden=hidden)
