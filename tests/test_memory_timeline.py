"""memory_timeline: the bytes PyTorch's allocator holds over a block, to the byte where the
sizes are known, against an independent measurement where they are not; its phases; and
what it does with odd blocks (nothing allocated, nested, an error inside)."""
import ctypes
import gc
import ctypes.util
import sys

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from autograd_lens import memory_timeline
from autograd_lens.memory import format_bytes

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_each_tensor_is_found_to_the_byte():
    sizes = {"float32 x 1000": (1000, torch.float32, 4000),
             "float64 x 3": (3, torch.float64, 24),
             "uint8 x 123457": (123_457, torch.uint8, 123_457),
             "int16 x 7": (7, torch.int16, 14)}
    with memory_timeline(device="cpu") as mem:
        kept = {name: torch.empty(n, dtype=dtype) for name, (n, dtype, _) in sizes.items()}
        del kept["float64 x 3"]
    allocated = [event.bytes for event in mem.events if event.bytes > 0]
    freed = [event.bytes for event in mem.events if event.bytes < 0]
    assert allocated == [nbytes for _, _, nbytes in sizes.values()]
    assert freed == [-24]
    assert mem.peak.bytes == 4000 + 24 + 123_457 + 14
    assert mem.end == 4000 + 123_457 + 14
    assert [event.level for event in mem.events] == [4000, 4024, 127_481, 127_495, 127_471]
    assert all(event.op == "aten::empty" for event in mem.events[:4])


def test_on_the_cpu_a_free_of_memory_from_before_the_block_is_not_seen(capfd):
    """As the docstring says; and PyTorch's C++ warning about it stays out of the output."""
    before = torch.ones(250)  # 1,000 bytes, allocated before the block
    with memory_timeline(device="cpu") as mem:
        del before
    assert mem.events == [] and mem.end == 0 and mem.peak.event is None
    out, err = capfd.readouterr()
    assert "unknown size" not in out + err


# --- an independent measurement: glibc's own count of the bytes malloc handed out -------

