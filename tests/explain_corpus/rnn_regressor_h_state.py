"""Tutorial 403 (RNN regressor: sin -> cos) with the line `h_state = h_state.data` commented out.

Source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57
Thread: The user commented out `h_state = h_state.data` in the RNN-regression tutorial and got "Trying to backward through the graph a second time"; loss.backward(retain_graph=True) made the message go away, and they asked what the error means and why the .data line avoids it. The hidden state returned by the RNN is fed into the next step, so each step's graph hangs on to the previous step's already-backpropagated graph; the tutorial's `h_state = h_state.data` line repackages it (cuts it from that history) before the next step. The maintainer only asked for the PyTorch version; the fix in the thread is the tutorial's own repackaging line.
Cause: CARRIED
Fix: Cut the hidden state from the previous step's graph before reusing it, as the tutorial does with h_state = h_state.data (today: h_state = h_state.detach()).
Fix mentions: h_state, detach()
Fix must not say: retain_graph=True
"""
import math

import torch
from torch import nn

TIME_STEP = 5
INPUT_SIZE = 1


class RNN(nn.Module):
    def __init__(self):
        super(RNN, self).__init__()
        self.rnn = nn.RNN(input_size=INPUT_SIZE, hidden_size=16, num_layers=1, batch_first=True)
        self.out = nn.Linear(16, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)  # made
        outs = []
        for time_step in range(r_out.size(1)):
            outs.append(self.out(r_out[:, time_step, :]))
        return torch.stack(outs, dim=1), h_state


def main():
    torch.manual_seed(0)
    rnn = RNN()
    optimizer = torch.optim.Adam(rnn.parameters(), lr=0.02)
    loss_func = nn.MSELoss()
    h_state = None
    for step in range(3):
        start, end = step * math.pi, (step + 1) * math.pi
        steps = torch.linspace(start, end, TIME_STEP)
        x = torch.sin(steps)[None, :, None]
        y = torch.cos(steps)[None, :, None]
        prediction, h_state = rnn(x, h_state)  # called
        # h_state = h_state.data
        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
