"""A self-distillation step (DINO-style) whose running center of the teacher's outputs is
updated with grad on, so the next step's loss reaches into the last step's graph."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    teacher = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    center = torch.zeros(4)
    for step in range(3):
        x = torch.randn(16, 8)
        teacher_out = teacher(x)  # made
        targets = torch.softmax(teacher_out - center, dim=1)
        loss = -(targets * torch.log_softmax(student(x), dim=1)).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()
        center = 0.9 * center + 0.1 * teacher_out.mean(0)  # keeps


if __name__ == "__main__":
    main()
