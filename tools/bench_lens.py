"""How fast the lens reads a graph, next to torchviz's make_dot: a benchmark, not a test.

    python tools/bench_lens.py          # or: make bench (which also runs bench_explain.py)

For graphs of about 100 to 20,000 nodes (MLPs of growing depth, transformer encoders of
growing depth), times on the same graph, in one run: torchviz's
`make_dot(out, params, show_saved=True).source`, and the lens's `draw(out, params=...).source`,
`saved_tensors`, `retained_bytes` and `overview(...).source`. Each time is the median of
a few calls, made in alternation; the lens's are also given as a ratio to make_dot's
(below 1: the lens is faster). Where make_dot fails (it recurses once per node along the deepest path, and
Python stops it at the recursion limit), the table says so. The last column, draw's
microseconds per node, shows whether the lens stays linear in the graph's size.
"""
import gc
import statistics
import sys
import time

import torch
from torch import nn
from torchviz import make_dot

import autograd_lens
from autograd_lens import draw, retained_bytes, saved_tensors

overview = getattr(autograd_lens, "overview", None)  # absent before overview() was added

MLP_DEPTHS = (20, 100, 400, 1000, 2000, 4000)
ENCODER_LAYERS = (1, 12, 48)


def mlp(depth):
    """Linear(16, 16) + ReLU, `depth` times: 5 nodes a layer (leaves included)."""
    torch.manual_seed(0)
    model = nn.Sequential(*(m for _ in range(depth) for m in (nn.Linear(16, 16), nn.ReLU())))
    return model(torch.randn(4, 16)).pow(2).mean(), model


def encoder(layers):
    """nn.TransformerEncoder of width 32: about 77 nodes a layer."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    return model(torch.randn(2, 10, 32)).pow(2).mean(), model


def seconds(run):
    """One call's time, with the garbage collector off during it as timeit does."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(output, params, rounds):
    """{what: median seconds, or the name of the error it raised}, all on the same graph.

    The calls alternate (one of each per round), so that a slower moment of a shared
    machine weighs on all of them alike.
    """
    runs = {
        "make_dot": lambda: make_dot(output, params=params, show_saved=True).source,
        "draw": lambda: draw(output, params=params).source,
        "saved_tensors": lambda: saved_tensors(output, params=params),
        "retained_bytes": lambda: retained_bytes(output),
    }
    if overview is not None:
        runs["overview"] = lambda: overview(output, params=params).source
    times = {what: [] for what in runs}
    failed = {}
    for _ in range(rounds):
        for what, run in runs.items():
            if what in failed:
                continue
            try:
                times[what].append(seconds(run))
            except RecursionError as error:
                failed[what] = type(error).__name__
    return {what: failed.get(what) or statistics.median(times[what]) for what in runs}


def cell(results, what):
    seconds, baseline = results.get(what), results["make_dot"]
    if seconds is None:
        return "-"
    if isinstance(seconds, str):
        return seconds
    text = f"{seconds * 1e3:.1f} ms"
    if not isinstance(baseline, str):
        text += f" ({seconds / baseline:.2f}x)"
    return text


def main():
    print(f"torch {torch.__version__}, autograd_lens from {autograd_lens.__file__}, "
          f"Python recursion limit {sys.getrecursionlimit()}")
    columns = ["graph", "nodes", "make_dot", "draw", "saved_tensors", "retained_bytes",
               "overview", "draw us/node"]
    rows = []
    cases = [(f"MLP depth {d}", lambda d=d: mlp(d)) for d in MLP_DEPTHS] + \
            [(f"encoder {n} layers", lambda n=n: encoder(n)) for n in ENCODER_LAYERS]
    for name, build in cases:
        output, model = build()
        params = dict(model.named_parameters())
        nodes = len(autograd_lens.graph.walk([output]).nodes)
        results = measure(output, params, rounds=7 if nodes < 5000 else 3)
        per_node = results["draw"] / nodes * 1e6
        rows.append([name, f"{nodes:,}"] + [cell(results, c) for c in columns[2:-1]]
                    + [f"{per_node:.0f}"])
        if isinstance(results["make_dot"], float):
            rows[-1][2] = f"{results['make_dot'] * 1e3:.1f} ms"
        print("  " + " | ".join(rows[-1]), flush=True)  # progress; the table follows
    widths = [max(len(r[i]) for r in [columns] + rows) for i in range(len(columns))]
    print()
    for row in [columns] + rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))
    print("(x): the lens's time over make_dot's on the same graph, in this run; each time "
          "the median of 7 calls (3 above 5,000 nodes), the calls alternating.")


if __name__ == "__main__":
    main()
