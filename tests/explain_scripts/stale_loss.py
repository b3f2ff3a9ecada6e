"""A loop that keeps each step's loss in a list and backpropagates the first one again."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(3):
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        loss = ((model(x) - y) ** 2).mean()  # made
        losses.append(loss)
        optimizer.zero_grad()
        losses[0].backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