def _glibc_held():
    """Bytes that glibc's malloc holds for the program (mallinfo2: heap + mmapped), or
    None where there is no glibc. PyTorch's CPU allocator takes its memory from malloc."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    if not hasattr(libc, "mallinfo2"):
        return None

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    libc.mallinfo2.restype = MallInfo2
    return lambda: libc.mallinfo2().uordblks + libc.mallinfo2().hblkhd


class _SampleAfterEveryOp(TorchDispatchMode):
    """Reads glibc's count after every aten op, in the forward and the backward pass: the
    highest reading is the peak as malloc saw it (a few hundred bytes more per tensor for
    malloc's headers and the tensors' own objects; missing what an op allocated and freed
    before it returned)."""

    def __init__(self, held):
        super().__init__()
        self.held, self.start, self.highest = held, held(), 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        self.highest = max(self.highest, self.held() - self.start)
        return result


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_the_peak_agrees_with_malloc_s_own_count():
    held = _glibc_held()
    if held is None:
        pytest.skip("no mallinfo2 in this C library")
    torch.manual_seed(0)
    trunk = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU())
    x = torch.randn(256, 512)

    def step():
        features = trunk(x)
        features.sum().backward(retain_graph=True)
        (features ** 2).mean().backward()

    step()  # warm up: malloc's own arenas and PyTorch's first-use buffers
    trunk.zero_grad(set_to_none=True)
    # malloc counts the whole process: no garbage collection of other tests' objects
    # (this worker ran them) in the middle of the measurement
    gc.collect()
    gc.disable()
    try:
        with memory_timeline(device="cpu") as mem:
            step()
        trunk.zero_grad(set_to_none=True)
        sampler = _SampleAfterEveryOp(held)
        with sampler:
            step()
    finally:
        gc.enable()
    assert mem.peak.bytes > 4_000_000  # megabytes: the overheads are small beside them
    assert abs(mem.peak.bytes - sampler.highest) < 0.03 * mem.peak.bytes, \
        (mem.peak.bytes, sampler.highest)


# --- phases -----------------------------------------------------------------------------

def test_phases_are_forward_each_backward_call_and_the_optimizer():
    torch.manual_seed(0)
    model = nn.Linear(64, 64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # momentum: step allocates
    x = torch.randn(32, 64)
    with memory_timeline(device="cpu") as mem:
        out = model(x)
        out.sum().backward(retain_graph=True)
        torch.autograd.grad(out.mean(), model.weight)
        optimizer.step()
        optimizer.zero_grad()
    names = [phase.name for phase in mem.phases]
    assert names[0] == "forward"
    assert [n for n in names if n.startswith("backward")] == ["backward #1", "backward #2"]
    assert names.index("backward #1") < names.index("backward #2") < names.index("optimizer step")
    assert names[-1] == "zero_grad"
    # zero_grad(set_to_none=True) frees the two .grad tensors: 64 x 64 + 64 floats
    freed = [e.bytes for e in mem.events if e.phase == "zero_grad"]
    assert sorted(freed) == [-16384, -256]
    backward_nodes = {e.node for e in mem.events if e.phase.startswith("backward")}
    assert "AddmmBackward0" in backward_nodes or "MmBackward0" in backward_nodes


def test_phase_peaks_are_each_phases_highest_level_in_order():
    """phase_peaks(prefix): the text form's "its highest" column, for the phases whose name
    starts with prefix; micro-batches' backward calls after the first also hold the .grad."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 256), nn.ReLU(), nn.Linear(256, 1))
    x = torch.randn(64, 8)
    with memory_timeline(device="cpu") as mem:
        for x_micro in x.chunk(2):
            model(x_micro).sum().backward()
    everything = mem.phase_peaks()
    assert [name for name, _ in everything] == [phase.name for phase in mem.phases]
    for (name, highest), phase in zip(everything, mem.phases):
        assert highest == max(e.level for e in mem.events[phase.first:phase.last + 1])
    assert max(highest for _, highest in everything) == mem.peak.bytes
    backward = mem.phase_peaks("backward")
    assert [name for name, _ in backward] == ["backward #1", "backward #2"]
    # the second backward starts holding every .grad that the first made
    assert backward[1][1] > backward[0][1]
    assert mem.phase_peaks("no such phase") == []


def test_two_backward_calls_peak_higher_than_one_pass():
    """The issue's claim in small: retaining the graph and making a second pass holds more
    at once than one pass from the summed loss."""
    def peak(way):
        torch.manual_seed(1)
        trunk = nn.Sequential(nn.Linear(8, 768), nn.ReLU(), nn.Linear(768, 768), nn.ReLU())
        head1, head2 = nn.Linear(768, 1), nn.Linear(768, 3)
        x = torch.randn(256, 8)
        with memory_timeline(device="cpu") as mem:
            features = trunk(x)
            loss1, loss2 = head1(features).pow(2).mean(), head2(features).logsumexp(1).mean()
            if way == "two calls":
                loss1.backward(retain_graph=True)
                loss2.backward()
            else:
                (loss1 + loss2).backward()
        return mem.peak.bytes

    assert peak("two calls") > 1.3 * peak("summed")


# --- odd blocks -------------------------------------------------------------------------

def test_a_block_that_allocates_nothing_says_so():
    with memory_timeline(device="cpu") as mem:
        pass
    assert mem.events == [] and mem.peak.bytes == 0 and mem.end == 0
    assert "nothing was allocated" in repr(mem) and "nothing was allocated" in repr(mem.peak)
    with pytest.raises(ValueError, match="nothing to plot"):
        mem.plot()


