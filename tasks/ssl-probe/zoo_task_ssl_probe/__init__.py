"""zoo task distribution: ssl_probe: self-supervised pretraining scored by frozen-feature probes (linear probe, kNN,
few-shot, collapse indicators) on images (Fashion-MNIST, scikit-learn digits) and time series (UCR sets, a
multi-scale synthetic set), plus the Pong mode written in ``pong.py``.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
