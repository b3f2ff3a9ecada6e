"""Crowd-counting FPN head (NWPU-MOC models/FPN/FPN_Head.py) whose top-down path adds the upsampled level into the lateral in place.

Source: https://github.com/lyongo/NWPU-MOC/issues/4
Thread: Running train.py as in the README failed at backward with "one of the variables needed for gradient computation has been modified by an inplace operation: [...], which is output 0 of ReluBackward0, is at version 1; expected version 0"; switching inplace=True to inplace=False did not help. A reply pointed at line 101 of FPN_Head.py, `laterals[i - 1] += F.interpolate(laterals[i], ...)`, and said to replace the += with a plain assignment; the reporter confirmed that works. The laterals are outputs of the Conv2d block's ReLU, which saves its output for backward.
Cause: IN_PLACE_IN_FORWARD
Fix: Write the top-down merge out of place: laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode='nearest').
Fix mentions: laterals[i - 1] = laterals[i - 1] +
Fix must not say: inplace=False, retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, NL='relu', same_padding=False, bn=True, bias=True):
        super(Conv2d, self).__init__()
        padding = int((kernel_size - 1) // 2) if same_padding else 0
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=padding, bias=bias)
        self.bn = nn.BatchNorm2d(out_channels) if bn else None
        self.relu = nn.ReLU(inplace=False) if NL == 'relu' else None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self.relu is not None:
            x = self.relu(x)  # made
        return x


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, bn=True):
        super(FPN, self).__init__()
        self.in_channels = in_channels
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(len(in_channels)):
            self.lateral_convs.append(Conv2d(in_channels[i], out_channels, 1, bn=bn, bias=not bn, same_padding=True))
            self.fpn_convs.append(Conv2d(out_channels, out_channels, 3, bn=bn, bias=not bn, same_padding=True))

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]  # called
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')  # changed
        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        return tuple(outs)


def main():
    torch.manual_seed(0)
    in_channels = [4, 8, 16]
    neck = FPN(in_channels, 8)
    head = nn.Conv2d(8, 1, 1)
    optimizer = torch.optim.Adam([*neck.parameters(), *head.parameters()], lr=1e-4)
    feats = [torch.randn(2, c, s, s) for c, s in zip(in_channels, [16, 8, 4])]
    target = torch.rand(2, 1, 16, 16)
    outs = neck(feats)
    loss = F.mse_loss(head(outs[0]), target)
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
