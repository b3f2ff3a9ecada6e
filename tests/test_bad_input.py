"""Bad input gets a TypeError or ValueError that says what was wrong and what to do."""
import numpy as np
import pytest
import torch

from autograd_lens import draw, overview, retained_bytes, saved_tensors, shared_nodes
from graphs import seed_graph

FUNCTIONS = [draw, saved_tensors, retained_bytes]
# Every function that takes params=, each called on one output (shared_nodes on two).
WITH_PARAMS = {"draw": draw, "saved_tensors": saved_tensors, "retained_bytes": retained_bytes,
               "overview": overview,
               "shared_nodes": lambda loss, params: shared_nodes(loss, loss * 2, params=params)}


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


@pytest.mark.parametrize("name", WITH_PARAMS)
def test_params_may_be_the_model_itself(name):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    loss = model(torch.ones(4, 2)).sum()
    function = WITH_PARAMS[name]
    as_model = function(loss, params=model)
    as_dict = function(loss, params=dict(model.named_parameters()))
    assert repr(as_model) == repr(as_dict)
    if name in ("draw", "overview"):
        assert as_model.source == as_dict.source
    if name == "draw":
        assert "0.weight" in repr(as_model)


@pytest.mark.parametrize("name", WITH_PARAMS)
def test_params_as_model_parameters_says_what_to_pass(name):
    model = torch.nn.Linear(3, 3)  # a 3x3 weight: dict() of it fails, or reads rows as pairs
    loss = model(torch.ones(1, 3)).sum()
    with pytest.raises(TypeError, match=r"params got tensors without names "
                                        r"\(model.parameters\(\), say\): pass the model "
                                        r"itself, params=model, or dict\(model.named_parameters"):
        WITH_PARAMS[name](loss, params=model.parameters())


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
