"""The overhead of autograd_lens.explain on a small training loop: a benchmark, not a test.

    python tools/bench_explain.py        # or: make bench

Times the same loop (an MLP 32 -> 128 -> 128 -> 10 on batches of 64, SGD) without and
with `explain()`, alternating the two five times in one run, and prints the ratio of
the medians. The number in explain's docstring comes from here.
"""
import statistics
import time

import torch

from autograd_lens.explain import explain

STEPS, ROUNDS = 100, 5


def train(steps=STEPS):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 32), torch.randint(0, 10, (64,))
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def seconds(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def explained():
    with explain():
        return train()


def main():
    assert train() == explained(), "explain() changed a number"
    plain, watched = [], []
    for _ in range(ROUNDS):
        plain.append(seconds(train))
        watched.append(seconds(explained))
    ratio = statistics.median(watched) / statistics.median(plain)
    print(f"{STEPS} training steps: {statistics.median(plain) * 1e3:.0f} ms without explain(), "
          f"{statistics.median(watched) * 1e3:.0f} ms with it: {ratio:.1f}x (median of {ROUNDS})")


if __name__ == "__main__":
    main()
