"""OAC (microsoft/oac-explore, an rlkit-style SAC trainer): policy_loss is built from qf1/qf2 before the Q-function optimizers step.

Source: https://github.com/microsoft/oac-explore/issues/27
Thread: The reporter showed that trainer.py raises "one of the variables needed for gradient computation has been modified by an inplace operation" on recent PyTorch versions, because q_new_actions and policy_loss are computed before the qf1/qf2 gradient steps and backpropagated after them. Their fix moves the q_new_actions / policy_loss computation to between the Q-network steps and the policy step, and they warn that simply pinning an old PyTorch is not a real fix: there the policy loss silently used Q-networks that no longer exist.
Cause: TWO_MODELS_STEP
Fix: Compute q_new_actions and policy_loss after the qf1/qf2 optimizer steps (re-run the Q-functions on the new actions), then backpropagate the policy loss.
Fix mentions: policy_loss, after
Fix must not say: call every backward first, older PyTorch
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FlattenMlp(nn.Module):
    def __init__(self, input_size, hidden=32):
        super().__init__()
        self.fc0 = nn.Linear(input_size, hidden)
        self.last_fc = nn.Linear(hidden, 1)

    def forward(self, *inputs):
        h = F.relu(self.fc0(torch.cat(inputs, dim=1)))
        return self.last_fc(h)  # made


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden=32):
        super().__init__()
        self.fc0 = nn.Linear(obs_dim, hidden)
        self.mean = nn.Linear(hidden, action_dim)
        self.log_std = nn.Linear(hidden, action_dim)

    def forward(self, obs):
        h = F.relu(self.fc0(obs))
        mean, std = self.mean(h), self.log_std(h).clamp(-5, 2).exp()
        normal = torch.distributions.Normal(mean, std)
        pre_tanh = normal.rsample()
        action = torch.tanh(pre_tanh)
        log_prob = (normal.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)).sum(1, keepdim=True)
        return action, log_prob


class SACTrainer:
    def __init__(self, obs_dim=6, action_dim=2):
        self.policy = TanhGaussianPolicy(obs_dim, action_dim)
        self.qf1, self.qf2 = FlattenMlp(obs_dim + action_dim), FlattenMlp(obs_dim + action_dim)
        self.target_qf1, self.target_qf2 = FlattenMlp(obs_dim + action_dim), FlattenMlp(obs_dim + action_dim)
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=3e-4)
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters(), lr=3e-4)
        self.discount, self.alpha = 0.99, 1.0

    def train_from_torch(self, batch):
        obs, actions, rewards, terminals, next_obs = batch
        new_obs_actions, log_pi = self.policy(obs)
        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),
            self.qf2(obs, new_obs_actions),  # called
        )
        policy_loss = (self.alpha * log_pi - q_new_actions).mean()
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, new_log_pi = self.policy(next_obs)
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - self.alpha * new_log_pi
        q_target = rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = F.mse_loss(q1_pred, q_target.detach())
        qf2_loss = F.mse_loss(q2_pred, q_target.detach())
        """
        Update networks
        """
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward(retain_graph=True)
        self.qf1_optimizer.step()
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward(retain_graph=True)
        self.qf2_optimizer.step()  # changed
        self.policy_optimizer.zero_grad()
        policy_loss.backward(retain_graph=True)  # fails
        self.policy_optimizer.step()


def main():
    torch.manual_seed(0)
    trainer = SACTrainer()
    for it in range(2):
        batch = (torch.randn(16, 6), torch.rand(16, 2) * 2 - 1, torch.randn(16, 1),
                 torch.zeros(16, 1), torch.randn(16, 6))
        trainer.train_from_torch(batch)


if __name__ == "__main__":
    main()
