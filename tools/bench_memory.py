"""The overhead of memory_timeline and backward_replay on a training step: a benchmark,
not a test.

    python tools/bench_memory.py        # or: make bench

Two steps: tools/bench_explain.py's (an MLP 32 -> 128 -> 128 -> 10 on a batch of 64,
SGD), and a wider one (784 -> 1024 -> 1024 -> 10, batch 128), each taken STEPS times:
plain; with each step inside `memory_timeline()`; with each step's `loss.backward()`
replaced by `backward_replay(loss)` (which also draws the graph with Graphviz; it makes
its picture only when shown: not here). The three take turns, ROUNDS times, in one run;
the ratios are of the medians. Both tools cost about the same whatever the step's size
(starting and reading the profiler, drawing), so the smaller the step, the larger the
ratio.
"""
import statistics
import time

import torch

from autograd_lens import backward_replay, memory_timeline

STEPS, ROUNDS = 20, 5


SIZES = {"small MLP, 32-128-128-10, batch 64": (32, 128, 64),
         "wider MLP, 784-1024-1024-10, batch 128": (784, 1024, 128)}


def training(size, backward=lambda loss: loss.backward(), around_step=None):
    inputs, width, batch = size
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(inputs, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(batch, inputs), torch.randint(0, 10, (batch,))

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        backward(loss)
        optimizer.step()
        return loss.item()

    def run():
        for _ in range(STEPS):
            if around_step is None:
                last = step()
            else:
                with around_step():
                    last = step()
        return last
    return run


def ways(size):
    return {"plain": training(size),
            "memory_timeline": training(size, around_step=lambda: memory_timeline(device="cpu")),
            "backward_replay": training(size, backward=backward_replay)}


def seconds(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main():
    for title, size in SIZES.items():
        runs = ways(size)
        results = {name: run() for name, run in runs.items()}
        assert len(set(results.values())) == 1, f"a way changed a number: {results}"
        times = {name: [] for name in runs}
        for _ in range(ROUNDS):
            for name, run in runs.items():
                times[name].append(seconds(run))
        plain = statistics.median(times["plain"])
        print(f"{title}: {STEPS} training steps, median of {ROUNDS}")
        for name, taken in times.items():
            median = statistics.median(taken)
            print(f"  {name:16} {median * 1e3 / STEPS:8.2f} ms a step  {median / plain:6.1f}x plain")


if __name__ == "__main__":
    main()
