"""The examples in the library's docstrings run and print what they show."""
import doctest
import importlib

import pytest

import autograd_lens

# By module name: `autograd_lens.draw` is the function, the package imports it over its module.
MODULES = [importlib.import_module(f"autograd_lens.{name}")
           for name in ("graph", "saved", "shared", "draw", "memory", "replay")]
PUBLIC = ["draw", "saved_tensors", "retained_bytes", "shared_nodes", "GraphView",
          "memory_timeline", "backward_replay"]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_function_has_an_example(name):
    assert "Example::" in getattr(autograd_lens, name).__doc__
