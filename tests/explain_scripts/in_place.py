"""An in-place operation on a tensor that the graph saved."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randn(8, 3)
    h = torch.sigmoid(model(x))  # made
    loss = ((h - y) ** 2).mean()
    h.mul_(2)  # changed
    loss.backward()  # fails


if __name__ == "__main__":
    main()
