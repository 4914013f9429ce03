"""zoo plugin of the task distribution: the spec of control_toy (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="control_toy",
        contract="bandit (input_kind 'bandit'): scores(contexts (M, K, d)) -> (M, K), update(contexts, actions (M,), "
                 "rewards (M,)), forward = scores, optional reset(); gridworld (input_kind 'gridworld'): "
                 "encode(states (B, N, 66), rewards (B, N)) -> z (B, dz), policy(s (B, 66), z) -> logits (B, 5), "
                 "forward(states, rewards, s) = policy(s, encode(states, rewards)), pretrain(data: OfflineData, *, "
                 "steps, seed) -> dict, called once by the task; pixels (input_kind 'pixels'): forward(frames (B, 3, 6, 6)) "
                 "-> action values (B, 5), update(frames, actions (B,), rewards (B,), next_frames, dones (B,)) after "
                 "every step (online RL; the task explores epsilon-greedily)",
        evaluate="zoo_task_control_toy.task:evaluate",
        example_input="zoo_task_control_toy.task:example_input",
        check_output="zoo_task_control_toy.task:check_output",
        describe="zoo_task_control_toy.task:describe",
        baselines=("linucb", "neural_ucb", "random", "goal_conditioned", "per_task", "pixel_dqn"),
        description="multitask contextual bandits (10 tasks sharing a random 2-layer feature map, 8 arms, 2,000 "
                    "rounds; cumulative regret) and an 8x8 gridworld with random reward families (goal tents, linear, "
                    "random-MLP): pretrain on reward-free random walks, then zero-shot from 32 reward-labelled states, "
                    "normalised return computed exactly against value iteration; baselines independent LinUCB, "
                    "single-task neural UCB and random (bandit), goal-conditioned Q-learning, per-task value "
                    "iteration and random (gridworld); a rendered 6x6 pixel gridworld with two reward objects, stationary "
                    "and reward-switching, online RL return per step against a pixel DQN and random (pixels)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
