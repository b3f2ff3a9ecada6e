"""Discrete/continuous SAC learner (toshikwa/soft-actor-critic.pytorch) that computes the policy loss before the Q updates.

Source: https://github.com/toshikwa/soft-actor-critic.pytorch/issues/1
Thread: With PyTorch 1.7 the learner raised the in-place modification error; the author first suggested pinning torch==1.3.1. The reporter then found the real fix: calc_policy_loss() runs the twinned critic on the policy's sampled actions, and update_params() for Q1 and Q2 stepped those critics before policy_loss.backward(), so the policy loss must be calculated after the Q1/Q2 updates. The author accepted the change and asked for a pull request.
Cause: TWO_MODELS_STEP
Fix: Call calc_policy_loss() after the Q1 and Q2 updates, so the policy loss is built from the updated critics.
Fix mentions: after
Fix must not say: retain_graph=True, call every backward first
"""
import torch
import torch.nn as nn


class TwinnedQNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden=32):
        super().__init__()
        self.Q1 = nn.Sequential(nn.Linear(num_inputs + num_actions, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.Q2 = nn.Sequential(nn.Linear(num_inputs + num_actions, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, states, actions):
        xs = torch.cat([states, actions], dim=1)
        q1 = self.Q1(xs)
        q2 = self.Q2(xs)  # made
        return q1, q2


class GaussianPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_inputs, hidden), nn.ReLU(), nn.Linear(hidden, 2 * num_actions))

    def sample(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        normals = torch.distributions.Normal(means, log_stds.clamp(-20, 2).exp())
        xs = normals.rsample()
        actions = torch.tanh(xs)
        log_probs = normals.log_prob(xs) - torch.log(1 - actions.pow(2) + 1e-6)
        entropies = -log_probs.sum(dim=1, keepdim=True)
        return actions, entropies


def update_params(optim, network, loss, grad_clip=None):
    optim.zero_grad()
    loss.backward()  # fails
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(network.parameters(), grad_clip)
    optim.step()  # changed


class SacAgent:
    def __init__(self, num_inputs=6, num_actions=2):
        self.policy = GaussianPolicy(num_inputs, num_actions)
        self.critic = TwinnedQNetwork(num_inputs, num_actions)
        self.critic_target = TwinnedQNetwork(num_inputs, num_actions)
        self.q1_optim = torch.optim.Adam(self.critic.Q1.parameters(), lr=3e-4)
        self.q2_optim = torch.optim.Adam(self.critic.Q2.parameters(), lr=3e-4)
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.alpha, self.gamma, self.grad_clip = 0.2, 0.99, None

    def calc_critic_loss(self, batch):
        states, actions, rewards, next_states, dones = batch
        curr_q1, curr_q2 = self.critic(states, actions)
        with torch.no_grad():
            next_actions, next_entropies = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies
            target_q = rewards + (1.0 - dones) * self.gamma * next_q
        q1_loss = torch.mean((curr_q1 - target_q).pow(2))
        q2_loss = torch.mean((curr_q2 - target_q).pow(2))
        return q1_loss, q2_loss

    def calc_policy_loss(self, batch):
        states = batch[0]
        sampled_action, entropy = self.policy.sample(states)
        q1, q2 = self.critic(states, sampled_action)  # called
        q = torch.min(q1, q2)
        policy_loss = torch.mean(- q - self.alpha * entropy)
        return policy_loss, entropy

    def learn(self, batch):
        q1_loss, q2_loss = self.calc_critic_loss(batch)
        policy_loss, entropies = self.calc_policy_loss(batch)
        update_params(self.q1_optim, self.critic.Q1, q1_loss, self.grad_clip)
        update_params(self.q2_optim, self.critic.Q2, q2_loss, self.grad_clip)
        update_params(self.policy_optim, self.policy, policy_loss, self.grad_clip)


def main():
    torch.manual_seed(0)
    agent = SacAgent()
    for step in range(2):
        batch = (torch.randn(16, 6), torch.rand(16, 2) * 2 - 1, torch.randn(16, 1),
                 torch.randn(16, 6), torch.zeros(16, 1))
        agent.learn(batch)


if __name__ == "__main__":
    main()
