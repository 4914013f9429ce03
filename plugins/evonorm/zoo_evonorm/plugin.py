"""zoo hooks for EvoNorms: the tiny ResNet with B0, S0 and its BN-ReLU/GN-ReLU baselines (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Evolving Normalization-Activation Layers", year=2020, arxiv="2004.02967", catalog=27)

TASK = "digits_classify"
CLAIM = ("EvoNorms outperform BatchNorm- and GroupNorm-based layers in many cases (small scale: in one tiny "
         "pre-activation ResNet on digits_classify, 5 seeds, EvoNorm-S0's test accuracy is >= BN-ReLU's at "
         "batch 128 and at batch 4, and >= GN-ReLU's at batch 4, paired over seeds, on the digits and on "
         "Fashion-MNIST at 8x8; EvoNorm-B0 is reported beside them)")

_ARCH = ("tiny pre-activation ResNet (digits upsampled to 16x16, conv stem, one block per stage at widths 8/16/32, "
         "global pool, linear head)")
_MODELS = {
    "tinyresnet_evonorm_s0": "every norm-activation layer is EvoNorm-S0: x*sigmoid(v1*x)/group_std(x)*gamma+beta "
                             "(4 groups, v1=gamma=1, beta=0)",
    "tinyresnet_evonorm_b0": "every norm-activation layer is EvoNorm-B0: x/max(batch_std(x), v1*x+instance_std(x))"
                             "*gamma+beta (running batch variance at eval, v1=gamma=1, beta=0)",
    "tinyresnet_bn_relu": "BatchNorm2d + ReLU everywhere (the BN-ReLU baseline of the EvoNorm claim)",
    "tinyresnet_gn_relu": "GroupNorm (4 groups) + ReLU everywhere (the GN-ReLU baseline of the EvoNorm claim)",
}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name=name, builder=f"zoo_evonorm.model:{name}", task=TASK, paper=PAPER,
                      description=f"{_ARCH}; {what}")
            for name, what in _MODELS.items()]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="evonorm", claim=CLAIM, reproduce="zoo_evonorm.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
