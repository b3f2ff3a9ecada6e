"""Check cells for lesson 01, "backward() and the graph it walks".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 builds `x.exp()` and reads what its backward node saved, exercise 2 runs
`backward()` on the reader's expression, exercise 3 runs `c.backward(gradient=...)`
with the reader's tensor next to `d.backward()`. None of them touches the global RNG.
"""
import torch

from .answers import kind
from .verdict import Verdict, correct, not_yet, unanswered

# The leaf every checker starts from: fixed values, no zeros (a zero entry would have
# a zero gradient whatever the reader answers), so no random numbers are drawn.
X_VALUES = [[1.0, 2.0, 3.0, 4.0]]

# Exercise 2's expression: the notebook shows it in these very words, and the checker
# differentiates exactly this text.
EXERCISE_2_EXPRESSION = "(x ** 3).mean()"


def _fresh_leaf():
    return torch.tensor(X_VALUES, requires_grad=True)


def _as_float_tensor(answer):
    """The reader's answer as a float32 tensor, or None if it is not a tensor of numbers."""
    if isinstance(answer, (str, bytes)):
        return None
    try:
        tensor = torch.as_tensor(answer.detach() if isinstance(answer, torch.Tensor) else answer)
    except (TypeError, ValueError, RuntimeError):
        return None
    if tensor.is_complex() or tensor.dtype == torch.bool:
        return None
    return tensor.to(device="cpu", dtype=torch.float32)


def _same_values_other_shape(tensor, expected) -> bool:
    return (tensor.shape != expected.shape and tensor.numel() == expected.numel()
            and torch.allclose(tensor.reshape(expected.shape), expected))


# Exercise 1: which tensor does the backward node of `a.exp()` save?

def _saved_by_exp() -> list:
    """The names of the tensors that ExpBackward0 saves, read from a real node."""
    node = _fresh_leaf().exp().grad_fn
    return sorted(attr[len("_raw_saved_"):] for attr in dir(node)
                  if attr.startswith("_raw_saved_"))


