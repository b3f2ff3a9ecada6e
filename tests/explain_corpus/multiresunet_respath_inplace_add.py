"""MultiResUNet (j-sripad/mulitresunet-pytorch) whose Respath adds the 1x1 shortcut into the 3x3 block's ReLU output with +=.

Source: https://github.com/j-sripad/mulitresunet-pytorch/issues/3
Thread: The reporter found that several `+=` operations in the model cause "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation", and that changing them to `a = a + b` solves the problem. In Respath.forward, `x = self.conv2d_bn_3x3(x)` returns F.relu(...), whose output ReLU keeps for backward, and `x += shortcut` then overwrites it.
Cause: IN_PLACE_IN_FORWARD
Fix: Use out-of-place additions, x = x + shortcut, instead of x += shortcut.
Fix mentions: x = x + shortcut
Fix must not say: retain_graph=True
"""
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2d_batchnorm(nn.Module):
    def __init__(self, input_features: int, num_of_filters: int, kernel_size: Tuple = (2, 2),
                 stride: Tuple = (1, 1), activation: str = 'relu', padding: int = 0) -> None:
        super().__init__()
        self.activation = activation
        self.conv1 = nn.Conv2d(in_channels=input_features, out_channels=num_of_filters,
                               kernel_size=kernel_size, stride=stride, padding=padding)
        self.batchnorm = nn.BatchNorm2d(num_of_filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv1(x)
        x = self.batchnorm(x)
        if self.activation == 'relu':
            return F.relu(x)  # made
        else:
            return x


class Respath(nn.Module):
    def __init__(self, input_features: int, filters: int, respath_length: int) -> None:
        super().__init__()
        self.filters = filters
        self.respath_length = respath_length
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features=input_features, num_of_filters=self.filters,
                                              kernel_size=(1, 1), activation='None', padding=0)
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features=input_features, num_of_filters=self.filters,
                                              kernel_size=(3, 3), activation='relu', padding=1)
        self.batch_norm1 = nn.BatchNorm2d(filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = self.conv2d_bn_1x1(x)
        x = self.conv2d_bn_3x3(x)  # called
        x += shortcut  # changed
        x = F.relu(x)
        x = self.batch_norm1(x)
        return x


class TinyMultiResUnet(nn.Module):
    def __init__(self, channels=3, filters=8):
        super().__init__()
        self.encoder = Conv2d_batchnorm(channels, filters, kernel_size=(3, 3), activation='relu', padding=1)
        self.respath4 = Respath(input_features=filters, filters=filters, respath_length=1)
        self.conv_final = Conv2d_batchnorm(filters, 1, kernel_size=(1, 1), activation='None')

    def forward(self, x):
        x_multires = self.encoder(x)
        x_multires = self.respath4(x_multires)
        return torch.sigmoid(self.conv_final(x_multires))


def main():
    torch.manual_seed(0)
    model = TinyMultiResUnet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    image, mask = torch.randn(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.5).float()
    pred = model(image)
    loss = F.binary_cross_entropy(pred, mask)
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
