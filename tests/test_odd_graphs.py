"""Odd tensors and graphs: each works, or raises an error saying what is not supported.

Sparse (COO and CSR) leaves and intermediates, complex dtypes, the meta device, a custom
autograd.Function that keeps non-tensors, one that keeps tensors as plain ctx attributes,
a torch.compile'd module's backward node, and torch.func transforms.
"""
import warnings

import pytest
import torch
from torch import nn

from autograd_lens import draw, overview, retained_bytes, saved_tensors, shared_nodes

FLOAT32, INT64 = 4, 8
LENS = [draw, saved_tensors, retained_bytes]


@pytest.fixture(autouse=True)
def quiet_sparse_beta_warning():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
        warnings.filterwarnings("ignore", "Sparse invariant checks are implicitly disabled")
        yield


def storage_bytes(*tensors):
    """Bytes of the distinct storages under these strided tensors (public API only)."""
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum(storages.values())


def assert_drawn_before_and_after_backward(output):
    view = draw(output)
    assert "<svg" in view.svg() and " 0 that freed them" in repr(view).splitlines()[0]
    output.backward()
    assert retained_bytes(output, include_leaves=True) == 0
    assert all(row.freed for row in saved_tensors(output))
    assert " 0 that freed them" not in repr(draw(output)).splitlines()[0]


def rows_of(output, **kwargs):
    return [(r.node, r.attribute, r.shape, r.dtype, r.is_leaf, r.state)
            for r in saved_tensors(output, **kwargs)]


# Sparse tensors: their bytes are their indices' and values' storages.

def test_sparse_coo_leaf():
    torch.manual_seed(0)
    indices = torch.tensor([[0, 1, 2], [1, 0, 2]])
    s = torch.sparse_coo_tensor(indices, torch.tensor([1., 2., 3.]), (3, 3),
                                requires_grad=True)
    d = torch.randn(3, 4, requires_grad=True)
    y = torch.sparse.mm(s, d).sum()
    table = saved_tensors(y, params={"s": s, "d": d})
    assert [(r.attribute, r.name, r.is_leaf, r.nbytes) for r in table] == [
        ("mat1", "s", True, 3 * (2 * INT64 + FLOAT32)), ("mat2", "d", True, 12 * FLOAT32)]
    assert "float32 sparse_coo" in repr(table)
    assert retained_bytes(y) == 0  # both are leaves
    assert retained_bytes(y, include_leaves=True) == storage_bytes(s._indices(), s._values(), d)
    assert_drawn_before_and_after_backward(y)
    assert s.grad is not None


def test_sparse_coo_intermediate():
    torch.manual_seed(0)
    x = torch.randn(3, 3, requires_grad=True)
    s = (x * 2).to_sparse()
    squares = s * s
    y = torch.sparse.sum(squares)
    assert [r[:2] + r[3:] for r in rows_of(y)] == [
        ("ValuesBackward0", "self", torch.float32, False, "live"),
        ("MulBackward0 #1", "other", torch.float32, False, "live"),
        ("MulBackward0 #1", "self", torch.float32, False, "live"),
        ("MulBackward0 #2", "other", torch.int64, False, "live"),  # the Python number 2
    ]
    kept = storage_bytes(s._indices(), s._values(), squares._indices(), squares._values())
    assert retained_bytes(y) == kept + INT64
    assert_drawn_before_and_after_backward(y)
    assert torch.allclose(x.grad, 8 * x.detach())


def test_sparse_csr_leaf():
    torch.manual_seed(0)
    c = torch.randn(3, 3).relu().to_sparse_csr().requires_grad_()
    d = torch.randn(3, 4, requires_grad=True)
    y = (c @ d).sum()
    table = saved_tensors(y)
    assert all(r.is_leaf for r in table) and "float32 sparse_csr" in repr(table)
    assert retained_bytes(y) == 0
    assert retained_bytes(y, include_leaves=True) == storage_bytes(
        c.crow_indices(), c.col_indices(), c.values(), d)
    draw(y).svg()


