"""FRE, Functional Reward Encoding (Frans, Park, Abbeel and Levine 2024, arXiv:2402.17135; code github.com/kvfrans/fre).

A reward function is known only through samples ``{(s_k, r(s_k))}``. Section 4.1: a permutation-invariant transformer
(no positional encoding, mean-pooled) encodes the K = 32 pairs into a Gaussian latent ``z``; a decoder predicts
``r(s')`` at *other* states from ``(z, s')``; the pair is trained as a VAE, ``E[(d(z, s') - r(s'))^2] + kl_weight
KL(q(z | pairs) || N(0, I))`` (Eq. 2). Section 4.2: an offline RL agent conditioned on ``z`` (IQL: expectile value,
twin critics, advantage-weighted actor) is trained on reward-free transitions relabelled with rewards drawn from a
prior over *random unsupervised* reward functions (goal-reaching, linear, random-MLP, a third each), ``z`` entering
with its gradient stopped; the encoder first trains alone for a warm-up. Zero-shot, 32 labelled samples of a new
reward give ``z`` (the posterior mean) and the actor acts.

Following the official code: a state embedding (linear) concatenated with an embedding of the reward discretised into
32 bins over [-1, 1] as the token; 2 layers, 2 heads; ``z`` from linear mean and log-std heads; 8 decode pairs; the
KL term of that code; expectile 0.8, AWR temperature 3, advantage weights clipped at 100, the value regressed on the
minimum of target critics, Polyak target update.

Paper defaults (``preset="paper"``): token and ``z`` width 128, MLPs of (512, 512, 512), Adam lr 1e-4, batch 512,
tau 0.001, 1M steps (150k encoder warm-up), constant KL weight 0.01, the IQL agent (discount 0.99 there; the task's
0.9 here). CPU defaults (``CPU``, ``agent="value_iteration"``): width 32, decoder MLP (128, 128), lr 2e-3, 16 reward
functions per batch with 32 decode pairs each (the code's 8: more signal for the decoder at a small cost), the task's
budget of steps, and

* the agent plans instead of learning a value: ``policy(s, z)`` is value iteration on the decoded reward
  ``decode(z, every cell)`` over the grid's moves (all present in the offline data), the "tabular or value-iteration
  policy" the catalog allows at CPU scale. The IQL agent is built and trained with ``agent="iql"``; in a 600-step
  pilot its value had not propagated (V about 0.2 where the true mean is 7.9) and its policy was at the random level;
* the KL weight ramps from 0 to 0.01 over the first half of training and the log-std head starts at -3: with a
  constant KL, Adam drove the posterior to collapse within a few hundred steps (decoder loss stuck at the reward
  variance), and without it the joint VAE still sat on a ~500-step plateau.

Other deviations: discrete actions (5 logits; the paper's are continuous Gaussians) and discrete critics ``Q(s, z) ->
(5,)``; the state is the task's one-hot-plus-coordinates feature vector.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["CPU", "PAPER", "FRE", "fre"]

CPU: dict[str, Any] = {"width": 32, "hidden": (128, 128), "heads": 2, "layers": 2, "n_bins": 32, "kl_weight": 0.01,
                       "expectile": 0.8, "temperature": 3.0, "lr": 2e-3, "tau": 0.01, "batch_tasks": 16,
                       "batch_transitions": 32, "decode_pairs": 32, "warmup": 0.15, "init_log_std": -3.0,
                       "agent": "value_iteration", "kl_warmup": 0.5}
PAPER: dict[str, Any] = {**CPU, "width": 128, "hidden": (512, 512, 512), "lr": 1e-4, "tau": 0.001, "batch_tasks": 32,
                         "batch_transitions": 16, "decode_pairs": 8,
                         "warmup": 0.15, "init_log_std": 0.0, "agent": "iql", "kl_warmup": 0.0}
PRESETS = {"cpu": CPU, "paper": PAPER}
AGENTS = ("iql", "value_iteration")
VI_ITERS = 200  # gamma^200 < 1e-9 at the task's 0.9
STATE_DIM, N_ACTIONS = 66, 5  # control_toy's gridworld features and actions


def mlp(inp: int, hidden: tuple[int, ...], out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(inp, h), nn.GELU()]
        inp = h
    return nn.Sequential(*layers, nn.Linear(inp, out))


class FRE(nn.Module):
    """Transformer-VAE reward encoder, reward decoder, and a ``z``-conditioned IQL agent (value, twin critics, actor).

    >>> m = FRE(width=16, hidden=(32,))
    >>> states, rewards = torch.rand(3, 32, 66), torch.rand(3, 32)
    >>> z = m.encode(states, rewards); z.shape, m.policy(torch.rand(3, 66), z).shape
    (torch.Size([3, 16]), torch.Size([3, 5]))
    """

    input_kind = "gridworld"

    def __init__(self, state_dim: int = STATE_DIM, n_actions: int = N_ACTIONS, width: int = CPU["width"],
                 hidden: tuple[int, ...] | list[int] = CPU["hidden"], heads: int = CPU["heads"],
                 layers: int = CPU["layers"], n_bins: int = CPU["n_bins"], kl_weight: float = CPU["kl_weight"],
                 expectile: float = CPU["expectile"], temperature: float = CPU["temperature"], lr: float = CPU["lr"],
                 tau: float = CPU["tau"], batch_tasks: int = CPU["batch_tasks"],
                 batch_transitions: int = CPU["batch_transitions"], decode_pairs: int = CPU["decode_pairs"],
                 warmup: float = CPU["warmup"], init_log_std: float = CPU["init_log_std"],
                 agent: str = CPU["agent"], kl_warmup: float = CPU["kl_warmup"], gamma: float = 0.9) -> None:
        super().__init__()
        if agent not in AGENTS:
            raise ValueError(f"FRE: unknown agent {agent!r}; choose from {AGENTS}")
        if width % 2 or width % heads:
            raise ValueError(f"FRE: width must be even and divisible by heads={heads}, got {width}")
        if not 0 < expectile < 1 or not 0 <= warmup < 1:
            raise ValueError(f"FRE: expectile must be in (0, 1) and warmup in [0, 1), got {expectile}, {warmup}")
        hidden = tuple(int(h) for h in hidden)
        self.state_dim, self.n_actions, self.width, self.hidden, self.n_bins = state_dim, n_actions, width, hidden, n_bins
        self.agent, self.gamma, self.kl_warmup = agent, gamma, kl_warmup
        self.kl_weight, self.expectile, self.temperature, self.lr, self.tau = kl_weight, expectile, temperature, lr, tau
        self.batch_tasks, self.batch_transitions, self.decode_pairs, self.warmup = (batch_tasks, batch_transitions,
                                                                                     decode_pairs, warmup)
        # Section 4.1: tokens (state embedding, reward-bin embedding), a transformer with no positions, mean pooling
        self.embed_state = nn.Linear(state_dim, width // 2)
        self.embed_reward = nn.Embedding(n_bins, width // 2)
        block = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.z_mean = nn.Linear(width, width)
        self.z_log_std = nn.Linear(width, width)
        nn.init.constant_(self.z_log_std.bias, init_log_std)  # CPU default -3: see the module docstring
        self.decoder = mlp(width + state_dim, hidden, 1)  # r(s') from (z, s')
        if agent == "iql":  # Section 4.2: IQL conditioned on z
            self.value = mlp(width + state_dim, hidden, 1)
            self.critic1 = mlp(width + state_dim, hidden, n_actions)
            self.critic2 = mlp(width + state_dim, hidden, n_actions)
            self.actor = mlp(width + state_dim, hidden, n_actions)
        # the value-iteration agent plans on the decoded reward over the grid's cells with the grid's moves (every
        # move is in the offline data); fixed, not parameters
        from zoo_task_control_toy import data as D

        self.register_buffer("cells", torch.as_tensor(D.state_features()), persistent=False)
        self.register_buffer("moves", torch.as_tensor(D.NEXT), persistent=False)

    # ------------------------------------------------------------------ the functional encoding
    def posterior(self, states: torch.Tensor, rewards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``q(z | pairs)``: mean and log-std (B, width) of ``states`` (B, K, ds) labelled ``rewards`` (B, K)."""
        bins = ((rewards / 2 + 0.5) * self.n_bins).floor().long().clamp(0, self.n_bins - 1)
        tokens = torch.cat([self.embed_state(states), self.embed_reward(bins)], -1)
        pooled = self.encoder(tokens).mean(1)  # permutation invariant: no positions, a mean over the pairs
        return self.z_mean(pooled), self.z_log_std(pooled)

    def encode(self, states: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """The task encoding ``z`` (B, width): the posterior mean (what the agent acts on)."""
        if states.ndim != 3 or rewards.shape != states.shape[:2] or states.shape[-1] != self.state_dim:
            raise ValueError(f"FRE.encode: states (B, K, {self.state_dim}) and rewards (B, K), got "
                             f"{tuple(states.shape)} and {tuple(rewards.shape)}")
        return self.posterior(states, rewards)[0]

    def decode(self, z: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        """Predicted rewards (B, N) at ``states`` (B, N, ds) of the reward function encoded by ``z`` (B, width)."""
        zz = z[:, None].expand(-1, states.shape[1], -1)
        return self.decoder(torch.cat([zz, states], -1))[..., 0]

    # ------------------------------------------------------------------ the z-conditioned agent
    def _zs(self, s: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.cat([z, s], -1)

    def plan(self, z: torch.Tensor) -> torch.Tensor:
        """Optimal action-values (B, 64, 5) of the decoded rewards ``decode(z, every cell)`` by value iteration."""
        r = self.decode(z, self.cells[None].expand(len(z), -1, -1))  # (B, 64)
        v = torch.zeros_like(r)
        for _ in range(VI_ITERS):
            v = (r[:, self.moves] + self.gamma * v[:, self.moves]).max(-1).values
        return r[:, self.moves] + self.gamma * v[:, self.moves]

    def policy(self, s: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """Action logits (B, 5) at states ``s`` (B, ds) for the task ``z`` (B, width): the actor's (``agent="iql"``)
        or the planned action-values of the decoded reward (``agent="value_iteration"``, states must be grid cells)."""
        if self.agent == "iql":
            return self.actor(self._zs(s, z))
        uz, inv = torch.unique(z, dim=0, return_inverse=True)  # the task repeats one z over every cell
        q = self.plan(uz)[inv]
        cell = s[..., : self.cells.shape[0]].argmax(-1)
        return q[torch.arange(len(s)), cell]

    def forward(self, states: torch.Tensor, rewards: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return self.policy(s, self.encode(states, rewards))

    # ------------------------------------------------------------------ offline pretraining
    def vae_loss(self, enc_s: torch.Tensor, enc_r: torch.Tensor, dec_s: torch.Tensor, dec_r: torch.Tensor,
                 noise: torch.Tensor, kl_scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        """Eq. 2: reward reconstruction at the decode states plus ``kl_weight`` times the KL term; also the mean z."""
        mean, log_std = self.posterior(enc_s, enc_r)
        z = mean + noise * log_std.exp()
        rec = F.mse_loss(self.decode(z, dec_s), dec_r)
        kl = -0.5 * (1 + log_std - mean ** 2 - log_std.exp()).mean()  # the official code's form of the KL
        return rec + kl_scale * self.kl_weight * kl, mean

    def iql_loss(self, z: torch.Tensor, s: torch.Tensor, a: torch.Tensor, r: torch.Tensor, s2: torch.Tensor,
                 target: nn.Module, gamma: float) -> torch.Tensor:
        """IQL (Kostrikov et al. 2022) on ``z``-conditioned inputs: expectile V on min target Q, Q to ``r + gamma
        V(s')``, advantage-weighted actor (weights ``exp(temperature * A)`` clipped at 100)."""
        x, x2 = self._zs(s, z), self._zs(s2, z)
        with torch.no_grad():
            q_t = torch.minimum(target.critic1(x), target.critic2(x)).gather(1, a[:, None])[:, 0]
            y = r + gamma * self.value(x2)[:, 0]
        v = self.value(x)[:, 0]
        diff = q_t - v
        v_loss = (torch.where(diff >= 0, self.expectile, 1 - self.expectile) * diff ** 2).mean()
        q_loss = sum(F.mse_loss(c(x).gather(1, a[:, None])[:, 0], y) for c in (self.critic1, self.critic2))
        with torch.no_grad():
            adv = q_t - v
            w = (self.temperature * adv).exp().clamp(max=100.0)
        actor_loss = -(w * F.log_softmax(self.actor(x), -1).gather(1, a[:, None])[:, 0]).mean()
        return v_loss + q_loss + actor_loss

    def pretrain(self, data: Any, *, steps: int, seed: int = 0, **_: Any) -> dict[str, float]:
        """Train on ``data`` (control_toy's ``OfflineData``) for ``steps`` Adam steps, the first ``warmup`` fraction
        the VAE alone; each step draws ``batch_tasks`` reward functions from the prior, 32 encode and ``decode_pairs``
        decode samples of each, and ``batch_transitions`` relabelled transitions per function."""
        from zoo_task_control_toy import data as D

        rng = np.random.default_rng([seed, 4242])
        gen = torch.Generator().manual_seed(seed)
        feats, tr, gamma = data.features, data.transitions, data.gamma
        opt = torch.optim.Adam(self.parameters(), lr=self.lr)
        iql = self.agent == "iql"
        target = copy.deepcopy(self).requires_grad_(False) if iql else None
        warm = int(self.warmup * steps)
        self.train()
        vae = rl = torch.tensor(float("nan"))
        for i in range(steps):
            tables = data.tasks(self.batch_tasks, rng)  # (B, 64)
            cells, r_enc = data.samples(tables, rng)
            dec_cells, dec_r = D.reward_samples(tables.numpy(), self.decode_pairs, rng, data.pool)
            noise = torch.randn(self.batch_tasks, self.width, generator=gen)
            vae, mean = self.vae_loss(feats[cells], r_enc, feats[torch.as_tensor(dec_cells)],
                                      torch.as_tensor(dec_r, dtype=torch.float32), noise,
                                      kl_scale=min(1.0, i / (self.kl_warmup * steps)) if self.kl_warmup else 1.0)
            loss = vae
            if i >= warm and iql:
                b = tr[torch.randint(0, len(tr), (self.batch_tasks, self.batch_transitions), generator=gen)]  # (B, T, 3)
                r = tables.gather(1, b[..., 2]).reshape(-1)
                z = mean.detach().repeat_interleave(self.batch_transitions, 0)  # stop-gradient into the encoder
                b = b.reshape(-1, 3)
                rl = self.iql_loss(z, feats[b[:, 0]], b[:, 1], r, feats[b[:, 2]], target, gamma)
                loss = loss + rl
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if iql:
                with torch.no_grad():
                    for p, pt in zip(self.parameters(), target.parameters(), strict=True):
                        pt.lerp_(p, self.tau)
        self.eval()
        return {"final_vae_loss": float(vae.detach()), "final_rl_loss": float(rl.detach()), "pretrain_steps": float(steps)}


def fre(*, preset: str = "cpu", **overrides: Any) -> FRE:
    """FRE at ``preset`` ("cpu" or "paper"), any field overridden by keyword.

    >>> fre(preset="paper").width, fre(width=32).width
    (128, 32)
    """
    if preset not in PRESETS:
        raise ValueError(f"fre: unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    unknown = set(overrides) - set(CPU) - {"state_dim", "n_actions"}
    if unknown:
        raise ValueError(f"fre: unknown option(s) {sorted(unknown)}; the options are {sorted(CPU)}")
    return FRE(**{**PRESETS[preset], **overrides})
