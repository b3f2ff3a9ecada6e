"""MADDPG agent.train() with the critic update moved before the actor update, as in the paper's pseudocode.

Source: https://github.com/starry-sky6688/MADDPG/issues/27
Thread: The repo builds critic_loss and actor_loss (actor_loss = -critic(o, u with this agent's fresh action)) and then updates the actor, then the critic. The user swapped the two updates to match the paper and got the in-place modification error at actor_loss.backward(). The maintainer explained that actor_loss had been computed through critic_network, and once critic_optim.step() updated the critic, that graph was stale to PyTorch, even though the actor update does not train the critic; he suggested moving the critic update to another place in train() (shown only in a screenshot), and the reporter thanked him.
Cause: TWO_MODELS_STEP
Fix: Order the updates so actor_loss is built after critic_optim.step() (re-run the critic on the fresh actions), or keep the actor update before the critic step as the repo did.
Fix mentions: actor_loss, critic_optim.step()
Fix must not say: retain_graph=True, call every backward first
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_AGENTS, OBS, ACT = 2, 4, 2


class Actor(nn.Module):
    def __init__(self):
        super(Actor, self).__init__()
        self.fc1 = nn.Linear(OBS, 16)
        self.action_out = nn.Linear(16, ACT)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return torch.tanh(self.action_out(x))


class Critic(nn.Module):
    def __init__(self):
        super(Critic, self).__init__()
        self.fc1 = nn.Linear(N_AGENTS * (OBS + ACT), 16)
        self.fc2 = nn.Linear(16, 16)
        self.q_out = nn.Linear(16, 1)

    def forward(self, state, action):
        state = torch.cat(state, dim=1)
        action = torch.cat(action, dim=1)
        x = torch.cat([state, action], dim=1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        q_value = self.q_out(x)  # made
        return q_value


class MADDPG:
    def __init__(self, agent_id):
        self.agent_id, self.gamma = agent_id, 0.95
        self.actor_network, self.critic_network = Actor(), Critic()
        self.actor_target_network, self.critic_target_network = Actor(), Critic()
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=1e-3)

    def train(self, o, u, r, o_next):
        u = list(u)
        with torch.no_grad():
            u_next = [self.actor_target_network(o_next[i]) for i in range(N_AGENTS)]
            q_next = self.critic_target_network(o_next, u_next)
            target_q = (r + self.gamma * q_next).detach()
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()
        u[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = - self.critic_network(o, u).mean()  # called
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()  # changed
        self.actor_optim.zero_grad()
        actor_loss.backward()  # fails
        self.actor_optim.step()


def main():
    torch.manual_seed(0)
    agent = MADDPG(agent_id=0)
    for step in range(2):
        o = [torch.randn(16, OBS) for _ in range(N_AGENTS)]
        u = [torch.rand(16, ACT) * 2 - 1 for _ in range(N_AGENTS)]
        o_next = [torch.randn(16, OBS) for _ in range(N_AGENTS)]
        r = torch.randn(16, 1)
        agent.train(o, u, r, o_next)


if __name__ == "__main__":
    main()
