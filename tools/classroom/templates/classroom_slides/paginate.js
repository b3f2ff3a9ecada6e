// Every sub-slide fits the slide, with all its fragments shown (fragments keep their space
// while hidden, so measuring with them hidden is the same). Once MathJax has typeset and the
// pictures are decoded, each sub-slide is laid out at the slide's size; what runs past its
// bottom moves to a new sub-slide right after it: whole cells, unless a cell is taller than
// a slide; such a cell is cut between its parts (a markdown cell between paragraphs or list
// items, a code cell between its code and its output, a long text between lines). Nothing
// is scaled down.
// Then reveal.js starts. tests/browser/test_browser_slides.py checks the result.

// What may be cut between its children: the cells and the containers inside them that
// hold a sequence (not a replay picture's own markup, whose parts depend on each other).
const CUTTABLE = ['.fragment', '.jp-Cell', '.jp-Cell-inputWrapper', '.jp-Cell-outputWrapper',
                  '.jp-InputArea', '.jp-InputArea-editor', '.jp-CodeMirrorEditor', '.cm-editor', '.highlight',
                  '.jp-RenderedMarkdown', '.jp-OutputArea', '.jp-OutputArea-child',
                  '.jp-RenderedText', 'ul', 'ol', 'tbody', 'blockquote'].join(', ');

function bottomOf(element, section) {
    return element.getBoundingClientRect().bottom - section.getBoundingClientRect().top;
}

function shownChildren(element) {
    return [...element.children].filter(child => !child.matches('aside.notes, style, script, .jp-Collapser')
                                                 && child.getBoundingClientRect().height > 0);
}

function firstPastBottom(container, section, limit) {
    return shownChildren(container).find(child => bottomOf(child, section) > limit);
}

// Cut `top` (a child of the section) inside `container`: its children from index `k` on, and
// whatever follows them inside `top`, go to a copy of `top` placed right after it.
function cutInside(top, container, k) {
    const path = [];
    for (let node = container; node !== top; node = node.parentElement)
        path.unshift([...node.parentElement.children].indexOf(node));
    const copy = top.cloneNode(true);
    let original = top, twin = copy;
    for (const index of path) {
        [...original.children].slice(index + 1).forEach(child => child.remove());
        [...twin.children].slice(0, index).forEach(child => child.remove());
        original = original.children[index];
        twin = twin.children[0];  // what came before it is gone
    }
    [...original.children].slice(k).forEach(child => child.remove());
    [...twin.children].slice(0, k).forEach(child => child.remove());
    if (twin.tagName === 'OL') twin.start = (original.start || 1) + k;
    top.after(copy);
}

// Cut a long text (a <pre>) between lines: as many lines as fit stay.
function cutLines(top, pre, section, limit) {
    const lines = pre.innerHTML.split('\n');
    const show = count => { pre.innerHTML = lines.slice(0, count).join('\n'); };
    let keep = lines.length;
    do { keep -= 1; show(keep); } while (keep > 0 && bottomOf(pre, section) > limit);
    if (keep < 1) {
        show(lines.length);
        return false;
    }
    pre.innerHTML = `<span>${lines.slice(0, keep).join('\n')}</span><span>${lines.slice(keep).join('\n')}</span>`;
    cutInside(top, pre, 1);
    return true;
}

// Cut `top`, which alone runs past the bottom, as deep as needed; false if it cannot be cut.
function cutTall(top, section, limit) {
    let container = top;
    for (;;) {
        const child = firstPastBottom(container, section, limit);
        if (!child) return false;
        const index = [...container.children].indexOf(child);
        if (shownChildren(container)[0] !== child) {
            cutInside(top, container, index);
            return true;
        }
        if (child.tagName === 'PRE' && child.matches('.jp-Cell pre'))
            return cutLines(top, child, section, limit);
        if (!child.matches(CUTTABLE + ', table')) return false;
        container = child.tagName === 'TABLE' ? child.tBodies[0] : child;
        if (!container) return false;
    }
}

function paginate(slideHeight) {
    document.body.classList.add('deck-measuring');
    const leaves = [...document.querySelectorAll('.reveal .slides section')]
        .filter(section => !section.querySelector('section'));
    for (let i = 0; i < leaves.length; i++) {
        const section = leaves[i];
        const limit = slideHeight - parseFloat(getComputedStyle(section).paddingBottom);
        for (let guard = 0; guard < 200; guard++) {
            const child = firstPastBottom(section, section, limit);
            if (!child) break;
            if (shownChildren(section)[0] === child) {
                if (!cutTall(child, section, limit)) break;
                continue;
            }
            // Taller than a whole slide: it will be cut anyway, so its start fills this one.
            const room = limit - parseFloat(getComputedStyle(section).paddingTop);
            if (child.getBoundingClientRect().height > room && cutTall(child, section, limit)) continue;
            const next = document.createElement('section');
            section.after(next);
            for (let node = child; node;) {
                const following = node.nextSibling;
                if (!(node.matches && node.matches('aside.notes'))) next.appendChild(node);
                node = following;
            }
            leaves.splice(i + 1, 0, next);
            break;
        }
    }
    document.body.classList.remove('deck-measuring');
}

async function startDeck(options) {
    if (document.readyState !== 'complete')
        await new Promise(resolve => window.addEventListener('load', resolve, {once: true}));
    if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
    await document.fonts.ready;
    await Promise.all([...document.images].map(image => image.decode().catch(() => null)));
    paginate(options.height);
    Reveal.initialize(options);
}
