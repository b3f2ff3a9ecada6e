"""A running total of the losses, backpropagated every step."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total = 0
    for step in range(3):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = ((model(x) - y) ** 2).mean()  # made
        total = total + loss
        optimizer.zero_grad()
        total.backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
