"""VaMoH: Variational Mixture of HyperGenerators (Koyuncu, Sanchez-Martin, Peis, Olmos, Valera, ICML 2023, Sec. 3).

A datum is a function, observed as a set D = {(x_d, y_d)} of coordinates and values. Generative
model (Sec. 3.1): z ~ p(z), a normalizing flow (``flow.FlowPrior``); K hypernetworks map z to the
weights theta_k = g_k(z) of K coordinate networks f_k (Fourier features, then a LeakyReLU MLP);
each coordinate picks one of them, c_d ~ Cat(pi(x_d, z)), with logits from an MLP of
[gamma(x_d), z]; and y_d | c_d = k ~ N(sigmoid(f_k(x_d; theta_k)), sigma^2). So
p(y_d | z) = sum_k pi_k(x_d, z) N(y_d; mu_k(x_d), sigma^2).

Inference (Sec. 3.2): q(z | D) = N(mu, diag(exp(logvar))) from a PointConv set encoder
(``encoder.PointConvEncoder``), and q(c_d | x_d, y_d, z) = Cat from an MLP of [gamma(x_d), y_d, z].
With D_obs the coordinates the encoder sees, the ELBO is

    sum_d { E_{q(c_d)}[log N(y_d; mu_{c_d}(x_d), sigma^2)] - KL(q(c_d | .) || pi(x_d, z)) }
        - beta * (log q(z | D_obs) - log p_flow(z)),   z ~ q(z | D_obs)  (one reparameterised sample),

the sum running over D_obs as in the authors' training with missing data (the default), or over
every coordinate with ``score_all=True`` (still a lower bound on log p(all values) for any q, but
it scores the very pixels hidden from the encoder: not the paper's objective).

Training schedule, from the authors' configuration (PolyMNIST): the component prior pi is held
uniform for the first sixth of training and the flow is held at its initial identity (p(z) =
N(0, I)) for the first third. Our addition against posterior collapse: beta warms up linearly from
0 over ``kl_warmup`` of the steps. Every coordinate network starts as a properly initialised MLP:
the last layer of each hypernetwork has a bias drawn as a fresh PyTorch-initialised INR and weights
scaled so that the z-dependent part has that same per-tensor scale for z ~ N(0, I).
"""
from __future__ import annotations

import logging
import math

import torch
from torch import nn
from torch.nn import functional as F

from zoo.task import run_budget
from zoo_nn.inr import FourierFeatures
from zoo_task_image_fit.signal_set import SignalSet, coord_grid, minibatches

from .encoder import PointConvEncoder, scaled_anchors
from .flow import FlowPrior

log = logging.getLogger(__name__)

_LEAK = 0.1  # the authors' LeakyReLU slope in the coordinate networks, hypernetworks and mixture MLPs


def mlp(dims: list[int]) -> nn.Sequential:
    """Linear layers of widths ``dims`` with LeakyReLU(0.1) between them (none after the last).

    >>> mlp([3, 8, 2])(torch.zeros(5, 3)).shape
    torch.Size([5, 2])
    """
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        layers.append(nn.Linear(a, b))
        if i < len(dims) - 2:
            layers.append(nn.LeakyReLU(_LEAK))
    return nn.Sequential(*layers)


def gaussian_log_prob(y: torch.Tensor, mean: torch.Tensor, std: float) -> torch.Tensor:
    """Elementwise log N(y; mean, std^2).

    >>> round(gaussian_log_prob(torch.tensor(0.0), torch.tensor(0.0), 1.0).item(), 4)  # -log sqrt(2 pi)
    -0.9189
    """
    return -0.5 * ((y - mean) / std) ** 2 - math.log(std) - 0.5 * math.log(2 * math.pi)


