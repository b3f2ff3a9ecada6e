"""The overhead of autograd_lens.explain on training loops: a benchmark, not a test.

    python tools/bench_explain.py        # or: make bench

Two loops: a small MLP (32 -> 128 -> 128 -> 10, batch 64, SGD), and a realistic model, a
small ResNet (a stem and four residual blocks of 3x3 convolutions with batch norm, 32
channels, on 32x32 images, batch 32, SGD). Each is timed plain, inside `explain()`, and
inside `torch.autograd.set_detect_anomaly(True)` (PyTorch's own debugging mode, which
also records where each node was made), the three taking turns ROUNDS times in one run,
one torch thread (as `make test` runs). It prints the ratios of the medians to the plain
loop. The numbers in explain's docstring and the README come from here.
"""
import statistics
import time
import warnings

import torch
from torch import nn

from autograd_lens.explain import explain

ROUNDS = 5


def mlp():
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    return model, torch.randn(64, 32), torch.randint(0, 10, (64,)), 100


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU(),
                                  nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels))

    def forward(self, x):
        return torch.relu(x + self.body(x))


def small_resnet():
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32),
                          nn.ReLU(), *[ResidualBlock(32) for _ in range(4)],
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
    return model, torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,)), 5


MODELS = {"small MLP, batch 64": mlp, "small ResNet, batch 32": small_resnet}


def training(make):
    def train():
        torch.manual_seed(0)
        model, x, y, steps = make()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        for _ in range(steps):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item()
    return train


def explained(train):
    def run():
        with explain():
            return train()
    return run


def anomaly(train):
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled"
            with torch.autograd.set_detect_anomaly(True):
                return train()
    return run


def seconds(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main():
    torch.set_num_threads(1)
    for title, make in MODELS.items():
        train = training(make)
        ways = {"plain": train, "explain()": explained(train), "anomaly mode": anomaly(train)}
        results = {name: run() for name, run in ways.items()}
        assert len(set(results.values())) == 1, f"a way changed a number: {results}"
        times = {name: [] for name in ways}
        for _ in range(ROUNDS):
            for name, run in ways.items():
                times[name].append(seconds(run))
        plain = statistics.median(times["plain"])
        print(f"{title} (median of {ROUNDS}):")
        for name, taken in times.items():
            median = statistics.median(taken)
            print(f"  {name:14} {median * 1e3:8.0f} ms  {median / plain:5.2f}x plain")


if __name__ == "__main__":
    main()
