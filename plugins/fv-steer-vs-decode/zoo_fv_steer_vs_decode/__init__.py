"""Steerable but not decodable (Nadaf 2026) for zoo: function-vector steering vs logit-lens, tuned-lens and MLP-probe
decodability per (task, layer) on the icl_toy token GPT, and the ``steer-decode`` analysis tool."""

__version__ = "0.1.0"
