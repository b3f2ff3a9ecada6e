"""An RNN's hidden state carried from one iteration to the next."""
import torch


def main():
    torch.manual_seed(0)
    cell = torch.nn.RNNCell(2, 8)
    head = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.01)
    hidden = torch.zeros(4, 8)
    for step in range(3):
        x, y = torch.randn(4, 2), torch.randn(4, 1)
        hidden = cell(x, hidden)  # made
        loss = ((head(hidden) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
