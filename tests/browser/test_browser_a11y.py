"""An accessibility audit with axe-core (docs/node_modules, from npm) in Chromium: every
page of the site, both languages, and every slide deck (the site's and the classroom's,
both languages) has no violation whose impact is "serious" or "critical".

Pages are audited whole, once loaded and their maths typeset. Besides axe-core's rules,
no picture may have an alt text that says nothing of it (a file name, nbconvert's "No
description has been provided"): axe-core accepts those. A deck is audited on its
first slide and on every slide that shows a picture or a replay: reveal.js keeps only
the slides near the current one in the page, and marks all but the current one
aria-hidden (a screen reader, like a viewer, is given one slide at a time), so an audit
of one slide checks that slide and what surrounds it (the controls, the progress bar),
and the slides with pictures are where the alt text and the replay's buttons are. The
remaining slides hold only the lesson's prose and code, as the site's pages do, which
are audited whole.
"""
import pytest

from .conftest import SITE
from .stored_outputs import ROOT
from .test_browser_slides import DECKS, SOURCES

AXE = ROOT / "docs" / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")
TARGETS_SHOWN = 3  # per rule: enough to find the elements, not a page of selectors

RUN_AXE = """async () => {
    const results = await axe.run(document, {resultTypes: ['violations']});
    return results.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        targets: v.nodes.map(node => node.target.join(' '))}));
}"""


def serious_violations(page) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now, one line each:
    rule id, impact, what the rule asks, the first few elements at fault."""
    if not AXE.is_file():
        pytest.fail(f"no axe-core at {AXE.relative_to(ROOT)}: run `cd docs && npm ci`")
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    found = []
    for violation in page.evaluate(RUN_AXE):
        if violation["impact"] in FAILING_IMPACTS:
            targets = violation["targets"]
            more = f" and {len(targets) - TARGETS_SHOWN} more" if len(targets) > TARGETS_SHOWN else ""
            found.append(f"{violation['id']} ({violation['impact']}): {violation['help']}: "
                         + ", ".join(targets[:TARGETS_SHOWN]) + more)
    return found


# Pictures whose alt text says nothing of them: none, a file name (what Sphinx writes when
# the cell gives none), or nbconvert's stand-in. tools/alt_text.py writes the real ones.
UNSAID = """() => [...document.querySelectorAll('img')]
    .filter(image => !image.closest('[aria-hidden="true"]') && image.getAttribute('role') !== 'presentation')
    .map(image => (image.getAttribute('alt') || '').trim())
    .filter(alt => !alt || /^\\S+\\.(png|svg|jpe?g|gif)$/i.test(alt)
                   || alt === 'No description has been provided for this image')"""


def pictures_without_alt(page) -> list[str]:
    return [f"a picture's alt text says nothing of it: {alt!r}" for alt in page.evaluate(UNSAID)]


def _typeset(page):
    page.wait_for_function("() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)")
    page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")


def test_site_page_has_no_serious_violation(site_page, site, page):
    assert (SITE / site_page).is_file(), f"no page {site_page} in the built site"
    page.goto(f"{site.url}/{site_page}", wait_until="load")
    _typeset(page)
    found = serious_violations(page) + pictures_without_alt(page)
    assert not found, f"{site_page}:\n" + "\n".join(found)


# The deck's slides to audit: the first, then each that shows a picture or a replay.
SLIDES_TO_AUDIT = """() => {
    const wanted = Reveal.getSlides().filter(
        slide => slide.querySelector('img, svg:not(mjx-container svg), .alr-graph'));
    return [{h: 0, v: 0}, ...wanted.map(slide => Reveal.getIndices(slide))]
        .map(at => ({h: at.h, v: at.v || 0}));
}"""


@pytest.mark.parametrize("source, stem", DECKS, ids=[f"{source}-{stem}" for source, stem in DECKS])
def test_deck_has_no_serious_violation(source, stem, request, page):
    server = request.getfixturevalue("classroom" if source == "classroom" else "site")
    folder, _ = SOURCES[source]
    assert (folder / f"{stem}.html").is_file(), f"no deck {stem}.html in {folder.relative_to(ROOT)}"
    page.goto(f"{server.url}/slides/{stem}.html", wait_until="load")
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    _typeset(page)
    problems = []
    for at in page.evaluate(SLIDES_TO_AUDIT):
        page.evaluate("(at) => Reveal.slide(at.h, at.v)", at)
        page.wait_for_function("() => [...Reveal.getCurrentSlide().querySelectorAll('img')]"
                               ".every(image => image.complete)")
        problems += [f"slide {at['h']}/{at['v']}: {line}"
                     for line in serious_violations(page) + pictures_without_alt(page)]
    assert not problems, f"{source} deck {stem}:\n" + "\n".join(problems)


def test_the_audit_reports_a_picture_without_alt_text(page):
    """The counter-test: a page whose only picture has no alt text fails the audit."""
    page.set_content('<!DOCTYPE html><html lang="en"><head><title>A plot</title></head>'
                     '<body><main><h1>A plot</h1><img src="data:image/gif;base64,'
                     'R0lGODlhAQABAAAAACw=" width="10" height="10"></main></body></html>')
    found = serious_violations(page)
    assert [line for line in found if line.startswith("image-alt (critical)")], found
