"""Dreamer (cross32768/Dreamer_PyTorch) behaviour learning: imagined rollouts, lambda-returns, value update, then action update.

Source: https://github.com/cross32768/Dreamer_PyTorch/issues/2
Thread: Running train.py on newer PyTorch, action_loss.backward() failed with "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [400, 1]], which is output 0 of AsStridedBackward0". The action loss is -lambda_target_values.mean(), and the lambda targets are computed from the value model's outputs on the imagined states, so value_optimizer.step() (run just before) changed weights that the action loss's graph still needs. A commenter fixed it (torch 1.8) by changing the order of the .backward() and .step() calls, so that value_optimizer.step() no longer runs before action_loss.backward().
Cause: TWO_MODELS_STEP
Fix: Reorder the updates so action_loss.backward() runs before value_optimizer.step() (update the action model first, then step the value model).
Fix mentions: action_loss.backward(), value_optimizer.step()
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_

STATE, RNN_H, ACTION, HORIZON, B = 6, 8, 2, 4, 8


class TransitionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_state_action = nn.Linear(STATE + ACTION, RNN_H)
        self.rnn = nn.GRUCell(RNN_H, RNN_H)
        self.fc_state_mean_prior = nn.Linear(RNN_H, STATE)

    def prior(self, state, action, rnn_hidden):
        hidden = F.elu(self.fc_state_action(torch.cat([state, action], dim=1)))
        rnn_hidden = self.rnn(hidden, rnn_hidden)
        return self.fc_state_mean_prior(rnn_hidden), rnn_hidden


class RewardModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(STATE + RNN_H, 16), nn.Linear(16, 1)

    def forward(self, state, rnn_hidden):
        return self.fc2(F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1))))


class ValueModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(STATE + RNN_H, 16), nn.Linear(16, 1)

    def forward(self, state, rnn_hidden):
        hidden = F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1)))
        return self.fc2(hidden)  # made


class ActionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc_mean = nn.Linear(STATE + RNN_H, 16), nn.Linear(16, ACTION)

    def forward(self, state, rnn_hidden):
        hidden = F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1)))
        return torch.tanh(self.fc_mean(hidden))


def lambda_target(rewards, values, gamma, lambda_):
    v_lambda = values[-1]
    targets = []
    for t in reversed(range(rewards.shape[0] - 1)):
        v_lambda = rewards[t + 1] + gamma * ((1 - lambda_) * values[t + 1] + lambda_ * v_lambda)
        targets.append(v_lambda)
    return torch.stack(targets[::-1])


def main():
    torch.manual_seed(0)
    transition, reward_model = TransitionModel(), RewardModel()
    value_model, action_model = ValueModel(), ActionModel()
    value_optimizer = torch.optim.Adam(value_model.parameters(), lr=8e-5)
    action_optimizer = torch.optim.Adam(action_model.parameters(), lr=8e-5)
    for update_step in range(2):
        flatten_states = torch.randn(B, STATE)
        flatten_rnn_hiddens = torch.randn(B, RNN_H)
        imaginated_states = torch.zeros(HORIZON + 1, *flatten_states.shape)
        imaginated_rnn_hiddens = torch.zeros(HORIZON + 1, *flatten_rnn_hiddens.shape)
        imaginated_states[0] = flatten_states
        imaginated_rnn_hiddens[0] = flatten_rnn_hiddens
        for h in range(1, HORIZON + 1):
            actions = action_model(flatten_states, flatten_rnn_hiddens)
            mean, flatten_rnn_hiddens = transition.prior(flatten_states, actions, flatten_rnn_hiddens)
            flatten_states = mean + 0.1 * torch.randn_like(mean)
            imaginated_states[h] = flatten_states
            imaginated_rnn_hiddens[h] = flatten_rnn_hiddens
        flatten_imaginated_states = imaginated_states.view(-1, STATE)
        flatten_imaginated_rnn_hiddens = imaginated_rnn_hiddens.view(-1, RNN_H)
        imaginated_rewards = reward_model(flatten_imaginated_states,
                                          flatten_imaginated_rnn_hiddens).view(HORIZON + 1, -1)
        imaginated_values = value_model(flatten_imaginated_states,  # called
                                        flatten_imaginated_rnn_hiddens).view(HORIZON + 1, -1)
        lambda_target_values = lambda_target(imaginated_rewards, imaginated_values, 0.9, 0.95)
        # update value model
        value_loss = 0.5 * F.mse_loss(imaginated_values[:-1], lambda_target_values.detach())
        value_optimizer.zero_grad()
        value_loss.backward(retain_graph=True)
        clip_grad_norm_(value_model.parameters(), 100)
        value_optimizer.step()  # changed
        # update action model (multiply -1 for gradient ascent)
        action_loss = -1 * (lambda_target_values.mean())
        action_optimizer.zero_grad()
        action_loss.backward()  # fails
        clip_grad_norm_(action_model.parameters(), 100)
        action_optimizer.step()


if __name__ == "__main__":
    main()
