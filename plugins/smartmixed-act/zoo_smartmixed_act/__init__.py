"""SmartMixed: each neuron picks its activation function (Gumbel-softmax phase), then the choice is frozen."""

__version__ = "0.1.0"
