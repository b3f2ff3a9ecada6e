"""rlkit SACTrainer.train_from_torch: all losses built first, then qf1, qf2 and finally the policy are stepped.

Source: https://github.com/rail-berkeley/rlkit/pull/109
Thread: The PR "Optimize actor before the critic" explains that policy_loss is computed through qf1/qf2 on the policy's fresh actions, so once the Q-function optimizers have stepped, the weights the policy loss's graph saved have changed, which PyTorch 1.5.0 reports as an error at policy_loss.backward(). The fix merged in the PR moves the policy update (zero_grad, backward, step) ahead of the Q-function updates; a second user confirmed the same error and fix.
Cause: TWO_MODELS_STEP
Fix: Update the policy before the Q-functions: run policy_loss.backward() and policy_optimizer.step() first, then the qf1/qf2 updates.
Fix mentions: policy_loss.backward(), qf1_optimizer.step()
Fix must not say: retain_graph=True, call every backward first
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConcatMlp(nn.Module):
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


def main():
    torch.manual_seed(0)
    obs_dim, action_dim, discount = 6, 2, 0.99
    policy = TanhGaussianPolicy(obs_dim, action_dim)
    qf1, qf2 = ConcatMlp(obs_dim + action_dim), ConcatMlp(obs_dim + action_dim)
    target_qf1, target_qf2 = ConcatMlp(obs_dim + action_dim), ConcatMlp(obs_dim + action_dim)
    policy_optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    qf1_optimizer = torch.optim.Adam(qf1.parameters(), lr=3e-4)
    qf2_optimizer = torch.optim.Adam(qf2.parameters(), lr=3e-4)
    qf_criterion = nn.MSELoss()
    for it in range(2):
        obs, actions = torch.randn(16, obs_dim), torch.rand(16, action_dim) * 2 - 1
        rewards, terminals, next_obs = torch.randn(16, 1), torch.zeros(16, 1), torch.randn(16, obs_dim)
        # Policy and Alpha Loss
        new_obs_actions, log_pi = policy(obs)
        alpha = 1
        q_new_actions = torch.min(
            qf1(obs, new_obs_actions),
            qf2(obs, new_obs_actions),  # called
        )
        policy_loss = (alpha * log_pi - q_new_actions).mean()
        # QF Loss
        q1_pred = qf1(obs, actions)
        q2_pred = qf2(obs, actions)
        new_next_actions, new_log_pi = policy(next_obs)
        target_q_values = torch.min(
            target_qf1(next_obs, new_next_actions),
            target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi
        q_target = rewards + (1. - terminals) * discount * target_q_values
        qf1_loss = qf_criterion(q1_pred, q_target.detach())
        qf2_loss = qf_criterion(q2_pred, q_target.detach())
        # Update networks
        qf1_optimizer.zero_grad()
        qf1_loss.backward()
        qf1_optimizer.step()
        qf2_optimizer.zero_grad()
        qf2_loss.backward()
        qf2_optimizer.step()  # changed
        policy_optimizer.zero_grad()
        policy_loss.backward()  # fails
        policy_optimizer.step()


if __name__ == "__main__":
    main()
