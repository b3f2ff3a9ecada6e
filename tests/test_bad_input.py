"""Bad input gets a TypeError or ValueError that says what was wrong and what to do."""
import numpy as np
import pytest
import torch

from autograd_lens import draw, retained_bytes, saved_tensors, shared_nodes
from graphs import seed_graph

FUNCTIONS = [draw, saved_tensors, retained_bytes]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_no_outputs(function):
    with pytest.raises(ValueError, match="no outputs given"):
        function()


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("not_a_tensor", [1.0, [torch.ones(1)], np.ones(2), None])
def test_not_a_tensor(function, not_a_tensor):
    with pytest.raises(TypeError, match="not a tensor"):
        function(not_a_tensor)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_tensor_without_requires_grad(function):
    with pytest.raises(ValueError, match="requires_grad=True"):
        function(torch.ones(3).sum())


@pytest.mark.parametrize("function", FUNCTIONS)
def test_computed_under_no_grad(function):
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        y = (x * 2).sum()
    with pytest.raises(ValueError, match="no_grad"):
        function(y)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_leaf_tensor(function):
    with pytest.raises(ValueError, match="leaf tensor you created"):
        function(torch.ones(3, requires_grad=True))


def test_second_output_named_in_message():
    (d, e), _ = seed_graph()
    with pytest.raises(TypeError, match="output 1 is a str"):
        draw(d, "e")


@pytest.mark.parametrize("params", [["a"], {"a": 1.0}, {1: torch.ones(1)}, 42])
def test_bad_params(params):
    (d, _), _ = seed_graph()
    with pytest.raises(TypeError, match="params must map"):
        draw(d, params=params)


def test_named_parameters_generator_is_accepted():
    model = torch.nn.Linear(2, 1)
    view = draw(model(torch.ones(1, 2)).sum(), params=model.named_parameters())
    assert "weight" in repr(view) and "bias" in repr(view)


def test_save_with_unknown_extension(tmp_path):
    (d, _), _ = seed_graph()
    with pytest.raises(ValueError, match=r"use a path ending in \.svg, \.png or \.dot"):
        draw(d).save(tmp_path / "graph.jpg")


def test_shared_nodes_needs_two_outputs():
    (d, _), _ = seed_graph()
    with pytest.raises(ValueError, match="two or more outputs"):
        shared_nodes(d)
