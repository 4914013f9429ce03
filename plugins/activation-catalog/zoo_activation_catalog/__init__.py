"""A referenced catalogue of activation functions, each a drop-in ``act_layer`` (see ``layers.get``)."""

__version__ = "0.1.0"
