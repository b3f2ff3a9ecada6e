"""Count the backward passes that compute gradients for a module's parameters.

    with backward_passes(model.trunk) as passes:
        loss1.backward(retain_graph=True)
        loss2.backward()
    passes.count  # 2: each call walked back into the trunk

A backward pass is one run of autograd's engine: one call of `Tensor.backward()`,
`torch.autograd.backward(...)` or `torch.autograd.grad(...)`, however many outputs it
starts from. `(loss1 + loss2).backward()` and `torch.autograd.backward([loss1, loss2])`
are one pass each.
"""
import threading

import torch
from torch import nn


class BackwardPasses:
    """What `backward_passes` counted: `.count` passes so far (final once the block ends)."""

    def __init__(self, module_name: str):
        self.module_name = module_name
        self.count = 0

    def __repr__(self):
        passes = "pass" if self.count == 1 else "passes"
        return (f"{self.count} backward {passes} computed gradients for the parameters "
                f"of {self.module_name}")


class backward_passes:
    """Count the backward passes that compute a gradient for `module`'s parameters.

    Use it as `with backward_passes(model.trunk) as passes: ...`, then read
    `passes.count`. What it counts, exactly: the backward passes (calls of
    `Tensor.backward`, `torch.autograd.backward` or `torch.autograd.grad`) run inside
    the `with` block in which autograd computed the gradient of at least one of the
    module's parameters that require grad. A pass counts once however many of those
    parameters it reaches; `.backward()` and `autograd.grad` count alike, whether or not
    the gradient goes into `.grad`. Graphs built before the block count too: what
    matters is when backward runs. Not counted: a pass that needs none of the module's
    parameter gradients, e.g. `torch.autograd.grad(loss, [x])` for an input `x`, or a
    backward restricted with `inputs=` to other tensors, even when it runs through the
    module's operations to get there.

    It installs one hook on each parameter (through
    `torch.autograd.graph.register_multi_grad_hook`, mode "any", which fires once per
    pass) when the block starts, and removes them all when it ends, also when the
    block raises. The hooks only count: they leave every gradient as autograd computed
    it, and they run nothing else.
    """

    def __init__(self, module):
        if not isinstance(module, nn.Module):
            raise TypeError(
                f"backward_passes counts the passes through a module's parameters, so it "
                f"needs an nn.Module, e.g. backward_passes(model.trunk); got "
                f"{type(module).__name__}")
        self._parameters = [p for p in module.parameters() if p.requires_grad]
        name = type(module).__name__
        if not self._parameters:
            raise ValueError(
                f"this {name} has no parameters that require grad, so no backward pass "
                "computes a gradient for it: pass a module with trainable parameters "
                "(a Linear layer, or a Sequential that holds one, not a bare ReLU), or set "
                "requires_grad=True on its parameters")
        self._passes = BackwardPasses(name)
        self._lock = threading.Lock()  # backward passes may run in several threads
        self._handle = None

    def _count_one(self, grad):
        with self._lock:
            self._passes.count += 1
        # returns None: the gradient goes on unchanged

    def __enter__(self) -> BackwardPasses:
        if self._handle is not None:
            raise RuntimeError("this backward_passes block is already running: "
                               "make a new one, backward_passes(module), for each with-block")
        self._handle = torch.autograd.graph.register_multi_grad_hook(
            self._parameters, self._count_one, mode="any")
        return self._passes

    def __exit__(self, *error):
        self._handle.remove()
        self._handle = None
        return False  # an error raised in the block goes on, unchanged