def test_sparse_csr_intermediate():
    torch.manual_seed(0)
    x = torch.randn(3, 3, requires_grad=True)
    d = torch.randn(3, 4, requires_grad=True)
    c = (x * 2).to_sparse_csr()
    y = (c @ d).sum()
    [csr] = [r for r in saved_tensors(y) if r.tensor is not None and r.tensor.is_sparse_csr]
    assert not csr.is_leaf and csr.shape == (3, 3)
    # The CSR column indices are a view into a larger storage: the whole of it counts.
    assert retained_bytes(y) == storage_bytes(
        c.crow_indices(), c.col_indices(), c.values()) + INT64
    assert_drawn_before_and_after_backward(y)


def test_complex_dtypes():
    torch.manual_seed(0)
    z = torch.randn(3, dtype=torch.complex64, requires_grad=True)
    w = (z * z.conj()).exp()
    y = w.abs().sum()
    assert rows_of(y, params={"z": z}) == [
        ("AbsBackward0", "self", (3,), torch.complex64, False, "live"),
        ("ExpBackward0", "result", (3,), torch.complex64, False, "live"),
        ("MulBackward0", "other", (3,), torch.complex64, True, "live"),  # conj view of z
        ("MulBackward0", "self", (3,), torch.complex64, True, "live"),
    ]
    assert retained_bytes(y) == storage_bytes(w)  # exp's result, saved twice: once
    assert retained_bytes(y, include_leaves=True) == storage_bytes(w, z)
    assert_drawn_before_and_after_backward(y)


def test_meta_tensors_count_what_they_would_take():
    x = torch.randn(3, 4, device="meta", requires_grad=True)
    e = x.exp()
    y = (e * x).sum()
    assert rows_of(y) == [
        ("MulBackward0", "other", (3, 4), torch.float32, True, "live"),
        ("MulBackward0", "self", (3, 4), torch.float32, False, "live"),
        ("ExpBackward0", "result", (3, 4), torch.float32, False, "live"),
    ]
    assert "float32 on meta" in repr(saved_tensors(y))
    # No data on meta: exp's result counts the 48 bytes it would take, once, and the
    # leaf x is told apart from it although neither has an address.
    assert retained_bytes(y) == 12 * FLOAT32
    assert retained_bytes(y, include_leaves=True) == 2 * 12 * FLOAT32
    assert_drawn_before_and_after_backward(y)


