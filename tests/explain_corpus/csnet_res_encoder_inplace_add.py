"""CS-Net (retinal vessel segmentation) ResEncoder block that adds the 1x1 residual into the ReLU output in place.

Source: https://github.com/iMED-Lab/CS-Net/pull/6
Thread: The PR "fix a runtime error in later pytorch versions" addresses "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation" raised when training CS-Net. In ResEncoder.forward, `out += residual` modifies the output of the ReLU, which ReLU saved for its backward. A reviewer confirmed that changing `out += residual` to `out = out + residual` fixes the issue.
Cause: IN_PLACE_IN_FORWARD
Fix: Replace `out += residual` with the out-of-place `out = out + residual` in ResEncoder.forward.
Fix mentions: out = out + residual
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResEncoder, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))  # made
        out += residual  # changed
        out = self.relu(out)
        return out


def main():
    torch.manual_seed(0)
    enc_input = ResEncoder(3, 8)
    final = nn.Conv2d(8, 1, kernel_size=1)
    optimizer = torch.optim.Adam([*enc_input.parameters(), *final.parameters()], lr=1e-4)
    x, mask = torch.randn(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.5).float()
    for step in range(2):
        pred = torch.sigmoid(final(enc_input(x)))  # called
        loss = F.binary_cross_entropy(pred, mask)
        optimizer.zero_grad()
        loss.backward()  # fails
        optimizer.step()


if __name__ == "__main__":
    main()
