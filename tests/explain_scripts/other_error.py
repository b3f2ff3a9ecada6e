"""An error that has nothing to do with autograd's buffers."""
import torch


def main():
    x = torch.ones(2, 3, requires_grad=True)
    y = x @ torch.ones(2, 3)  # a shape error, not a freed buffer


if __name__ == "__main__":
    main()
