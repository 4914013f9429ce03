"""SimSiam: Exploring Simple Siamese Representation Learning (Chen & He, CVPR 2021, arXiv 2011.10566).

Sec. 3 (Fig. 1, Algorithm 1): two augmented views x1, x2 of an image go through the same encoder f (backbone +
projection MLP) giving z1, z2; a prediction MLP h maps each to p1, p2; the loss is the symmetrised negative cosine

    L = 1/2 D(p1, stopgrad(z2)) + 1/2 D(p2, stopgrad(z1)),   D(p, z) = -<p/||p||, z/||z||>,

and the stop-gradient is what prevents collapse (Sec. 4.1: without it the per-channel std of the l2-normalised
output drops to 0 and kNN accuracy to chance). Architecture (Sec. 3 "Baseline settings"): the projection MLP has 3
fc layers with BN on each, the output fc without ReLU (hidden and output 2048-d); the predictor has 2 fc layers, BN
and ReLU on the hidden one (512-d: a bottleneck of 1/4), the output fc with neither. Optimiser: SGD, lr = 0.05 x
batch / 256, momentum 0.9, weight decay 1e-4, cosine decay; the predictor keeps a fixed lr (Sec. 4.4 / Table 1
discussion). ``PAPER`` holds these values; ``ssl_defaults`` carries the optimiser to the task.

Deviations (CPU scale): the backbone is the ``ssl_probe`` task's small BN CNN (``ConvEncoder``, width 16: 4x16 = 64
features) instead of ResNet-50; projector/predictor widths are scaled from 2048/512 to ``dim`` = 256 and
``pred_dim`` = 64 (the 1/4 bottleneck kept); batch 128 instead of 512. The optimiser: AdamW (lr 1e-3, the paper's
weight decay 1e-4, cosine, predictor at a fixed lr) by default, chosen on a digits pilot at 300 steps where the
paper's SGD rule (lr 0.05 x 128/256 = 0.025) gave kNN 0.936, below the untrained encoder's 0.940, and AdamW 0.958
(at 500 steps both reach 0.959: README). ``optimizer="sgd"`` gives the paper's rule exactly.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_ssl_probe.baselines import encoder_for

PAPER: dict[str, Any] = {"dim": 2048, "pred_dim": 512, "proj_layers": 3, "batch": 512, "base_lr": 0.05,
                         "momentum": 0.9, "weight_decay": 1e-4, "backbone": "ResNet-50"}
CPU: dict[str, Any] = {"width": 16, "dim": 256, "pred_dim": 64, "proj_layers": 3, "batch": 128}


def negative_cosine(p: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """D(p, z) = -mean over the batch of cos(p, z) (Eq. 1); the caller detaches ``z`` for the stop-gradient.

    >>> float(negative_cosine(torch.tensor([[1.0, 0.0]]), torch.tensor([[2.0, 0.0]])))
    -1.0
    """
    return -F.cosine_similarity(p, z, dim=-1).mean()


def projection_mlp(in_dim: int, dim: int, layers: int = 3) -> nn.Sequential:
    """f's projection MLP: ``layers`` fc layers, BN on every one, ReLU on all but the output (Sec. 3); fc layers
    without bias (BN follows each) and the output BN without affine parameters, as in the official code."""
    mods: list[nn.Module] = []
    d = in_dim
    for i in range(layers):
        last = i == layers - 1
        mods += [nn.Linear(d, dim, bias=False), nn.BatchNorm1d(dim, affine=not last)]
        if not last:
            mods.append(nn.ReLU(inplace=True))
        d = dim
    return nn.Sequential(*mods)


def prediction_mlp(dim: int, pred_dim: int) -> nn.Sequential:
    """h: fc -> BN -> ReLU -> fc (bottleneck ``pred_dim``; the output fc has bias, no BN, no ReLU)."""
    return nn.Sequential(nn.Linear(dim, pred_dim, bias=False), nn.BatchNorm1d(pred_dim), nn.ReLU(inplace=True),
                         nn.Linear(pred_dim, dim))


class SimSiam(nn.Module):
    """SimSiam on the ``ssl_probe`` contract: ``encode(x)`` = backbone features; ``ssl_loss(x1, x2)`` = Eq. (2).

    ``stop_gradient=False`` is the Sec. 4.1 ablation (gradients flow into both branches); ``predictor=False`` drops
    h (Sec. 4.2, also collapses). ``optimizer="sgd"`` is the paper's rule, ``"adamw"`` (default) the CPU one.

    >>> m = SimSiam(width=4, dim=16, pred_dim=4)
    >>> m.encode(torch.rand(3, 1, 28, 28)).shape, m.ssl_loss(torch.rand(5, 1, 8, 8), torch.rand(5, 1, 8, 8)).ndim
    (torch.Size([3, 16]), 0)
    """

    ssl_views = 2

    def __init__(self, width: int = CPU["width"], dim: int = CPU["dim"], pred_dim: int = CPU["pred_dim"],
                 proj_layers: int = CPU["proj_layers"], stop_gradient: bool = True, predictor: bool = True,
                 input_kind: str = "image", optimizer: str = "adamw", batch: int = CPU["batch"],
                 base_lr: float = PAPER["base_lr"], weight_decay: float = PAPER["weight_decay"],
                 adamw_lr: float = 1e-3):
        super().__init__()
        if optimizer not in ("sgd", "adamw"):
            raise ValueError(f"SimSiam: optimizer={optimizer!r}; choose 'sgd' (the paper's) or 'adamw'")
        if proj_layers < 1 or dim < 1 or pred_dim < 1 or width < 1:
            raise ValueError(f"SimSiam: width, dim, pred_dim and proj_layers must be >= 1, got {width}, {dim}, "
                             f"{pred_dim}, {proj_layers}")
        self.encoder = encoder_for(input_kind, width)  # the backbone: its features are the representation
        self.projector = projection_mlp(self.encoder.num_features, dim, proj_layers)
        self.predictor = prediction_mlp(dim, pred_dim) if predictor else nn.Identity()
        self.stop_gradient, self.ssl_input = stop_gradient, input_kind
        if optimizer == "sgd":  # Sec. 3: lr = base_lr x batch / 256, momentum 0.9, wd 1e-4, cosine decay
            self.ssl_defaults = {"optimizer": "sgd", "lr": base_lr * batch / 256, "momentum": PAPER["momentum"],
                                 "weight_decay": weight_decay, "batch": batch, "schedule": "cosine"}
        else:
            self.ssl_defaults = {"optimizer": "adamw", "lr": adamw_lr, "weight_decay": weight_decay, "batch": batch,
                                 "schedule": "cosine"}

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder.encode(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encode(x)

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """z = f(x): backbone then projection MLP."""
        return self.projector(self.encoder.encode(x))

    def ssl_loss(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        """Eq. (2): 1/2 D(p1, sg(z2)) + 1/2 D(p2, sg(z1)); each view through f and h separately (Algorithm 1), so
        BatchNorm normalises each view with its own batch statistics."""
        z1, z2 = self.project(x1), self.project(x2)
        p1, p2 = self.predictor(z1), self.predictor(z2)
        t1, t2 = (z1.detach(), z2.detach()) if self.stop_gradient else (z1, z2)
        return 0.5 * negative_cosine(p1, t2) + 0.5 * negative_cosine(p2, t1)

    def ssl_param_groups(self) -> list[dict[str, Any]]:
        """The predictor at a fixed lr, the encoder and projector on the schedule (Sec. 4.4)."""
        return [{"params": list(self.encoder.parameters()) + list(self.projector.parameters())},
                {"params": list(self.predictor.parameters()), "fixed_lr": True}]


def simsiam(width: int = 16, dim: int = 256, pred_dim: int = 64, proj_layers: int = 3, stop_gradient: bool = True,
            predictor: bool = True, input_kind: str = "image", optimizer: str = "adamw", batch: int = 128,
            base_lr: float = 0.05, weight_decay: float = 1e-4, adamw_lr: float = 1e-3) -> SimSiam:
    """The zoo builder of ``simsiam_cnn`` (arguments as :class:`SimSiam`). No ``preset="paper"``: a ResNet-50 is not
    CPU-sized; ``dim=2048, pred_dim=512, batch=512, optimizer="sgd"`` gives the paper's heads, batch and optimiser
    on the small backbone."""
    return SimSiam(width=width, dim=dim, pred_dim=pred_dim, proj_layers=proj_layers, stop_gradient=stop_gradient,
                   predictor=predictor, input_kind=input_kind, optimizer=optimizer, batch=batch, base_lr=base_lr,
                   weight_decay=weight_decay, adamw_lr=adamw_lr)
