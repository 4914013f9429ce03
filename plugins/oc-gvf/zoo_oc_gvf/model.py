"""Object-centric general value functions from pixels (Nath, Subbaraj, Khetarpal & Kahou, ICML 2023, arXiv 2304.13892),
at the scale of control_toy's ``pixels`` mode.

Method (abstract, catalog entry 43 and the paper's Figure 1 caption; no official code was given): an object-centric
encoder splits the frame into slots; per slot a "question" function gives a cumulant c_k; one GVF head per question
is learned by TD (mean squared TD error, the main task's discount); the main network predicts action values from the
GVF predictions. Here:

* encoder: colour masks as slots (at this scale an object's colour is its channel; the paper learns slots with a
  slot-attention-style encoder). Slot k is (agent mask, object k mask), read out as the one-hot row and column offset
  of object k from the agent (a fixed spatial read-out of the two masks).
* questions: c_k = 1 when the agent touches object k ("object k is under the agent"), temporally coherent by design;
  the paper *discovers* cumulants with a question network over short frame windows (deviation).
* GVF heads: one MLP, shared by all slots (object-centric weight sharing), maps slot k to q_k(s, a) for the 5 actions:
  gvf (B, n_objects * 5). Each q_k is learned off-policy by Q-learning on c_k with the environment's terminations
  (a control GVF: the discounted chance of reaching object k first), from a replay buffer with a target copy.
* policy: ``policy(gvf) -> (B, 5)`` a linear map of the GVF predictions, learned by TD on the task's reward (Huber
  loss, on the same replay, from the target copy) at its own rate ``policy_lr``; the GVFs get no gradient from it
  (the paper projects the GVFs and concatenates them with the encoder's representation before its action-value
  head; here the GVFs are the policy's only input). After a reward switch only this small map
  has to change; the GVFs stay valid because the objects do not change.

Defaults: ``CPU`` below (width 64); the paper's Atari/MiniGrid-scale settings (CNN, slot attention, Rainbow-style
agent) are not reproduced at this scale (``PAPER`` records what the catalog gives).
"""
from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from zoo_task_control_toy.pixels import GAMMA, N_ACTIONS, SIZE, Replay

CPU: dict[str, Any] = {"width": 64, "lr": 1e-3, "policy_lr": 1e-2, "gamma": GAMMA, "buffer": 4000, "batch": 64,
                       "sync": 50}
PAPER: dict[str, Any] = {"encoder": "slot attention over CNN features", "questions": "learned question network",
                         "agent": "DQN-style main network with GVF heads (MSTDE)"}


def slots(frames: torch.Tensor) -> torch.Tensor:
    """Object-centric read-out: frames (B, 1 + K, H, W), channel 0 the agent -> (B, K, 2 (2H - 1)) one-hot row and
    column offsets of each object from the agent (zeros for an absent object)."""
    if frames.dim() != 4 or frames.shape[1] < 2:
        raise ValueError(f"oc_gvf: frames must be (B, 1 + n_objects, H, W), got {tuple(frames.shape)}")
    B, C, H, W = frames.shape
    rows = torch.arange(H, dtype=frames.dtype)
    cols = torch.arange(W, dtype=frames.dtype)
    mass = frames.sum((2, 3)).clamp_min(1e-8)  # (B, C)
    r = (frames.sum(3) * rows).sum(2) / mass  # centroid row (B, C)
    c = (frames.sum(2) * cols).sum(2) / mass
    dr = (r[:, 1:] - r[:, :1]).round().long() + H - 1  # (B, K) in 0..2H-2
    dc = (c[:, 1:] - c[:, :1]).round().long() + W - 1
    present = (frames[:, 1:].sum((2, 3)) > 0).to(frames.dtype)[..., None]
    oh = torch.cat([nn.functional.one_hot(dr, 2 * H - 1), nn.functional.one_hot(dc, 2 * W - 1)], -1).to(frames.dtype)
    return oh * present


