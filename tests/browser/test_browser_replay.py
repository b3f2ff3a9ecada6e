"""backward_replay's picture, stepped through in a real browser as a reader does: click
"next" and "back"; at every frame the caption, the memory marker and the graph's styling
change together, and nothing is fetched (the picture is one HTML fragment, CSS only). Then
where a lesson shows one: on the static site, in the lesson's deck, and in JupyterLab after
Run All (test_browser_lab.py)."""
import re

import pytest
import torch
from torch import nn

from autograd_lens import backward_replay

from .replay_steps import has_a_replay, steps_in_place
from .stored_outputs import KOREAN_LESSONS, LESSONS, lesson_id

VISIBLE_STEP = """() => {
    const shown = selector => [...document.querySelectorAll(selector)]
        .filter(element => getComputedStyle(element).display !== 'none'
                && getComputedStyle(element).visibility !== 'hidden')
        .map(element => Number(element.getAttribute('class').match(/-(\\d+)$/)[1]));
    return {caption: shown('.alr-body .alr-cap'), marker: shown('.alr-body .alr-mark')};
}"""
NODE_STYLE = """(name) => {
    const polygon = document.querySelector(`.alr-body .alr-graph .${name} > polygon`);
    const style = getComputedStyle(polygon);
    return {fill: style.fill, width: style.strokeWidth};
}"""
RAN_FILL = "rgb(184, 225, 134)"  # replay_html.RAN


def test_stepping_moves_caption_marker_and_graph_together(page, screenshots):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    loss = model(torch.randn(4, 6)).pow(2).mean()
    replay = backward_replay(loss, params=dict(model.named_parameters()))
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.set_content(f"<!doctype html><html lang='en'><body>{replay.html()}</body></html>")
    last = len(replay.frames) - 1

    def shown():
        state = page.evaluate(VISIBLE_STEP)
        assert state["caption"] == state["marker"] and len(state["caption"]) == 1, state
        return state["caption"][0]

    assert shown() == 0
    for step in range(1, last + 1):
        page.locator(".alr-body .alr-cap:visible label", has_text="next").click()
        assert shown() == step
        node = f"g-n{replay.frames[step].node_index}"
        style = page.evaluate(NODE_STYLE, node)
        assert style["fill"] == RAN_FILL and style["width"] == "3px", (step, node, style)
        text = page.locator(".alr-body .alr-cap:visible").inner_text()
        assert re.search(rf"\b{step} of {last}\b", text) and replay.frames[step].node in text
        if step == 3:
            page.screenshot(path=screenshots / "replay-step-3.png")
    assert page.locator(".alr-body .alr-cap:visible label", has_text="next").count() == 0
    page.locator(".alr-body .alr-cap:visible label", has_text="back").click()
    page.locator(".alr-body .alr-cap:visible label", has_text="back").click()
    assert shown() == last - 2
    # the last node is no longer "ran" two steps back, nor outlined
    style = page.evaluate(NODE_STYLE, f"g-n{replay.frames[last].node_index}")
    assert style["fill"] != RAN_FILL and style["width"] != "3px", style
    assert requests == [], requests


def test_printed_it_shows_frames_side_by_side(page):
    x = torch.randn(5, requires_grad=True)
    replay = backward_replay(x.exp().tanh().sum(), params={"x": x})
    page.set_content(f"<!doctype html><html lang='en'><body>{replay.html()}</body></html>")
    page.emulate_media(media="print")
    figures = page.locator(".alr-print figure")
    assert figures.count() >= 3 and all(figures.nth(i).is_visible() for i in range(figures.count()))
    assert not page.locator(".alr-body").is_visible()


# Where readers meet a replay: a lesson page of the static site, a slide of a deck, and
# JupyterLab after Run All (tests/browser/test_browser_lab.py calls `steps_in_place`).
def lessons_with_a_replay():
    return [lesson for lesson in [*LESSONS, *KOREAN_LESSONS] if has_a_replay(lesson)]


@pytest.mark.parametrize("replayed", lessons_with_a_replay(), ids=lambda lesson: lesson_id(lesson))
def test_a_lessons_replay_steps_on_the_site(replayed, site, page):
    folder = "ko/notebooks/ko" if replayed.parent.name == "ko" else "notebooks"
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{site.url}/{folder}/{replayed.stem}.html", wait_until="load")
    assert steps_in_place(page) == []
    assert all(url.startswith(site.url) or url.startswith("data:") for url in requests), requests


@pytest.mark.parametrize("replayed", lessons_with_a_replay(), ids=lambda lesson: lesson_id(lesson))
def test_a_lessons_replay_steps_in_its_deck(replayed, site, page):
    folder = "ko/slides" if replayed.parent.name == "ko" else "slides"
    page.goto(f"{site.url}/{folder}/{replayed.stem}.html", wait_until="load")
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    page.evaluate("""() => {
        Reveal.configure({transition: 'none'});
        const slide = document.querySelector('.alr-body').closest('section');
        const where = Reveal.getIndices(slide);
        Reveal.slide(where.h, where.v, 1000);  // the slide, every fragment shown
    }""")
    assert steps_in_place(page, ".reveal section.present") == []
