"""What a future torch might drop gives a row marked unknown, not a crash.

The lens reads attributes of autograd's nodes that are not public API: `next_functions`,
`_raw_saved_<name>` and its `SavedTensor.unpack_hook` and `.data`, `_saved_<name>`, a
custom Function's `_raw_saved_tensors`, AccumulateGrad's `variable`. Fake nodes that
lack one of them stand in for such a torch. Every `_saved_<name>` they have is a
tripwire: reading it would unpack, so the lens must not read it unless a SavedTensor
said that no hook packed it.
"""
import pytest
import torch

from autograd_lens import draw, retained_bytes, saved_tensors, shared_nodes
from autograd_lens import internals


class FakeOutput(torch.Tensor):
    """A real tensor whose grad_fn is whatever fake node we give it."""

    @property
    def grad_fn(self):
        return self.fake_grad_fn


def output_of(node):
    output = torch.Tensor._make_subclass(FakeOutput, torch.ones(2))
    output.fake_grad_fn = node
    return output


class FakeSavedTensor:
    """torch._C._autograd.SavedTensor's Python surface, minus what `drop` names."""

    def __init__(self, data, unpack_hook=None, drop=()):
        self._data, self._hook, self._drop = data, unpack_hook, drop

    @property
    def unpack_hook(self):
        if "unpack_hook" in self._drop:
            raise AttributeError("'SavedTensor' object has no attribute 'unpack_hook'")
        if self._hook == "C++":
            raise RuntimeError("Compiled Autograd only supports python saved tensor hooks ")
        return self._hook

    @property
    def data(self):
        return self._data

    def unpack(self):
        raise AssertionError("the lens unpacked a saved tensor")


def tripwire(self):
    raise AssertionError("the lens read a _saved_ attribute that would unpack")


class Leaf:
    """Like AccumulateGrad: `variable` is the leaf, no inputs."""

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()


class NoInputs:
    """A node from a torch without `next_functions`."""


class DroppedSavedTwin:
    """Has `_raw_saved_self` but a torch that dropped `_saved_self`."""

    next_functions = ()
    _raw_saved_self = FakeSavedTensor(torch.ones(3))


class NoUnpackHookAttribute:
    """A torch whose SavedTensor cannot say whether a hook packed it."""

    next_functions = ()
    _raw_saved_self = FakeSavedTensor(torch.ones(3), drop=("unpack_hook",))
    _saved_self = property(tripwire)


class PackedByCppHook:
    """A hook written in C++: torch 2.13 raises when asked for it."""

    next_functions = ()
    _raw_saved_self = FakeSavedTensor(None, unpack_hook="C++")
    _saved_self = property(tripwire)


class HalfPackedList:
    """A list of saved tensors, one of them packed by a Python hook."""

    next_functions = ()
    _raw_saved_indices = [FakeSavedTensor(torch.arange(4)),
                          FakeSavedTensor(torch.zeros(5), unpack_hook=lambda p: p)]
    _saved_indices = property(tripwire)


class RawReadFails:
    next_functions = ()

    @property
    def _raw_saved_other(self):
        raise TypeError("a future torch changed this")


class StrangeError:
    """`_saved_self` fails with a message autograd does not give today."""

    next_functions = ()
    _raw_saved_self = FakeSavedTensor(None)

    @property
    def _saved_self(self):
        raise RuntimeError("something new went wrong")


class OddNextFunctions:
    next_functions = [None, 3]  # not the (node, input number) pairs we know


class LeafWithoutVariable:
    next_functions = ()

    @property
    def variable(self):
        raise RuntimeError("no variable here")


class Root:
    """The fake graph's root: feeds on one node of each kind above."""

    def __init__(self, leaf):
        self.next_functions = tuple((node, 0) for node in [
            NoInputs(), DroppedSavedTwin(), NoUnpackHookAttribute(), PackedByCppHook(),
            HalfPackedList(), RawReadFails(), StrangeError(), OddNextFunctions(),
            LeafWithoutVariable(), None, Leaf(leaf)])


