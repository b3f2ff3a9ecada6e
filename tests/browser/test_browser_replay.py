"""backward_replay's picture, stepped through in a real browser as a reader does: click
"next" and "back"; at every frame the caption, the memory marker and the graph's styling
change together, and nothing is fetched (the picture is one HTML fragment, CSS only)."""
import re

import torch
from torch import nn

from autograd_lens import backward_replay

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