def exercise_1(answer) -> Verdict:
    """y = a.exp(): does y.grad_fn save 'self' (the input a) or 'result' (the output y)?"""
    if answer is None:
        return unanswered("set `answer` to 'self' or 'result', then run this cell again")
    if isinstance(answer, torch.Tensor):
        return not_yet("give the name of the saved tensor as a string, 'self' or 'result', "
                       "not a tensor")
    if not isinstance(answer, str):
        return not_yet(f"expected a string, 'self' or 'result'; got "
                       f"{kind(answer)}")
    name = answer.strip().strip("'\"").lower()
    for prefix in ("_saved_", "_raw_saved_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    saved = _saved_by_exp()  # ['result']: read from a real node, not assumed
    if name in saved and name == "result":
        return correct("ExpBackward0 saves `result`, the output y: the derivative of "
                       "exp(a) is exp(a) itself, so y is all its formula needs and a is "
                       "not kept at all.")
    if name in saved:
        return correct(f"ExpBackward0 saves `{name}` on this version of PyTorch.")
    if name == "self":
        return not_yet("it could keep a and compute exp(a) again during backward, but the "
                       "derivative of exp(a) is exp(a): which tensor already holds that?")
    if name == "other":
        return not_yet("`other` is the second input of a two-input op such as b * 2; "
                       "exp has a single input. Choose between 'self' and 'result'.")
    return not_yet(f"{answer.strip()!r} is not one of the choices: answer 'self' (the "
                   "input a) or 'result' (the output y)")


# Exercise 2: the gradient of (x ** 3).mean(), worked out by hand.

def _exercise_2_expected() -> torch.Tensor:
    x = _fresh_leaf()
    f = eval(EXERCISE_2_EXPRESSION, {"__builtins__": {}}, {"x": x})  # a fixed string
    f.backward()
    return x.grad


def exercise_2(answer) -> Verdict:
    """x = [[1., 2., 3., 4.]]: what is x.grad after (x ** 3).mean().backward()?"""
    if answer is None:
        return unanswered("set `answer` to a tensor of x's shape (1, 4), e.g. "
                          "torch.tensor([[0., 0., 0., 0.]]), then run this cell again")
    tensor = _as_float_tensor(answer)
    if tensor is None:
        return not_yet(f"expected a tensor of real numbers such as torch.tensor([[0.5, 1., "
                       f"1.5, 2.]]) (a nested list works too); got {kind(answer)}")
    expected = _exercise_2_expected()
    if _same_values_other_shape(tensor, expected):
        return not_yet(f"the right numbers, but x.grad has x's shape {tuple(expected.shape)}:"
                       " wrap them in a second pair of brackets, [[...]]")
    if tensor.shape != expected.shape:
        return not_yet(f"x.grad has x's shape {tuple(expected.shape)}, one number per "
                       f"element of x; your answer has shape {tuple(tensor.shape)}")
    if torch.allclose(tensor, expected):
        return correct("f = (x₁³ + x₂³ + x₃³ + x₄³) / 4, so ∂f/∂xᵢ = 3xᵢ² / 4: "
                       f"{[round(v, 2) for v in expected.flatten().tolist()]}.")
    x = torch.tensor(X_VALUES)
    if torch.allclose(tensor, 3 * x ** 2):
        return not_yet("that is the gradient of (x ** 3).sum(); mean() also divides by "
                       "the number of elements, 4")
    if torch.allclose(tensor, x ** 3 / 4) or torch.allclose(tensor, x ** 3):
        return not_yet("those are the terms of f, not their derivatives: the derivative "
                       "of x³ is 3x²")
    return not_yet("write f out, f = (x₁³ + x₂³ + x₃³ + x₄³) / 4, and differentiate it "
                   "with respect to each xᵢ in turn")


# Exercise 3: the `gradient=` that makes c.backward(...) leave what d.backward() leaves.

def _grad_of_a(backward) -> torch.Tensor:
    """a.grad after building the lesson's c = a**2 * 2 and calling `backward(c)`."""
    a = _fresh_leaf()
    backward(a ** 2 * 2)
    return a.grad


def exercise_3(answer) -> Verdict:
    """Which `gradient=` makes c.backward(gradient=...) fill a.grad as d.backward() does?"""
    if answer is None:
        return unanswered("set `answer` to the tensor to pass as c.backward(gradient=...), "
                          "then run this cell again")
    tensor = _as_float_tensor(answer)
    if tensor is None:
        return not_yet(f"expected a tensor of real numbers, like torch.ones_like(c); got "
                       f"{kind(answer)}")
    c_shape = tuple(_fresh_leaf().shape)
    if tuple(tensor.shape) != c_shape:
        return not_yet(f"gradient= must have c's shape {c_shape}, one weight per element "
                       f"of c; yours has shape {tuple(tensor.shape)}")
    expected = _grad_of_a(lambda c: c.mean().backward())  # what d.backward() leaves
    try:
        got = _grad_of_a(lambda c: c.backward(gradient=tensor))
    except RuntimeError as error:  # kept as a hint: the shape is checked above
        return not_yet(f"c.backward(gradient=answer) raised RuntimeError: {error}")
    if torch.allclose(got, expected):
        return correct("torch.full_like(c, 1/4) is ∂d/∂c: d = (c₁ + c₂ + c₃ + c₄) / 4 "
                       "weighs each cⱼ by 1/4, and backward multiplies that vector by "
                       "the Jacobian ∂c/∂a.")
    if torch.allclose(tensor, torch.ones(c_shape)):
        return not_yet("torch.ones_like(c) gives the gradient of c.sum(), which is e, 4 "
                       "times too big: d = c.mean() divides by the number of elements")
    return not_yet("d = (c₁ + c₂ + c₃ + c₄) / 4: what is ∂d/∂cⱼ for each element? That "
                   "vector is the gradient= to pass")
