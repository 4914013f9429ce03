"""Identity initialisation for trainable token and query encoders of the ``retrieval`` task.

A late-interaction encoder trained on a few thousand queries starts from token vectors that already
retrieve well (the corpus's own vectors: exact MaxSim on them is the untrained baseline). Initialised
at random, a small encoder must first relearn that map and ends far below it (issue 14: about 3x below
the untrained identity map). So the task's trainable encoders, and the plugins' (crisp, signed-maxsim),
start *at* the identity map: input projection and output head are the identity matrix (its leading
block when the sizes differ), positions and role markers start at zero, and every transformer layer's
residual branches (the attention's output projection and the feed-forward's second linear map) start
at zero, so each pre-norm layer passes its input through unchanged. The untrained encoder then returns
its input token vectors, and training can only be judged by what it adds to them.
"""
from __future__ import annotations

import torch
from torch import nn

__all__ = ["identity_", "zero_residual_", "identity_init_"]


def identity_(linear: nn.Linear) -> nn.Linear:
    """Set ``linear`` to the identity map (the leading block of it when in and out sizes differ), bias 0.

    >>> identity_(nn.Linear(3, 2)).weight.tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    with torch.no_grad():
        linear.weight.copy_(torch.eye(*linear.weight.shape))
        if linear.bias is not None:
            linear.bias.zero_()
    return linear


def zero_residual_(layer: nn.TransformerEncoderLayer) -> nn.TransformerEncoderLayer:
    """Zero both residual branches' output maps of a pre-norm ``layer``: it starts as the identity map.

    Gradients still reach every weight after the first step (the zeroed maps get them at once).
    """
    if not layer.norm_first:
        raise ValueError("zero_residual_ needs a pre-norm layer (norm_first=True): a post-norm layer normalises its output")
    with torch.no_grad():
        for lin in (layer.self_attn.out_proj, layer.linear2):
            lin.weight.zero_()
            if lin.bias is not None:
                lin.bias.zero_()
    return layer


def identity_init_(module: nn.Module) -> nn.Module:
    """Identity-initialise every ``nn.TransformerEncoderLayer`` inside ``module`` (``zero_residual_``).

    Linear input/output maps and positional parameters are the caller's to set (``identity_``, zeros).
    """
    for m in module.modules():
        if isinstance(m, nn.TransformerEncoderLayer):
            zero_residual_(m)
    return module
