"""imgclsmob Xception: each unit's body starts with nn.ReLU(inplace=True) on the same x that the 1x1 identity conv just used.

Source: https://github.com/osmr/imgclsmob/issues/13
Thread: Training the library's Xception failed at loss.backward() with "one of the variables needed for gradient computation has been modified by an inplace operation". The reporter pointed at the many `self.activ = nn.ReLU(inplace=True)` ... `x = self.activ(x)` lines, which overwrite a tensor that another branch still holds (here the unit input, saved by the identity 1x1 convolution), and said removing inplace=True fixes it. The maintainer labelled the issue a bug and closed it.
Cause: IN_PLACE_IN_FORWARD
Fix: Use nn.ReLU(inplace=False) for the pre-activation ReLU at the start of each unit's body (or clone x for the identity branch), so the input the identity conv saved is not overwritten.
Fix mentions: inplace=False
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, activate):
        super(ConvBlock, self).__init__()
        self.activate = activate
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(num_features=out_channels)
        if self.activate:
            self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.conv(x)  # made
        x = self.bn(x)
        if self.activate:
            x = self.activ(x)
        return x


class DwsConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super(DwsConv, self).__init__()
        self.dw_conv = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                 groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        return self.pw_conv(self.dw_conv(x))


class DwsConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, activate):
        super(DwsConvBlock, self).__init__()
        self.activate = activate
        if self.activate:
            self.activ = nn.ReLU(inplace=True)
        self.conv = DwsConv(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.bn = nn.BatchNorm2d(num_features=out_channels)

    def forward(self, x):
        if self.activate:
            x = self.activ(x)  # changed
        x = self.conv(x)
        x = self.bn(x)
        return x


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride, reps, start_with_relu=True):
        super(XceptionUnit, self).__init__()
        self.resize_identity = (in_channels != out_channels) or (stride != 1)
        if self.resize_identity:
            self.identity_conv = ConvBlock(in_channels, out_channels, 1, stride, 0, activate=False)
        self.body = nn.Sequential()
        for i in range(reps):
            in_channels_i = in_channels if i == 0 else out_channels
            activate = start_with_relu if (i == 0) else True
            self.body.add_module("block{}".format(i + 1), DwsConvBlock(in_channels_i, out_channels, activate))
        if stride != 1:
            self.body.add_module("pool", nn.MaxPool2d(kernel_size=3, stride=stride, padding=1))

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)  # called
        else:
            identity = x
        x = self.body(x)
        x = x + identity
        return x


def main():
    torch.manual_seed(0)
    features = nn.Sequential(
        ConvBlock(3, 8, 3, stride=2, padding=0, activate=True),
        XceptionUnit(8, 16, stride=2, reps=2, start_with_relu=False),
        XceptionUnit(16, 32, stride=2, reps=2, start_with_relu=True),
        nn.AdaptiveAvgPool2d(1))
    output = nn.Linear(32, 10)
    optimizer = torch.optim.SGD([*features.parameters(), *output.parameters()], lr=0.1, momentum=0.9)
    images, target = torch.randn(2, 3, 33, 33), torch.randint(0, 10, (2,))
    logits = output(features(images).flatten(1))
    loss = F.cross_entropy(logits, target)
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
