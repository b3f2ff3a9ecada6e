"""Lesson 07's DistributedDataParallel run: one iteration with two backward calls.

It lives here, not in the notebook, because each process that
`torch.multiprocessing.spawn` starts imports the function it runs, and a function defined
in a notebook cannot be imported.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

PROCESSES = 2


def _iteration(rank, init_file, results):
    # A file, not a port, to meet: two lessons can run this at once on one machine.
    dist.init_process_group("gloo", init_method=f"file://{init_file}",
                            rank=rank, world_size=PROCESSES)
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Linear(1, 1, bias=False))  # one weight, the same in each
    out = model(torch.full((1, 1), rank + 1.0))  # process 0's input is 1, process 1's is 2
    out.sum().backward(retain_graph=True)
    after_first = model.module.weight.grad.item()
    (10 * out).sum().backward()
    results.put((rank, after_first, model.module.weight.grad.item()))
    dist.destroy_process_group()


def grads_after_two_backward_calls():
    """Each process's weight gradient after the first and after the second backward call,
    as [(after_first, after_second), ...] in process order."""
    context = torch.multiprocessing.get_context("spawn")
    results = context.SimpleQueue()
    with tempfile.TemporaryDirectory() as folder:
        torch.multiprocessing.start_processes(
            _iteration, args=(os.path.join(folder, "init"), results),
            nprocs=PROCESSES, start_method="spawn")
        by_rank = {rank: (first, second) for rank, first, second in
                   (results.get() for _ in range(PROCESSES))}
    return [by_rank[rank] for rank in range(PROCESSES)]