class OCGVF(nn.Module):
    """``gvf(frames (B, 1 + K, H, W)) -> (B, K * 5)``, ``policy(gvf) -> (B, 5)``, ``forward = policy(gvf(frames))``,
    ``update(frames, actions, rewards, next_frames, dones)`` one TD step of the GVF heads and of the policy."""

    input_kind = "pixels"

    def __init__(self, n_objects: int = 2, size: int = SIZE, *, width: int = CPU["width"], lr: float = CPU["lr"],
                 policy_lr: float = CPU["policy_lr"], gamma: float = CPU["gamma"], buffer: int = CPU["buffer"],
                 batch: int = CPU["batch"], sync: int = CPU["sync"]) -> None:
        super().__init__()
        if n_objects < 1 or size < 2 or width < 1:
            raise ValueError("oc_gvf: n_objects >= 1, size >= 2 and width >= 1 required")
        self.n_objects, self.size = n_objects, size
        d = 2 * (2 * size - 1)
        self.head = nn.Sequential(nn.Linear(d, width), nn.ReLU(), nn.Linear(width, N_ACTIONS))
        self.pi = nn.Linear(n_objects * N_ACTIONS, N_ACTIONS)
        self.gamma, self.lr, self.policy_lr = gamma, lr, policy_lr
        self.batch, self.sync, self.cap = batch, sync, buffer
        self._state: dict[str, Any] | None = None

    def gvf(self, frames: torch.Tensor) -> torch.Tensor:
        if frames.shape[1] != 1 + self.n_objects:
            raise ValueError(f"oc_gvf: built for {self.n_objects} objects, frames have {frames.shape[1]} channels")
        return self.head(slots(frames)).flatten(1)  # (B, K * A), question-major

    def policy(self, gvf: torch.Tensor) -> torch.Tensor:
        """Action values (B, 5) from gvf (B, K * 5): a linear map."""
        return self.pi(gvf)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.policy(self.gvf(frames))

    def update(self, frames: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor, next_frames: torch.Tensor,
               dones: torch.Tensor, contact: torch.Tensor | None = None) -> None:
        # question functions: c_k = 1 when the move lands on object k (the task renders next_frames after the reset
        # of a finished episode, so the contact is read from frames and actions)
        if self._state is None:
            self._state = {"opt_q": torch.optim.Adam(self.head.parameters(), lr=self.lr),
                           "opt_pi": torch.optim.Adam(self.pi.parameters(), lr=self.policy_lr),
                           "target": copy.deepcopy(self).requires_grad_(False), "replay": Replay(self.cap), "n": 0}
        st = self._state
        if contact is None:
            contact = touched(frames, actions) * dones[:, None].float()
        st["replay"].add(frames, actions, rewards, next_frames, dones, contact.float())
        f, a, r, f2, d, c = st["replay"].sample(self.batch)
        live = (~d).float()
        tgt: OCGVF = st["target"]
        K = self.n_objects
        with torch.no_grad():
            g2 = tgt.gvf(f2)
            y_q = c + self.gamma * live[:, None] * g2.view(-1, K, N_ACTIONS).max(2).values  # (B, K)
        g = self.gvf(f)
        q = g.view(-1, K, N_ACTIONS).gather(2, a.view(-1, 1, 1).expand(-1, K, 1)).squeeze(2)
        loss_q = ((q - y_q) ** 2).mean()  # MSTDE of the GVF heads (Sec. 3 of the paper, Fig. 1)
        # the main network: action values from the GVF predictions, DQN (Huber) loss on the task's reward
        with torch.no_grad():
            y_pi = r + self.gamma * live * tgt.policy(g2).max(1).values
        loss_pi = nn.functional.smooth_l1_loss(self.policy(g.detach()).gather(1, a[:, None]).squeeze(1), y_pi)
        st["opt_q"].zero_grad()
        st["opt_pi"].zero_grad()
        (loss_q + loss_pi).backward()
        st["opt_q"].step()
        st["opt_pi"].step()
        st["n"] += 1
        if st["n"] % self.sync == 0:
            tgt.load_state_dict(self.state_dict())

    def __deepcopy__(self, memo: dict[int, Any]) -> OCGVF:
        new = OCGVF.__new__(OCGVF)
        memo[id(self)] = new
        state = self._state
        self._state = None
        try:
            new.__dict__ = copy.deepcopy(self.__dict__, memo)
        finally:
            self._state = state
        return new


def touched(frames: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Which object (B, K) the agent's move ``actions`` lands on in ``frames`` (the cumulant of the transition)."""
    moves = torch.tensor([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]])
    B, C, H, W = frames.shape
    flat = frames[:, 0].flatten(1).argmax(1)
    pos = torch.stack([flat // W, flat % W], 1) + moves[actions]
    pos[:, 0].clamp_(0, H - 1)
    pos[:, 1].clamp_(0, W - 1)
    return frames[torch.arange(B), 1:, pos[:, 0], pos[:, 1]]


def oc_gvf(n_objects: int = 2, size: int = SIZE, **kw: Any) -> OCGVF:
    """The zoo builder: CPU defaults (``CPU``), any of them overridable by name."""
    return OCGVF(n_objects, size, **kw)