class ScaleByNumber(torch.autograd.Function):
    """Saves one tensor, a None, and keeps non-tensors on ctx."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_backward(x, None)
        ctx.factor, ctx.shape, ctx.note = factor, x.shape, "not a tensor"
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        x, _ = ctx.saved_tensors
        return grad * ctx.factor, None


def test_custom_function_that_keeps_non_tensors():
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    h = w.exp()
    y = ScaleByNumber.apply(h, 3.0).sum()
    assert rows_of(y) == [
        ("ScaleByNumberBackward", "saved_tensors[0]", (4,), torch.float32, False, "live"),
        ("ExpBackward0", "result", (4,), torch.float32, False, "live"),
    ]
    assert retained_bytes(y) == storage_bytes(h)
    assert_drawn_before_and_after_backward(y)
    assert torch.allclose(w.grad, 3 * h.detach())


class KeepOnCtx(torch.autograd.Function):
    """Saves x with save_for_backward, but keeps its other tensors as plain ctx attributes:
    one alone, one in a tuple beside a string, one in a dict, and a weight."""

    @staticmethod
    def forward(ctx, x, scale, weight):
        ctx.save_for_backward(x)
        ctx.scale = scale
        ctx.pair = (scale * 2, "not a tensor")
        ctx.cache = {"offset": torch.full((3,), 0.5)}
        ctx.weight, ctx.factor = weight, 3.0
        return x * scale * weight

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.scale * ctx.weight, None, grad * x * ctx.scale


def test_tensors_kept_as_ctx_attributes_are_rows_of_their_own_and_count():
    torch.manual_seed(0)
    x, weight = torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True)
    h, scale = x.exp(), torch.randn(4)
    y = KeepOnCtx.apply(h, scale, weight).sum()
    assert rows_of(y, params={"weight": weight}) == [
        ("KeepOnCtxBackward", "saved_tensors[0]", (4,), torch.float32, False, "live"),
        ("KeepOnCtxBackward", "ctx.scale", (4,), torch.float32, False, "kept on ctx"),
        ("KeepOnCtxBackward", "ctx.pair[0]", (4,), torch.float32, False, "kept on ctx"),
        ("KeepOnCtxBackward", "ctx.cache['offset']", (3,), torch.float32, False, "kept on ctx"),
        ("KeepOnCtxBackward", "ctx.weight", (4,), torch.float32, True, "kept on ctx"),
        ("ExpBackward0", "result", (4,), torch.float32, False, "live"),
    ]
    table = saved_tensors(y, params={"weight": weight})
    assert "ctx.weight = weight  (4,)   float32  16     yes   kept on ctx" in repr(table)
    # Before, only h counted (16 bytes). The weight is a leaf: left out unless asked for.
    on_ctx = [table[2].tensor, table[3].tensor]  # scale * 2, the offsets: made in forward
    assert retained_bytes(y) == storage_bytes(h, scale, *on_ctx) == 16 + 16 + 16 + 12
    assert retained_bytes(y, include_leaves=True) == storage_bytes(h, scale, *on_ctx, weight)
    view = draw(y)
    assert 'label="ctx.scale\n(4)\nkept on ctx"' in view.source
    assert "tensor kept on ctx:" in view.source  # its legend entry
    # Backward frees what save_for_backward saved; the ctx attributes stay with the node.
    y.backward()
    after = saved_tensors(y)
    assert [r.state for r in after] == ["freed"] + ["kept on ctx"] * 4 + ["freed"]
    assert retained_bytes(y) == storage_bytes(scale, *on_ctx) == 44
    assert "<svg" in draw(y).svg()


# torch.compile: the compiled region is one custom-Function node, CompiledFunctionBackward.

@pytest.fixture
def compiled_loss():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(5, 4)
    try:
        # aot_eager: autograd's compiled backward node without inductor's C++ build.
        loss = torch.compile(model, backend="aot_eager")(x).sum()
    except Exception as error:  # no dynamo on this Python or platform, say
        pytest.skip(f"torch.compile is not available here: {type(error).__name__}: {error}")
    return loss, x, model


def test_torch_compile_backward_node(compiled_loss):
    loss, x, model = compiled_loss
    rows = [r for r in saved_tensors(loss) if r.node == "CompiledFunctionBackward"]
    assert rows and all(r.state == "live" for r in rows)
    # The first layer's weight gradient needs x: the compiled backward keeps it.
    assert any(r.tensor.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
               for r in rows)
    assert retained_bytes(loss) >= storage_bytes(x)
    assert "CompiledFunctionBackward" in repr(draw(loss))
    # overview: one box, named after the compiled model, and a note that says why.
    view = overview(loss, params=model)
    assert [(b.name, b.nodes, b.params) for b in view.blocks] == [
        ("Sequential (compiled)", 2, 4)]
    assert "each compiled region one backward node (CompiledFunctionBackward)" in repr(view)
    assert_drawn_before_and_after_backward(loss)
    assert all(p.grad is not None for p in model.parameters())


# torch.func: results of transforms are ordinary autograd graphs; tensors inside a
# transform are functorch's wrappers, and the lens says it does not support them.

def cube_sum(x):
    return (x ** 3).sum()


@pytest.mark.parametrize("transform", [
    lambda x: torch.func.grad(cube_sum)(x),
    lambda x: torch.func.vjp(lambda t: t ** 3, x)[1](torch.ones(3))[0],
    lambda x: torch.func.jacrev(lambda t: t ** 3)(x),
    lambda x: torch.func.vmap(lambda t: t ** 3)(x),
    lambda x: torch.func.functional_call(nn.Identity(), {}, (x ** 3,)),
], ids=["grad", "vjp", "jacrev", "vmap", "functional_call"])
def test_results_of_torch_func_transforms(transform):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = transform(x).sum()
    assert saved_tensors(y) and retained_bytes(y, include_leaves=True) > 0
    assert shared_nodes(y, y * 1)
    assert_drawn_before_and_after_backward(y)
    assert x.grad is not None


@pytest.mark.parametrize("transform, name", [
    (torch.func.grad, "grad, vjp or jacrev"),
    (torch.func.vmap, "vmap"),
])
def test_inside_a_torch_func_transform_is_refused_clearly(transform, name):
    refused = []

    def f(x):
        y = (x.exp() * x).sum()
        for lens in LENS:
            with pytest.raises(ValueError, match=r"output 0 is a tensor inside a torch\.func "
                                                 rf"transform \({name}\).*Look outside"):
                lens(y)
            refused.append(lens)
        return y

    transform(f)(torch.randn(3, requires_grad=True))
    assert refused == LENS
