"""Find the cause of a "Trying to backward through the graph a second time" error, or of
the in-place "modified by an inplace operation" error, in your own code.

    from autograd_lens import explain
    with explain():
        train()                      # in a notebook, or anywhere in your code

    python -m autograd_lens.explain train.py --epochs 3    # a whole script, as `python` runs it

When one of those two errors escapes, it gets a note (PEP 678; the original message and
traceback stay) that names the node whose saved tensors are gone or changed and the line
that made it, the earlier backward call that freed them (which one of the run, where, and
whether it retained the graph) or the line that changed them in place, and the likely
pattern with its usual fix. Any other error passes through untouched, and a program that
raises nothing runs and prints exactly as without it.

How: while it is on, a TorchFunctionMode watches every torch call made from Python and
records, in each new graph node's `metadata`, the program line that made it; it numbers
the backward calls and marks the nodes each one frees; it notes where tensors change in
place. It calls what your program calls, with the same arguments, so the numbers are the
same, and holds what it records in node metadata and weak references, so it keeps nothing
alive. It is a debugging tool, and slows a program down: on a small MLP's training loop
(tools/bench_explain.py, `make bench`: 100 steps of a 32-128-128-10 MLP, batch 64, SGD),
2.1x to 2.2x the time without it, in four runs on an otherwise idle 2-core machine (1.3x
to 3.1x while other work loaded it). The extra work
is done per torch call, whatever its size, so a loop of many tiny operations pays more,
one of large matrix products less.
"""
from .recorder import Recorder


class explain:
    """Context manager: annotate autograd's freed-buffer and in-place errors raised inside."""

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


__all__ = ["explain"]