def test_a_nested_profiler_is_refused_and_the_outer_one_goes_on():
    with memory_timeline(device="cpu") as outer:
        a = torch.ones(10)
        with pytest.raises(RuntimeError, match="a profiler is already running"):
            with memory_timeline(device="cpu"):
                pass
        b = torch.ones(20)
    assert [e.bytes for e in outer.events] == [40, 80]
    with torch.profiler.profile():
        with pytest.raises(RuntimeError, match="one at a time"):
            memory_timeline(device="cpu").__enter__()
    del a, b


def test_an_error_inside_propagates_unchanged_and_the_timeline_is_kept():
    error = ValueError("the user's own error")
    with pytest.raises(ValueError) as caught:
        with memory_timeline(device="cpu") as mem:
            kept = torch.ones(100)
            raise error
    assert caught.value is error and not getattr(error, "__notes__", None)
    assert [e.bytes for e in mem.events] == [400]
    assert not torch._C._autograd._profiler_enabled()  # stopped
    del kept


def test_reading_it_inside_the_block_says_to_wait():
    with memory_timeline(device="cpu") as mem:
        with pytest.raises(RuntimeError, match="still recording"):
            mem.peak


def test_a_device_it_cannot_record_is_refused():
    with pytest.raises(ValueError, match="device='cpu'"):
        memory_timeline(device="meta")


def test_the_profiler_s_banner_is_not_printed_and_the_rest_is(capfd):
    """PyTorch's C++ prints dated lines on stderr when the profiler starts and stops, and
    on frees of memory from before it started: none of them reaches the output; what the
    block itself writes there does, when the block ends."""
    import os
    earlier = [torch.ones(10 + k) for k in range(1500)]  # a thousand frees it cannot size
    with memory_timeline(device="cpu"):
        os.write(2, b"the block's own line\n")
        earlier.clear()
        torch.ones(3)
    out, err = capfd.readouterr()
    assert "profiler_start" not in err + out and "USDT" not in err + out
    assert "unknown size" not in err + out
    assert err == "the block's own line\n"


# --- what it shows ----------------------------------------------------------------------

def test_the_text_form_and_the_peak_say_where():
    a = torch.ones(4, 4, requires_grad=True)
    with memory_timeline(device="cpu") as mem:
        loss = (a.exp() * 3).sum()
        loss.backward()
    text = repr(mem)
    assert text.startswith("memory_timeline on cpu:")
    assert "peak:" in text and "forward" in text and "backward #1" in text
    assert mem.peak.event.phase in ("forward", "backward #1")
    assert format_bytes(mem.peak.bytes) in text


def test_plot_draws_the_line_the_phases_and_the_peak():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a = torch.ones(100, 100, requires_grad=True)
    with memory_timeline(device="cpu") as mem:
        (a * 2).relu().sum().backward()
    ax = mem.plot(title="one step")
    texts = [t.get_text() for t in ax.texts]
    assert "forward" in texts and "backward #1" in texts
    assert any(t.startswith("peak ") for t in texts)
    assert ax.get_title() == "one step" and "kB" in ax.get_ylabel()
    plt.close(ax.figure)


@pytest.mark.parametrize("count, text", [(0, "0 B"), (999, "999 B"), (1000, "1 kB"),
                                         (7_100_000, "7.1 MB"), (-2_500, "-2.5 kB")])
def test_bytes_are_said_in_decimal_units(count, text):
    assert format_bytes(count) == text


def test_by_default_it_measures_the_device_the_block_allocated_on():
    """A CPU model on a GPU machine (Colab's GPU runtime) is measured on the CPU."""
    from autograd_lens.memory import _device_used
    with memory_timeline() as mem:
        torch.ones(1000)
    assert mem.device == "cpu" and mem.peak.bytes == 4000
    event = lambda on, nbytes: (0.0, nbytes, on, "aten::empty", "", None, 0)  # noqa: E731
    assert _device_used(([event("cpu", 8), event("cpu", -8)], [], [])) == "cpu"
    assert _device_used(([event("cpu", 8), event("cuda:1", 4), event("cuda:1", 4)], [], [])) == "cuda:1"
