"""The fix said in the program's own words: from the lines that `explain` names, the line
to write instead ("out = out + residual" for "out += residual"), the tensor to detach, the
loss to compute again. Each function returns a sentence, or "" when the line does not say
enough to be sure."""
import ast
import re

AUGMENTED = re.compile(r"^(?P<target>[\w.\[\]:, +\-*/()]+?)\s*(?P<op>[+\-*/@])=\s*(?P<value>.+?)\s*(#.*)?$")
METHOD_IN_PLACE = re.compile(r"^(?P<target>[\w.\[\]]+)\.(?P<method>[a-z]\w*?)_\((?P<args>.*)\)\s*(#.*)?$")
SLICE_ASSIGNMENT = re.compile(r"^(?P<base>[\w.]+)\[.+\]\s*=(?!=)\s*.+$")
ASSIGNED = re.compile(r"^(?P<targets>[\w.,\s\[\]]+?)\s*=(?!=)\s*(?P<value>.+?)\s*(#.*)?$")
BACKWARD_OF = re.compile(r"([\w.\[\]]+)\.backward\(")
# In-place functions that modules (nn.ReLU(inplace=True), nn.Dropout(inplace=True), ...) call.
MODULE_IN_PLACE = {"relu_": "nn.ReLU", "relu6_": "nn.ReLU6", "hardtanh_": "nn.Hardtanh",
                   "leaky_relu_": "nn.LeakyReLU", "elu_": "nn.ELU", "celu_": "nn.CELU",
                   "selu_": "nn.SELU", "silu_": "nn.SiLU", "hardswish_": "nn.Hardswish",
                   "hardsigmoid_": "nn.Hardsigmoid", "rrelu_": "nn.RReLU",
                   "threshold_": "nn.Threshold", "dropout_": "nn.Dropout",
                   "feature_dropout_": "nn.Dropout2d", "alpha_dropout_": "nn.AlphaDropout",
                   "feature_alpha_dropout_": "nn.FeatureAlphaDropout",
                   "dropout": "nn.Dropout", "dropout2d": "nn.Dropout2d", "relu": "nn.ReLU"}


def code_of(line: str) -> str:
    return line.split("#", 1)[0].strip()


def _operand(value: str) -> str:
    """`value` as the right operand of a binary operator: in parentheses unless it is one
    name, attribute, call, subscript or number (a -= b + c is a = a - (b + c))."""
    try:
        tree = ast.parse(value, mode="eval").body
    except SyntaxError:
        return f"({value})"
    atoms = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)
    return value if isinstance(tree, atoms) else f"({value})"


def out_of_place(op: str, line: str, on_a_view: bool = False) -> str:
    """The changing line, written out of place, or how to. `on_a_view`: the change went
    through a view of a tensor (x[i] /= n), where x[i] = x[i] / n would still write into x;
    not through an item of a list (laterals[i - 1] += ...), which can be rebound."""
    code = code_of(line)
    if match := AUGMENTED.match(code):  # x += y, laterals[i - 1] += ...
        target, operator, value = match["target"].strip(), match["op"], match["value"]
        if on_a_view and "[" in target:
            base = target.split("[", 1)[0]
            return (f"build the new values of {base} out of place, all at once, instead of "
                    f"writing them into it ({code} changes {base} through a view)")
        return f"write {target} = {target} {operator} {_operand(value)}, not {code}"
    if (match := METHOD_IN_PLACE.match(code)) and op.endswith("_"):
        target = match["target"]
        return f"write {target} = {target}.{match['method']}({match['args']}), not {code}"
    if match := SLICE_ASSIGNMENT.match(code):
        base = match["base"]
        value = code.split("=", 1)[1]
        if re.search(rf"(?<![\w.]){re.escape(base)}(?![\w])", value):
            # the new values are computed from the tensor being written (x[i] = x[i] / n):
            # a clone would only move the problem to the clone
            return (f"build the new values out of place, all at once, instead of writing them "
                    f"into {base} ({code} reads {base}, which each write changes)")
        return (f"copy it before writing into it, {base} = {base}.clone(), just above {code} "
                f"(or build the new values out of place, with torch.where)")
    if "inplace=True" in code:
        return f"pass inplace=False there: {code.replace('inplace=True', 'inplace=False')}"
    if op in MODULE_IN_PLACE:
        module = MODULE_IN_PLACE[op]
        return (f"the layer called there changes its input in place ({op}): build it with "
                f"inplace=False ({module}(...) without inplace=True)")
    return ""


def loss_name(call_line: str) -> str:
    """'actor_loss' from 'actor_loss.backward()'."""
    match = BACKWARD_OF.search(code_of(call_line))
    return match[1] if match else ""


def assigned_names(line: str) -> list:
    """The names a line assigns: ['lstm_out', 'self.hidden'] from
    'lstm_out, self.hidden = self.lstm(x, self.hidden)'."""
    match = ASSIGNED.match(code_of(line))
    if not match:
        return []
    return [name.strip() for name in match["targets"].split(",") if name.strip()]


def carried_names(line: str) -> list:
    """What a line carries into the next iteration: the names it both reads and assigns
    (hidden in 'hidden = cell(x, hidden)'), else the base of what it assigns into."""
    code = code_of(line)
    targets = assigned_names(code)
    value = code.split("=", 1)[1] if "=" in code else ""
    both = [t for t in targets if re.search(rf"(?<![\w.]){re.escape(t)}(?![\w])", value)]
    if both:
        return both
    if match := SLICE_ASSIGNMENT.match(code):
        return [match["base"]]
    return targets


def detach_each(names: list) -> str:
    return "; ".join(f"{name} = {name}.detach()" for name in names)
