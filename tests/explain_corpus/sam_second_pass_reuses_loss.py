"""Multi-task classifier trained with SAM (davda54/sam): the second forward-backward pass keeps adding to the first pass's loss.

Source: https://github.com/davda54/sam/issues/10
Thread: A user reported the freed-graph error with SAM; the maintainer replied that the error means a single forward pass is followed by several backward passes, whereas SAM needs two separate forward-backward passes as in the README. Another user posted the code that hit it: a per-task loss summed into `loss` in a loop, loss.backward(), optimizer.first_step(), a second model(image) pass, but the second loop kept adding to the same `loss`, so the second backward went back into the first pass's graph as well.
Cause: RUNNING_TOTAL
Fix: Start the second SAM pass from a fresh loss (loss = 0 before the second loop) built only from the second forward pass, so second_step() sees only the gradient at the perturbed weights.
Fix mentions: loss = 0, afresh
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super(SAM, self).__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(p=2) for g in self.param_groups
                                            for p in g["params"] if p.grad is not None]), p=2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


class Classifier(nn.Module):
    def __init__(self, num_tasks):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.heads = nn.Conv2d(8, num_tasks, 1)

    def forward(self, image):
        feat = self.backbone(image)
        logit_map = self.heads(feat)
        return logit_map.flatten(1), logit_map


def get_loss(output, target, index):
    loss = F.binary_cross_entropy_with_logits(output[:, index], target[:, index])  # made
    acc = ((output[:, index] > 0).float() == target[:, index]).float().mean()
    return loss, acc


def main():
    torch.manual_seed(0)
    num_tasks = 3
    model = Classifier(num_tasks)
    optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
    loss_sum, acc_sum = [0.0] * num_tasks, [0.0] * num_tasks
    for step in range(2):
        image, target = torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4, num_tasks)).float()
        output, logit_map = model(image)
        loss = 0
        for t in range(num_tasks):
            loss_t, acc_t = get_loss(output, target, t)
            loss += loss_t
            loss_sum[t] += loss_t.item()
            acc_sum[t] += acc_t.item()
        optimizer.zero_grad()
        loss.backward()  # freed
        optimizer.first_step(zero_grad=True)
        output, logit_map = model(image)
        for t in range(num_tasks):
            loss_t, acc_t = get_loss(output, target, t)
            loss += loss_t
            loss_sum[t] += loss_t.item()
            acc_sum[t] += acc_t.item()
        loss.backward()  # fails
        optimizer.second_step(zero_grad=True)


if __name__ == "__main__":
    main()
