"""The README's picture of `memory_timeline`: figures/memory_two_losses.svg.

Lesson 04's model (its TwoHeadNet, data and task_losses, run from the lesson's own cells)
with a 768-unit trunk: one training step the seed's way, `loss1.backward(retain_graph=True);
loss2.backward()`, above one step with one backward pass from `(loss1 + loss2)`, each with
its forward pass and optimizer step inside the block, and each peak marked.
`tools/make_figures.py` writes the picture and figures/memory_two_losses.txt, the two
timelines as text: tests/test_figures.py checks that the text is what the code gives today.
"""
import contextlib
import io
from pathlib import Path

import nbformat
import torch

from autograd_lens import memory_timeline

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "notebooks" / "04_multi_task_losses.ipynb"
NAME = "memory_two_losses"
HIDDEN = 768


def lesson_04():
    """The names lesson 04's set-up cells define: data, TwoHeadNet, task_losses."""
    namespace = {"__name__": "__lesson__"}
    for cell in nbformat.read(LESSON, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines()
                           if not line.lstrip().startswith("%"))
        with contextlib.redirect_stdout(io.StringIO()):  # what the lesson prints
            exec(compile(source, "<lesson 04>", "exec"), namespace)
        if "def fresh_model" in source:
            return namespace
    raise ValueError(f"{LESSON.name} no longer defines fresh_model")


def two_backward_calls(loss1, loss2):
    loss1.backward(retain_graph=True)
    loss2.backward()


def summed_loss(loss1, loss2):
    (loss1 + loss2).backward()


WAYS = {"two backward calls, the first with retain_graph=True": two_backward_calls,
        "one backward pass from loss1 + loss2": summed_loss}


def timelines():
    """{way: the MemoryTimeline of one training step taken that way}"""
    lesson = lesson_04()
    found = {}
    for title, way in WAYS.items():
        torch.manual_seed(1)
        model = lesson["TwoHeadNet"](hidden=HIDDEN)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with memory_timeline(device="cpu") as mem:
            loss1, loss2 = lesson["task_losses"](model)
            way(loss1, loss2)
            optimizer.step()
        found[title] = mem
    return found


def text(found) -> str:
    return "\n\n".join(f"{title}:\n{mem!r}" for title, mem in found.items())


def save(found, folder: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(len(found), 1, figsize=(7.5, 5.6))
    for ax, (title, mem) in zip(axes, found.items()):
        mem.plot(ax=ax, title=title)
    top = max(ax.get_ylim()[1] for ax in axes)
    for ax in axes:  # one scale, so that the peaks compare at a glance
        ax.set_ylim(0, top)
    figure.suptitle(f"Lesson 04's model, {HIDDEN}-unit trunk: one training step", fontsize=11)
    figure.tight_layout()
    plt.rcParams["svg.hashsalt"] = NAME  # the same ids in every run
    figure.savefig(folder / f"{NAME}.svg", metadata={"Date": None})
    plt.close(figure)
    (folder / f"{NAME}.txt").write_text(text(found) + "\n")
