"""fMRI LSTM classifier that keeps its hidden state in self.hidden and feeds it back in on every batch.

Source: https://github.com/sgadgil6/cnslab_fmri/issues/4
Thread: Training run_training_lstm.py stopped at loss.backward() with "Trying to backward through the graph a second time", and passing retain_graph=True ran out of memory instead. The model stored self.hidden from init_hidden() once and did `lstm_out, self.hidden = self.lstm(x, self.hidden)`, so each batch started from the previous batch's graph. The reporter's fix, posted on the maintainer's request, calls `self.lstm(x)` without the carried state (each batch starts from a zero state), noting the hidden state does not need to be passed.
Cause: CARRIED
Fix: Stop feeding the previous batch's self.hidden back into the LSTM: call self.lstm(x) so each batch starts fresh (or detach the stored state if it must be kept).
Fix mentions: self.hidden
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn

BATCH = 8


class fMRI_LSTM(nn.Module):
    def __init__(self, hidden_dim, input_dim):
        super(fMRI_LSTM, self).__init__()
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.linear = nn.Linear(hidden_dim, 1)
        self.hidden = self.init_hidden()
        self.dropout = nn.Dropout(p=0.2)
        self.activate = nn.Sigmoid()

    def init_hidden(self):
        return (torch.randn(1, BATCH, self.hidden_dim), torch.randn(1, BATCH, self.hidden_dim))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)  # made
        lstm_out = lstm_out[:, -1, :]
        out = self.dropout(lstm_out)
        linear_output = self.linear(out)
        return self.activate(linear_output)


def main():
    torch.manual_seed(0)
    model = fMRI_LSTM(hidden_dim=16, input_dim=10)
    criterion = nn.BCELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for batch in range(3):
        x = torch.randn(BATCH, 6, 10)
        y = torch.randint(0, 2, (BATCH, 1)).float()
        output = model(x)  # called
        loss = criterion(output, y)
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