def mixture_terms(log_lik: torch.Tensor, prior_logits: torch.Tensor,
                  post_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-coordinate E_q[log p(y | c)] and KL(q(c) || p(c)) from (..., K) log-likelihoods and logits.

    Their difference is a lower bound on log sum_k p_k N_k, exact when q(c) is the true
    responsibility (p_k N_k / sum_j p_j N_j).

    >>> rec, kl = mixture_terms(torch.tensor([-1.0, -3.0]), torch.zeros(2), torch.tensor([0.0, -100.0]))
    >>> round(rec.item(), 4), round(kl.item(), 4)  # q picks component 0; KL to a uniform prior = log 2
    (-1.0, 0.6931)
    """
    log_q, log_p = F.log_softmax(post_logits, -1), F.log_softmax(prior_logits, -1)
    q = log_q.exp()
    return (q * log_lik).sum(-1), (q * (log_q - log_p)).sum(-1)


def random_masks(batch: int, n: int, max_missing: float, generator: torch.Generator) -> torch.Tensor:
    """Observed-pixel masks (batch, n): a missing rate r ~ U(0, ``max_missing``) for the batch, then
    a random r of each datum's coordinates hidden (the authors' missingness scheme).

    >>> random_masks(2, 10, 0.0, torch.Generator().manual_seed(0)).all().item()
    True
    """
    rate = float(torch.rand(1, generator=generator)) * max_missing
    keep = n - int(round(rate * n))
    order = torch.rand(batch, n, generator=generator).argsort(1)
    return torch.zeros(batch, n, dtype=torch.bool).scatter_(1, order[:, :keep], True)


class VaMoH(nn.Module):
    """VaMoH over 2-D coordinates: images (B, H, W, C) -> reconstructions (B, H, W, C) at the posterior mean.

    >>> m = VaMoH(latent_dim=4, components=2, hidden=4, hyper_hidden=(8,), cat_hidden=(8,), enc_width=8)
    >>> m(torch.rand(2, 8, 8, 1)).shape
    torch.Size([2, 8, 8, 1])
    """

    def __init__(self, channels: int = 1, latent_dim: int = 16, components: int = 4, hidden: int = 16,
                 layers: int = 2, n_freq: int = 32, ff_sigma: float = 1.0, hyper_hidden: tuple[int, ...] = (64, 64),
                 cat_hidden: tuple[int, ...] = (32, 32), flow_layers: int = 3, enc_width: int = 64,
                 anchors: tuple[int, ...] | None = None, neighbors: tuple[int, ...] = (9, 4), noise_std: float = 0.1,
                 kl_warmup: float = 0.2, cat_prior_start: float = 1 / 6, flow_start: float = 1 / 3,
                 max_missing: float = 0.75, score_all: bool = False, lr: float = 3e-3, batch_size: int = 32,
                 seed: int = 0, image_size: int = 8):
        super().__init__()
        self.channels, self.latent_dim, self.components = channels, latent_dim, components
        self.noise_std, self.kl_warmup, self.max_missing, self.score_all = noise_std, kl_warmup, max_missing, score_all
        self.cat_prior_start, self.flow_start = cat_prior_start, flow_start
        self.default_lr, self.batch_size = lr, batch_size
        self.image_size = (image_size, image_size)  # the grid ``sample`` draws on; set by ``fit``
        # anchors follow the image size unless given: each PointConv layer halves the resolution
        self.anchor_size = image_size if anchors is None else None
        anchors = scaled_anchors(image_size, len(neighbors)) if anchors is None else tuple(anchors)
        self.features = FourierFeatures(2, n_freq, ff_sigma, seed)
        f = self.features.out_features
        dims = [f] + [hidden] * layers + [channels]
        self.shapes = [(o, i) for i, o in zip(dims[:-1], dims[1:], strict=True)]  # (fan_out, fan_in) per layer
        n_theta = sum(o * i + o for o, i in self.shapes)
        self.hypernets = nn.ModuleList([mlp([latent_dim, *hyper_hidden, n_theta]) for _ in range(components)])
        self.cat_prior = mlp([f + latent_dim, *cat_hidden, components])
        self.cat_post = mlp([f + channels + latent_dim, *cat_hidden, components])
        self.encoder = PointConvEncoder(channels, latent_dim, enc_width, tuple(anchors), tuple(neighbors))
        self.prior = FlowPrior(latent_dim, flow_layers)
        self._init_hypernet_heads()

    # ---------------------------------------------------------------------------------- init
    @torch.no_grad()
    def _init_hypernet_heads(self) -> None:
        z = torch.randn(256, self.latent_dim)  # prior draws, to measure the head's input scale
        for net in self.hypernets:
            head: nn.Linear = net[-1]
            rms = net[:-1](z).pow(2).mean().sqrt().clamp_min(1e-6)
            base, std = [], []
            for fan_out, fan_in in self.shapes:  # a fresh nn.Linear per INR layer: U(-1/sqrt(in), 1/sqrt(in))
                lin = nn.Linear(fan_in, fan_out)
                base += [lin.weight.flatten(), lin.bias]
                std.append(torch.full((fan_out * fan_in + fan_out,), 1.0 / math.sqrt(3 * fan_in)))
            head.bias.copy_(torch.cat(base))
            head.weight.normal_().mul_((torch.cat(std) / (rms * math.sqrt(head.in_features))).unsqueeze(1))

    # ------------------------------------------------------------------------------- pieces
    def encode(self, coords: torch.Tensor, values: torch.Tensor,
               mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """q(z | D): coords (B, N, 2), values (B, N, C), optional observed mask (B, N) -> (mu, logvar) (B, k)."""
        return self.encoder(coords, values, mask)

    def _coords(self, coords: torch.Tensor, b: int) -> torch.Tensor:
        return coords.unsqueeze(0).expand(b, -1, -1) if coords.dim() == 2 else coords

    def component_means(self, z: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """mu_k(x) = sigmoid(f_k(x; g_k(z))) for every component: (B, M, C, K)."""
        b, k = z.shape[0], self.components
        g = self.features(self._coords(coords, b))  # (B, M, F)
        theta = torch.cat([net(z) for net in self.hypernets])  # (K*B, n_theta), component-major
        h, start = g.repeat(k, 1, 1), 0
        for i, (fan_out, fan_in) in enumerate(self.shapes):
            w = theta[:, start:start + fan_out * fan_in].view(-1, fan_out, fan_in)
            start += fan_out * fan_in
            bias = theta[:, start:start + fan_out]
            start += fan_out
            h = torch.baddbmm(bias.unsqueeze(1), h, w.transpose(1, 2))
            if i < len(self.shapes) - 1:
                h = F.leaky_relu(h, _LEAK)
        return torch.sigmoid(h).view(k, b, *h.shape[1:]).permute(1, 2, 3, 0)

    def mixture_logits(self, z: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """Logits of pi(x_d, z), the prior over which component generates coordinate x_d: (B, M, K)."""
        g = self.features(self._coords(coords, z.shape[0]))
        return self.cat_prior(torch.cat([g, z.unsqueeze(1).expand(-1, g.shape[1], -1)], -1))

    def posterior_logits(self, z: torch.Tensor, coords: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Logits of q(c_d | x_d, y_d, z): (B, N, K)."""
        g = self.features(self._coords(coords, z.shape[0]))
        return self.cat_post(torch.cat([g, values, z.unsqueeze(1).expand(-1, g.shape[1], -1)], -1))

    def decode(self, z: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """E[y | z, x] = sum_k pi_k(x, z) mu_k(x): z (B, k), coords (B, M, 2) or (M, 2) -> (B, M, C)."""
        pi = F.softmax(self.mixture_logits(z, coords), -1)
        return (self.component_means(z, coords) * pi.unsqueeze(2)).sum(-1)

    def log_likelihood(self, z: torch.Tensor, coords: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Exact log p(y_d | z) = log sum_k pi_k N(y_d; mu_k, sigma^2) per coordinate: (B, N)."""
        log_n = gaussian_log_prob(values.unsqueeze(-1), self.component_means(z, coords), self.noise_std).sum(2)
        return torch.logsumexp(log_n + F.log_softmax(self.mixture_logits(z, coords), -1), -1)

    # -------------------------------------------------------------------------------- ELBO
    def elbo(self, coords: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None, *,
             beta: float = 1.0, uniform_pi: bool = False, score_all: bool = False) -> dict[str, torch.Tensor]:
        """The ELBO per datum (B,) and its parts.

        The encoder sees the observed coordinates (``mask`` (B, N); all when None); the likelihood
        covers them too, or every coordinate with ``score_all`` (a valid bound on log p(all values)
        for any q, usable when the training data are complete).
        """
        b = values.shape[0]
        coords = self._coords(coords, b)
        mask = torch.ones(values.shape[:2], dtype=torch.bool, device=values.device) if mask is None else mask
        mu, logvar = self.encode(coords, values, mask)
        std = torch.exp(0.5 * logvar)
        z = mu + std * torch.randn_like(std)
        log_q = (-0.5 * ((z - mu) / std) ** 2 - 0.5 * logvar - 0.5 * math.log(2 * math.pi)).sum(-1)
        kl_z = log_q - self.prior.log_prob(z)  # one-sample Monte Carlo estimate of KL(q(z|D) || p(z))
        means = self.component_means(z, coords)  # (B, N, C, K)
        log_n = gaussian_log_prob(values.unsqueeze(-1), means, self.noise_std).sum(2)  # (B, N, K)
        prior_logits = self.mixture_logits(z, coords)
        if uniform_pi:
            prior_logits = torch.zeros_like(prior_logits)
        rec, kl_c = mixture_terms(log_n, prior_logits, self.posterior_logits(z, coords, values))
        m = torch.ones_like(mask, dtype=values.dtype) if score_all else mask.to(values.dtype)
        rec, kl_c = (rec * m).sum(1), (kl_c * m).sum(1)
        pred = (means * F.softmax(prior_logits, -1).unsqueeze(2)).sum(-1)
        mse = (((pred - values) ** 2).mean(-1) * m).sum(1) / m.sum(1)
        return {"elbo": rec - kl_c - beta * kl_z, "rec": rec, "kl_c": kl_c, "kl_z": kl_z, "mse": mse}

    # ------------------------------------------------------------------------- task contract
    def predict(self, coords: torch.Tensor, values: torch.Tensor, out_coords: torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """Condition on a set (coords (B, N, 2) or (N, 2), values (B, N, C), optional observed ``mask``
        (B, N)) and evaluate the function at ``out_coords`` (M, 2) at the posterior mean z: (B, M, C).

        In-painting is ``out_coords`` = the full grid with a ``mask``; super-resolution is a coarse
        ``coords`` grid and a finer ``out_coords`` grid.
        """
        with torch.no_grad():
            mu, _ = self.encode(self._coords(coords, values.shape[0]), values, mask)
            return self.decode(mu, out_coords)

    def reconstruct(self, images: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Encode the observed pixels (``mask`` (B, H, W), all when None), decode every pixel at the mean z."""
        b, h, w, c = images.shape
        coords = coord_grid(h, w).to(images)
        out = self.predict(coords, images.reshape(b, h * w, c), coords, None if mask is None else mask.reshape(b, -1))
        return out.reshape(b, h, w, c)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.reconstruct(images)

    def sample(self, n: int, size: tuple[int, int] | None = None, seed: int = 0) -> torch.Tensor:
        """n functions drawn from the model (z ~ flow prior), rendered on a ``size`` grid: (n, H, W, C)."""
        h, w = size or self.image_size
        with torch.no_grad():
            z = self.prior.sample(n, torch.Generator().manual_seed(seed))
            return self.decode(z, coord_grid(h, w)).reshape(n, h, w, self.channels)

    def fit(self, signal_set: SignalSet, *, steps: int = 2000, seed: int = 0, progress: str | None = None) -> dict:
        """Adam (``default_lr``) on -ELBO per pixel over minibatches, each with a random fraction of pixels missing.

        Per batch a missing rate r ~ U(0, ``max_missing``) is drawn (the authors' scheme) and every
        image loses a random r of its pixels (``random_masks``); the encoder sees the rest, the
        likelihood covers them too or, with ``score_all``, every pixel. Returns
        ``run_budget``'s figures, ``losses`` (per-step MSE of the mixture mean on the observed
        pixels) and ``elbo`` (per-step ELBO per pixel).
        """
        x = signal_set.train
        n, h, w, c = x.shape
        if self.anchor_size is not None and max(h, w) != self.anchor_size:
            log.warning("vamoh: encoder anchors were scaled for %dx%d images but the data are %dx%d; the encoder "
                        "sees part of each image: create the model with image_size=%d", self.anchor_size,
                        self.anchor_size, h, w, max(h, w))
        self.image_size = (h, w)
        coords = coord_grid(h, w)
        nxt = minibatches(n, self.batch_size, seed)
        g = torch.Generator().manual_seed(seed + 1)
        opt = torch.optim.Adam(self.parameters(), lr=self.default_lr)
        flow_params = list(self.prior.parameters())
        losses: list[float] = []
        elbos: list[float] = []
        self.train()

        def step(i: int) -> float:
            xb = x[nxt()].reshape(-1, h * w, c)
            mask = random_masks(xb.shape[0], h * w, self.max_missing, g)
            frac = i / max(steps, 1)
            beta = min(1.0, frac / self.kl_warmup) if self.kl_warmup > 0 else 1.0
            out = self.elbo(coords, xb, mask, beta=beta, uniform_pi=frac < self.cat_prior_start,
                             score_all=self.score_all)
            loss = -out["elbo"].mean() / (h * w)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if frac < self.flow_start:  # the flow stays the identity (p(z) = N(0, I)) in the first phase
                for p in flow_params:
                    p.grad = None
            opt.step()
            losses.append(out["mse"].mean().item())
            elbos.append(-loss.item())
            return losses[-1]

        fig = run_budget(step, steps=steps, budget_s=None, progress=progress)
        fig.update(losses=losses, elbo=elbos)
        self.eval()
        return fig


def vamoh_ff(channels: int = 1, latent_dim: int = 16, components: int = 4, hidden: int = 16, layers: int = 2,
          n_freq: int = 32, ff_sigma: float = 1.0, hyper_hidden: tuple[int, ...] = (64, 64),
          cat_hidden: tuple[int, ...] = (32, 32), flow_layers: int = 3, enc_width: int = 64,
          anchors: tuple[int, ...] | None = None, neighbors: tuple[int, ...] = (9, 4), noise_std: float = 0.1,
          kl_warmup: float = 0.2, cat_prior_start: float = 1 / 6, flow_start: float = 1 / 3,
          max_missing: float = 0.75, score_all: bool = False, lr: float = 3e-3, batch_size: int = 32,
          seed: int = 0, image_size: int = 8) -> VaMoH:
    """VaMoH sized for 8x8 digits on a CPU (see the README for the authors' PolyMNIST sizes).

    >>> vamoh_ff(latent_dim=4, components=2, hyper_hidden=(8,), enc_width=8).decode(torch.zeros(1, 4),
    ...                                                                             coord_grid(16, 16)).shape
    torch.Size([1, 256, 1])
    """
    return VaMoH(channels, latent_dim, components, hidden, layers, n_freq, ff_sigma, hyper_hidden, cat_hidden,
                 flow_layers, enc_width, anchors, neighbors, noise_std, kl_warmup, cat_prior_start, flow_start,
                 max_missing, score_all, lr, batch_size, seed, image_size)
