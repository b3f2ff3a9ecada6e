"""MAPPO learner (pymarl2 ppo_learner) that computes advantages from the critic once, then runs several PPO mini-epochs on them.

Source: https://github.com/hijkzzz/pymarl2/issues/46
Thread: The reporter found that the PPO/MAPPO code crashes with "Trying to backward through the graph a second time" whenever mini_epochs > 1. The advantages are computed outside the mini-epoch loop and reused inside it, so after the first iteration's backward and optimizer step their graph (through the critic) has already been used and freed. They proposed detaching the advantages inside the loop rather than retain_graph=True, since the advantages only feed the actor loss and detaching does not stop the critic from learning. (Open issue; no maintainer reply yet.)
Cause: BEFORE_THE_LOOP
Fix: Detach the advantages (advantages = advantages.detach()) before the mini-epoch loop; they are a fixed target for the actor loss.
Fix mentions: detach()
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self, state_dim=8, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, inputs):
        x = F.relu(self.fc1(inputs))
        return self.fc2(x)  # made


class Actor(nn.Module):
    def __init__(self, obs_dim=6, n_actions=4, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, hidden)
        self.fc2 = nn.Linear(hidden, n_actions)

    def forward(self, obs):
        return F.softmax(self.fc2(F.relu(self.fc1(obs))), dim=-1)


class PPOLearner:
    def __init__(self, mini_epochs=4):
        self.mac, self.critic = Actor(), Critic()
        self.optimiser = torch.optim.Adam(self.mac.parameters(), lr=5e-4)
        self.mini_epochs, self.eps_clip, self.gamma = mini_epochs, 0.2, 0.99

    def train(self, batch):
        obs, states, actions, rewards = batch
        old_pi = self.mac(obs).detach()
        old_log_pi_taken = torch.log(old_pi.gather(1, actions) + 1e-10)
        values = self.critic(states)  # called
        target_returns = rewards + self.gamma * values.detach()
        advantages = target_returns - values
        for k in range(self.mini_epochs):
            pi = self.mac(obs)
            log_pi_taken = torch.log(pi.gather(1, actions) + 1e-10)
            ratios = torch.exp(log_pi_taken - old_log_pi_taken)
            surr1 = ratios * advantages
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            entropy = -torch.sum(pi * torch.log(pi + 1e-10), dim=-1, keepdim=True)
            pg_loss = -(torch.min(surr1, surr2) + 0.01 * entropy).mean()
            self.optimiser.zero_grad()
            pg_loss.backward()  # freed fails
            self.optimiser.step()


def main():
    torch.manual_seed(0)
    learner = PPOLearner()
    batch = (torch.randn(16, 6), torch.randn(16, 8), torch.randint(0, 4, (16, 1)), torch.randn(16, 1))
    learner.train(batch)


if __name__ == "__main__":
    main()
