"""A tensor cached on first use (an anchor for a penalty) and reused in later steps."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4)
    anchor = None
    for step in range(3):
        features = torch.tanh(model(x))  # made
        loss = features.pow(2).mean()
        if anchor is None:
            anchor = features
        else:
            loss = loss + (features - anchor).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
