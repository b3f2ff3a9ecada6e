"""Stepping a backward_replay picture where a reader meets it: one click on "next", one
on "back", and the caption and the memory marker must move together."""
NEXT, BACK = "next", "back"  # the picture's buttons (the library speaks English)


def has_a_replay(lesson) -> bool:
    """Does the lesson's stored output hold a replay picture?"""
    return "alr-body" in lesson.read_text(encoding="utf-8")


STEP_STATE = """(root) => {
    const shown = selector => [...root.querySelectorAll(selector)]
        .filter(element => element.getClientRects().length > 0)
        .map(element => Number(element.getAttribute('class').match(/-(\\d+)$/)[1]));
    return {caption: shown('.alr-body .alr-cap'), marker: shown('.alr-body .alr-mark')};
}"""


def steps_in_place(page, scope="body"):
    """Click "next" in the first replay under `scope`, then "back": the caption and the
    memory marker move together, one step each way. Returns what went wrong, or []."""
    replay = page.locator(f"{scope} div:has(> .alr-body)").first
    replay.scroll_into_view_if_needed()
    state = lambda: replay.evaluate(STEP_STATE)  # noqa: E731
    before = state()
    if before["caption"] != before["marker"] or len(before["caption"]) != 1:
        return [f"replay before stepping shows captions {before['caption']}, markers {before['marker']}"]
    replay.locator(".alr-cap:visible label", has_text=NEXT).first.click()
    after = state()
    if after["caption"] != after["marker"] or after["caption"] != [before["caption"][0] + 1]:
        return [f"after 'next': captions {after['caption']}, markers {after['marker']}"]
    replay.locator(".alr-cap:visible label", has_text=BACK).first.click()
    back = state()
    if back != before:
        return [f"after 'back': {back}, not {before}"]
    return []
