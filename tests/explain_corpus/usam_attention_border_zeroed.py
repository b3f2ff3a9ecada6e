"""RK-Net's USAM spatial-attention unit with polish=True: the ReLU attention map's border is zeroed by slice assignment.

Source: https://github.com/AggMan96/RK-Net/issues/9
Thread: Training RK-Net raised "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [8, 1, 96, 96]], which is output 0 of ReluBackward0, is at version ...". A reply identified the four `att[:, :, :, 0] = 0`-style lines in USAM: they modify att in place right after att = self.relu(att), and ReLU keeps its output for backward. The fix given is to add att = att.clone() under `if self.polish:` before zeroing the borders.
Cause: IN_PLACE_IN_FORWARD
Fix: Clone the attention map before zeroing its borders (att = att.clone() inside `if self.polish:`), so ReLU's saved output stays untouched.
Fix mentions: att = att.clone()
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=True):
        super(USAM, self).__init__()
        kernel = torch.ones((kernel_size, kernel_size))
        kernel = kernel.unsqueeze(0).unsqueeze(0)
        self.weight = nn.Parameter(data=kernel, requires_grad=False)
        kernel2 = torch.ones((1, 1)) * (kernel_size * kernel_size)
        kernel2 = kernel2.unsqueeze(0).unsqueeze(0)
        self.weight2 = nn.Parameter(data=kernel2, requires_grad=False)
        self.polish = polish
        self.pad = padding
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def __call__(self, x):
        fmap = x.sum(1, keepdim=True)
        x1 = F.conv2d(fmap, self.weight, padding=self.pad)
        x2 = F.conv2d(fmap, self.weight2, padding=0)
        att = x2 - x1
        att = self.bn(att)
        att = self.relu(att)  # made
        if self.polish:
            att[:, :, :, 0] = 0  # changed
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0
        output = x + att * x
        return output


def main():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
    usam = USAM()
    classifier = nn.Linear(8, 5)
    params = [*backbone.parameters(), *usam.parameters(), *classifier.parameters()]
    optimizer = torch.optim.SGD([p for p in params if p.requires_grad], lr=0.01)
    images, labels = torch.randn(4, 3, 12, 12), torch.randint(0, 5, (4,))
    features = usam(backbone(images))  # called
    logits = classifier(features.mean(dim=(2, 3)))
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
