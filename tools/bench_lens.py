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

    python tools/bench_lens.py --baseline ../main/src

also loads another copy of the library (a `src` folder holding `autograd_lens`, e.g. the
main branch's) under another name, times its draw, saved_tensors and retained_bytes in
the same alternation, and prints a second table: this library's time over the
baseline's. On a shared machine that ratio is steadier than two runs' times compared.
"""
import argparse
import gc
import importlib.util
import statistics
import sys
import time
from pathlib import Path

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


def load_baseline(src):
    """The autograd_lens package in the folder `src`, imported as autograd_lens_baseline."""
    init = Path(src).resolve() / "autograd_lens" / "__init__.py"
    name = "autograd_lens_baseline"
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def measure(output, params, rounds, baseline=None):
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
    if baseline is not None:
        runs["baseline draw"] = lambda: baseline.draw(output, params=params).source
        runs["baseline saved_tensors"] = lambda: baseline.saved_tensors(output, params=params)
        runs["baseline retained_bytes"] = lambda: baseline.retained_bytes(output)
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


def print_table(columns, rows):
    widths = [max(len(r[i]) for r in [columns] + rows) for i in range(len(columns))]
    print()
    for row in [columns] + rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", metavar="SRC",
                        help="a folder holding another autograd_lens to compare with")
    baseline = parser.parse_args().baseline
    if baseline is not None:
        baseline = load_baseline(baseline)
    print(f"torch {torch.__version__}, autograd_lens from {autograd_lens.__file__}, "
          f"Python recursion limit {sys.getrecursionlimit()}")
    if baseline is not None:
        print(f"baseline: {baseline.__file__}")
    columns = ["graph", "nodes", "make_dot", "draw", "saved_tensors", "retained_bytes",
               "overview", "draw us/node"]
    compared = ["graph", "draw", "saved_tensors", "retained_bytes"]
    rows, against_baseline = [], []
    cases = [(f"MLP depth {d}", lambda d=d: mlp(d)) for d in MLP_DEPTHS] + \
            [(f"encoder {n} layers", lambda n=n: encoder(n)) for n in ENCODER_LAYERS]
    for name, build in cases:
        output, model = build()
        params = dict(model.named_parameters())
        nodes = len(autograd_lens.graph.walk([output]).nodes)
        results = measure(output, params, rounds=7 if nodes < 5000 else 3, baseline=baseline)
        per_node = results["draw"] / nodes * 1e6
        rows.append([name, f"{nodes:,}"] + [cell(results, c) for c in columns[2:-1]]
                    + [f"{per_node:.0f}"])
        if isinstance(results["make_dot"], float):
            rows[-1][2] = f"{results['make_dot'] * 1e3:.1f} ms"
        print("  " + " | ".join(rows[-1]), flush=True)  # progress; the table follows
        if baseline is not None:
            against_baseline.append([name] + [
                f"{results[what] / results['baseline ' + what]:.2f}x" for what in compared[1:]])
    print_table(columns, rows)
    print("(x): the lens's time over make_dot's on the same graph, in this run; each time "
          "the median of 7 calls (3 above 5,000 nodes), the calls alternating.")
    if baseline is not None:
        print_table(compared, against_baseline)
        print("This library's time over the baseline's, on the same graph in the same run.")


if __name__ == "__main__":
    main()
