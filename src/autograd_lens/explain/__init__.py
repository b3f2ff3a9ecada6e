"""Find the cause of a "Trying to backward through the graph a second time" error, or of
the in-place "modified by an inplace operation" error, in your own code.

    from autograd_lens import explain
    with explain():
        train()                      # in a notebook, or anywhere in your code

    python -m autograd_lens.explain train.py --epochs 3    # a whole script, as `python` runs it

    %load_ext autograd_lens                                  # every cell of a notebook

When one of those two errors escapes, it gets a note (PEP 678; the original message and
traceback stay) that names the node whose saved tensors are gone or changed, the line that
made it and the lines that called the model it is in, the earlier backward call that freed
them (which one of the run, where, and whether it retained the graph) or the line that
changed them in place, and the likely pattern with a fix that is safe for what it saw,
in the program's own words where its lines say enough. Any other error passes through
untouched, and a program that raises nothing runs and prints exactly as without it.

How: while it is on, a TorchFunctionMode watches every torch call made from Python and
records, in each new graph node's `metadata`, the program lines that made it; it numbers
the backward calls and marks the nodes each one frees; it notes the optimizer steps and
what they update, and each change in place by the memory it changed. It calls what your
program calls, with the same arguments, so the numbers are the same, and holds what it
records in node metadata, plain numbers and weak references, so it keeps nothing alive.
Under torch.compile it stays out of the traced code. It is a debugging tool, and slows a
program down (tools/bench_explain.py, `make bench`, one thread): a small MLP's training
loop took 2.5x the time without it (PyTorch's anomaly mode: 3.3x), a small ResNet's at
batch 32 1.1x (anomaly mode: 1.4x). The extra work is done per torch call, whatever its
size, so a loop of many tiny operations pays more, one of large convolutions less.
"""
from .recorder import Recorder


class explain:
    """Context manager: annotate autograd's freed-buffer and in-place errors raised inside.

    In a notebook, `%load_ext autograd_lens` turns it on for every cell of the kernel, and
    `%unload_ext autograd_lens` off (see turn_on)."""

    _active = 0  # nested explain(): the outermost one does the recording

    def __enter__(self):
        self._recorder = Recorder() if explain._active == 0 else None
        explain._active += 1
        if self._recorder is not None:
            self._recorder.__enter__()
        return self

    def __exit__(self, *exc_info):
        explain._active -= 1
        if self._recorder is not None:
            self._recorder.__exit__(*exc_info)
        return False  # never swallow an error


_for_every_cell = None  # the explain() that %load_ext autograd_lens entered


def turn_on() -> bool:
    """Keep explain() on until turn_off(), for what follows (every cell of a notebook's
    kernel: `%load_ext autograd_lens` calls this). False if it was on already."""
    global _for_every_cell
    if _for_every_cell is not None:
        return False
    _for_every_cell = explain()
    _for_every_cell.__enter__()
    return True


def turn_off() -> bool:
    """End what turn_on() began. False if it was not on."""
    global _for_every_cell
    if _for_every_cell is None:
        return False
    session, _for_every_cell = _for_every_cell, None
    session.__exit__(None, None, None)
    return True


__all__ = ["explain", "turn_on", "turn_off"]
