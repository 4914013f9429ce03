"""The catalogue as data: every activation's name, formula and original reference (torch-free).

Kunc & Kléma's survey of 400 activation functions (arXiv:2402.09092) links each function to the
paper that introduced it; this table does the same for the functions the plugin implements, so
``plugin.py`` can describe every model without importing torch, and ``layers.py`` can check that
each entry has a layer class and each class an entry.

    >>> from zoo_activation_catalog.catalog import ENTRIES
    >>> ENTRIES["mish"].year
    2019
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Entry", "ENTRIES", "SURVEY"]

SURVEY = ("Three Decades of Activations: A Comprehensive Survey of 400 Activation Functions for Neural Networks",
          2024, "2402.09092")


@dataclass(frozen=True)
class Entry:
    """One activation: registry ``name``, its ``layers`` class, formula and original reference."""

    name: str
    cls: str
    formula: str
    reference: str
    year: int
    arxiv: str | None = None
    learnable: str = ""  # the learnable scalars and their initial values, empty when parameter-free

    @property
    def cite(self) -> str:
        """``Authors, "Title", year (arXiv:id)``."""
        return f"{self.reference}, {self.year}" + (f" (arXiv:{self.arxiv})" if self.arxiv else "")


_E = Entry
_ROWS = [
    # classic squashing functions
    _E("sigmoid", "Sigmoid", "1 / (1 + exp(-x))",
       'Rumelhart, Hinton & Williams, "Learning representations by back-propagating errors"', 1986),
    _E("tanh", "Tanh", "tanh(x)", 'LeCun, Bottou, Orr & Müller, "Efficient BackProp"', 1998),
    _E("lecun_tanh", "LeCunTanh", "1.7159 tanh(2x/3)", 'LeCun, Bottou, Orr & Müller, "Efficient BackProp"', 1998),
    _E("hardtanh", "HardTanh", "clip(x, -1, 1)", 'Collobert, "Large Scale Machine Learning" (PhD thesis)', 2004),
    _E("hard_sigmoid", "HardSigmoid", "clip((x + 1) / 2, 0, 1)",
       'Courbariaux, Bengio & David, "BinaryConnect: Training deep neural networks with binary weights during '
       'propagations"', 2015, "1511.00363"),
    _E("softsign", "Softsign", "x / (1 + |x|)",
       'Elliott, "A better activation function for artificial neural networks" (ISR technical report)', 1993),
    _E("isru", "ISRU", "x / sqrt(1 + x^2)",
       'Carlile et al., "Improving deep learning by inverse square root linear units '
       '(ISRLUs)"', 2017, "1710.09967"),
    _E("sqnl", "SQNL", "1 (x > 2); x - x^2/4 (0 <= x <= 2); x + x^2/4 (-2 <= x < 0); -1 (x < -2)",
       'Wuraola & Patel, "SQNL: A new computationally efficient activation function" (IJCNN)', 2018),
    _E("penalized_tanh", "PenalizedTanh", "tanh(x) (x > 0); 0.25 tanh(x) (x <= 0)",
       'Xu, Huang & Li, "Revise saturated activation functions"', 2016, "1602.05980"),
    # rectifiers
    _E("relu", "ReLU", "max(0, x)",
       'Nair & Hinton, "Rectified linear units improve restricted Boltzmann machines"', 2010),
    _E("leaky_relu", "LeakyReLU", "max(x, 0.01 x)",
       'Maas, Hannun & Ng, "Rectifier nonlinearities improve neural network acoustic models"', 2013),
    _E("prelu", "PReLU", "max(0, x) + a min(0, x)",
       'He, Zhang, Ren & Sun, "Delving deep into rectifiers: Surpassing human-level performance on ImageNet '
       'classification"', 2015, "1502.01852", "a = 0.25"),
    _E("rrelu", "RReLU", "x (x >= 0); x / a (x < 0), a ~ U(3, 8) in training, a = (3 + 8) / 2 at test",
       'Xu et al., "Empirical evaluation of rectified activations in convolutional network"', 2015,
       "1505.00853"),
    _E("relu6", "ReLU6", "min(max(0, x), 6)", 'Krizhevsky, "Convolutional deep belief networks on CIFAR-10"', 2010),
    _E("srelu", "SReLU", "t_r + a_r (x - t_r) (x >= t_r); x (t_l < x < t_r); t_l + a_l (x - t_l) (x <= t_l)",
       'Jin et al., "Deep learning with S-shaped rectified linear activation units"', 2016,
       "1512.07030", "t_l = 0, a_l = 0.2, t_r = 1, a_r = 1"),
    _E("apl", "APL", "max(0, x) + sum_s a_s max(0, -x + b_s), S = 2",
       'Agostinelli et al., "Learning activation functions to improve deep neural networks"',
       2014, "1412.6830", "a = (0, 0), b = (-0.5, 0.5)"),
    _E("relu_squared", "ReLUSquared", "max(0, x)^2",
       'So et al., "Primer: Searching for efficient transformers for language modeling"',
       2021, "2109.08668"),
    _E("star_relu", "StarReLU", "s max(0, x)^2 + b",
       'Yu et al., "MetaFormer baselines for vision"', 2022, "2210.13452",
       "s = 0.8944, b = -0.4472"),
    _E("nlrelu", "NLReLU", "ln(max(0, x) + 1)",
       'Liu et al., "Natural-logarithm-rectified activation function in convolutional neural networks"', 2019,
       "1908.03682"),
    # exponential linear units
    _E("elu", "ELU", "x (x > 0); exp(x) - 1 (x <= 0)",
       'Clevert, Unterthiner & Hochreiter, "Fast and accurate deep network learning by exponential linear units '
       '(ELUs)"', 2015, "1511.07289"),
    _E("selu", "SELU", "1.0507 (x (x > 0); 1.6733 (exp(x) - 1) (x <= 0))",
       'Klambauer et al., "Self-normalizing neural networks"', 2017, "1706.02515"),
    _E("pelu", "PELU", "(a / b) x (x >= 0); a (exp(x / b) - 1) (x < 0), a, b > 0",
       'Trottier, Giguère & Chaib-draa, "Parametric exponential linear unit for deep convolutional neural networks"',
       2017, "1605.09332", "a = b = 1 (kept >= 0.1)"),
    _E("isrlu", "ISRLU", "x (x >= 0); x / sqrt(1 + x^2) (x < 0)",
       'Carlile et al., "Improving deep learning by inverse square root linear units '
       '(ISRLUs)"', 2017, "1710.09967"),
    _E("elish", "ELiSH", "x sigmoid(x) (x >= 0); (exp(x) - 1) sigmoid(x) (x < 0)",
       'Basirat & Roth, "The quest for the golden activation function"', 2018, "1808.00783"),
    _E("hard_elish", "HardELiSH", "x h(x) (x >= 0); (exp(x) - 1) h(x) (x < 0), h(x) = clip((x + 1) / 2, 0, 1)",
       'Basirat & Roth, "The quest for the golden activation function"', 2018, "1808.00783"),
    # softplus family
    _E("softplus", "Softplus", "ln(1 + exp(x))",
       'Dugas et al., "Incorporating second-order functional knowledge for better option '
       'pricing"', 2001),
    _E("shifted_softplus", "ShiftedSoftplus", "ln(0.5 exp(x) + 0.5)",
       'Schütt et al., "SchNet: A continuous-filter convolutional '
       'neural network for modeling quantum interactions"', 2017, "1706.08566"),
    # self-gated x * g(x)
    _E("gelu", "GELU", "x Phi(x)", 'Hendrycks & Gimpel, "Gaussian error linear units (GELUs)"', 2016, "1606.08415"),
    _E("quick_gelu", "QuickGELU", "x sigmoid(1.702 x)",
       'Hendrycks & Gimpel, "Gaussian error linear units (GELUs)" (sigmoid approximation)', 2016, "1606.08415"),
    _E("silu", "SiLU", "x sigmoid(x)",
       'Elfwing, Uchibe & Doya, "Sigmoid-weighted linear units for neural network function approximation in '
       'reinforcement learning"', 2018, "1702.03118"),
    _E("dsilu", "DSiLU", "sigmoid(x) (1 + x (1 - sigmoid(x)))",
       'Elfwing, Uchibe & Doya, "Sigmoid-weighted linear units for neural network function approximation in '
       'reinforcement learning"', 2018, "1702.03118"),
    _E("swish", "Swish", "x sigmoid(beta x)", 'Ramachandran, Zoph & Le, "Searching for activation functions"', 2017,
       "1710.05941", "beta = 1"),
    _E("e_swish", "ESwish", "1.375 x sigmoid(x)",
       'Alcaide, "E-swish: Adjusting activations to different network depths"', 2018, "1801.07145"),
    _E("hard_swish", "HardSwish", "x relu6(x + 3) / 6",
       'Howard et al., "Searching for MobileNetV3"',
       2019, "1905.02244"),
    _E("mish", "Mish", "x tanh(softplus(x))",
       'Misra, "Mish: A self regularized non-monotonic activation function"', 2019, "1908.08681"),
    _E("lisht", "LiSHT", "x tanh(x)",
       'Roy et al., "LiSHT: Non-parametric linearly scaled hyperbolic tangent activation '
       'function for neural networks"', 2019, "1901.05894"),
    _E("tanhexp", "TanhExp", "x tanh(exp(x))",
       'Liu & Di, "TanhExp: A smooth activation function with high convergence speed for lightweight neural '
       'networks"', 2020, "2003.09855"),
    _E("serf", "Serf", "x erf(ln(1 + exp(x)))",
       'Nag & Bhattacharyya, "SERF: Towards better training of deep neural networks using log-Softplus ERror '
       'activation Function"', 2021, "2108.09598"),
    _E("smish", "Smish", "x tanh(ln(1 + sigmoid(x)))",
       'Wang et al., "Smish: A novel activation function for deep learning methods" (Electronics)', 2022),
    _E("logish", "Logish", "x ln(1 + sigmoid(x))",
       'Zhu et al., "Logish: A new nonlinear nonmonotonic activation function for convolutional neural '
       'network" (Neurocomputing)', 2021),
    _E("phish", "Phish", "x tanh(GELU(x))", 'Naveen, "Phish: A novel hyper-optimizable activation function"', 2022),
    _E("pflu", "PFLU", "x (1 + x / sqrt(1 + x^2)) / 2",
       'Zhu et al., "PFLU and FPFLU: Two novel non-monotonic activation functions in convolutional neural '
       'networks" (Neurocomputing)', 2021),
    _E("fts", "FTS", "x sigmoid(x) - 0.2 (x >= 0); -0.2 (x < 0)",
       'Chieng et al., "Flatten-T Swish: a thresholded ReLU-Swish-like activation function for '
       'deep learning"', 2018, "1812.06247"),
    _E("aptx", "APTx", "(1 + tanh(x)) x / 2",
       'Kumar, "APTx: better activation function than MISH, SWISH, and ReLU\'s variants used in deep learning"',
       2022, "2209.06119"),
    _E("acon_c", "ACONC", "(p1 - p2) x sigmoid(beta (p1 - p2) x) + p2 x",
       'Ma et al., "Activate or not: Learning customized activation"', 2021, "2009.04759",
       "p1 = 1, p2 = 0, beta = 1"),
    # other shapes
    _E("gaussian", "Gaussian", "exp(-x^2)",
       'Broomhead & Lowe, "Multivariable functional interpolation and adaptive networks" (Complex Systems)', 1988),
    _E("sine", "Sine", "sin(x)",
       'Sopena, Romero & Alquézar, "Neural networks with periodic and monotonic activation functions: a '
       'comparative study in classification problems" (ICANN)', 1999),
    _E("gcu", "GCU", "x cos(x)",
       'Noel et al., "Growing cosine unit: A novel oscillatory activation function that can '
       'speedup training and reduce parameters in convolutional neural networks"', 2021, "2108.12943"),
    _E("snake", "Snake", "x + sin(x)^2",
       'Liu Ziyin, Hartwig & Ueda, "Neural networks fail to learn periodic functions and how to fix it"', 2020,
       "2006.08195"),
    _E("softshrink", "Softshrink", "sign(x) max(|x| - 0.5, 0)",
       'Gregor & LeCun, "Learning fast approximations of sparse coding" (soft-thresholding as the LISTA '
       'nonlinearity)', 2010),
    _E("rational", "Rational", "(p3 x^3 + p2 x^2 + p1 x + p0) / (q2 x^2 + q1 x + 1)",
       'Boullé, Nakatsukasa & Townsend, "Rational neural networks"', 2020, "2004.01902",
       "p = (1.1915, 1.5957, 0.5, 0.0218), q = (2.383, 0.0) (best type-(3,2) fit of ReLU on [-1, 1])"),
]
ENTRIES: dict[str, Entry] = {e.name: e for e in _ROWS}
if len(ENTRIES) != len(_ROWS):  # pragma: no cover - a duplicate name is a bug in this file
    raise RuntimeError("duplicate activation names in the catalogue")