@pytest.fixture
def fake():
    leaf = torch.ones(3, requires_grad=True)
    return output_of(Root(leaf)), leaf


def states(rows):
    return [(r.node, r.attribute, r.state) for r in rows]


def test_every_missing_attribute_gives_an_unknown_row(fake):
    output, leaf = fake
    rows = saved_tensors(output, params={"w": leaf})
    assert states(rows) == [
        ("DroppedSavedTwin", "self", "unknown"),
        ("NoUnpackHookAttribute", "self", "unknown"),
        ("PackedByCppHook", "self", "packed by a hook"),
        ("HalfPackedList", "indices[0]", "live"),
        ("HalfPackedList", "indices[1]", "packed by a hook"),
        ("RawReadFails", "other", "unknown"),
        ("StrangeError", "self", "unknown"),
    ]
    text = repr(rows)
    assert "unknown: no _saved_self (AttributeError" in text
    assert "has no `unpack_hook`, so whether a hook packed it cannot be told" in text
    assert "not shown by torch (a hook not written in Python)" in text
    assert "HalfPackedList         indices[0]  (4,)   int64  32" in text
    assert "unknown: _raw_saved_other (TypeError: a future torch changed this)" in text
    assert "unknown: RuntimeError: something new went wrong" in text


def test_nodes_whose_inputs_are_hidden_are_drawn_and_marked(fake):
    output, leaf = fake
    view = draw(output, params={"w": leaf})
    summary = repr(view)
    assert "not fully shown by this torch" in summary.splitlines()[0]
    assert "NoInputs               saves no tensors (inputs unknown)" in summary
    assert "OddNextFunctions       saves no tensors (inputs unknown)" in summary
    assert "LeafWithoutVariable    saves no tensors" in summary  # a node, not a leaf
    assert "w                      leaf (3)" in summary
    assert "inputs unknown" in view.source and "not shown by this torch" in view.source
    assert "<svg" in view.svg()


def test_shared_nodes_and_retained_bytes(fake):
    output, leaf = fake
    assert shared_nodes(output, output, params={"w": leaf})[-1] == "w"
    with pytest.raises(ValueError, match=r"DroppedSavedTwin's saved self cannot be read on "
                                         r"torch .* \(no _saved_self"):
        retained_bytes(output)


def test_a_torch_without_custom_function_internals(monkeypatch):
    class CustomNode:  # stands for BackwardCFunction on a torch without _raw_saved_tensors
        next_functions = ()
        saved_tensors = property(tripwire)

    monkeypatch.setattr(internals, "_CUSTOM_FUNCTION_NODE", CustomNode)
    rows = saved_tensors(output_of(CustomNode()))
    assert states(rows) == [("CustomNode", "saved_tensors", "unknown")]
    assert "no _raw_saved_tensors" in rows[0].why


def test_real_saved_tensors_expose_what_the_lens_reads():
    # The other side of the fakes: today's torch has each attribute the lens relies on.
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    raw = y.grad_fn._raw_saved_result
    assert raw.unpack_hook is None and torch.equal(raw.data, y.detach())
    assert y.grad_fn.next_functions[0][0].variable is x


def test_a_custom_node_whose_ctx_attributes_cannot_be_read(monkeypatch):
    class SlottedNode:  # a custom-Function node without an instance __dict__
        __slots__ = ()
        next_functions = ()
        _raw_saved_tensors = saved_tensors = ()  # nothing saved with save_for_backward

    monkeypatch.setattr(internals, "_CUSTOM_FUNCTION_NODE", SlottedNode)
    rows = saved_tensors(output_of(SlottedNode()))
    assert states(rows) == [("SlottedNode", "ctx", "unknown")]
    assert "its attributes could not be read (AttributeError" in rows[0].why
    with pytest.raises(ValueError, match="SlottedNode's saved ctx cannot be read"):
        retained_bytes(output_of(SlottedNode()))
