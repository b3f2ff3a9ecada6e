"""The step-through picture of a `backward_replay`, as one HTML fragment.

No script and nothing fetched: one radio button per frame (hidden), and CSS that shows
the checked frame's caption and memory marker and styles the graph's nodes (an SVG that
Graphviz drew, each node given a class from its DOT name: g-n3, g-n3_saved0). The "next"
and "back" buttons are labels of the neighbouring frames' radio buttons. So it works
wherever HTML with a <style> does: JupyterLab after Run All, the static site, the slide
decks. Printed (or in a PDF), a few frames are shown side by side instead.
"""
import hashlib
import html
import itertools
import re

from .memory import format_bytes

RAN = "fill:#b8e186"                                   # nodes run so far: green
NOW = "stroke:#1b7837;stroke-width:3px"                # the node of this step
LET_GO = "fill:#ffffff;stroke-dasharray:4,3"           # saved tensors let go so far
LET_GO_TEXT = "fill:#888888"
SNAPSHOTS = 4  # frames side by side when printed
ALL_SNAPSHOTS_UP_TO = 6  # a pass of fewer steps prints every frame

_instances = itertools.count(1)  # two replays on one page never share radio buttons

STYLE = """
.{u} {{font-family: sans-serif; font-size: 14px;}}
.{u} > input {{position: absolute; opacity: 0; pointer-events: none;}}
.{u} .alr-body {{display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start;}}
.{u} .alr-graph svg {{max-width: 560px; height: auto;}}
.{u} .alr-side {{width: 340px;}}
.{u} .alr-cap, .{u} .alr-mark, .{u} .alr-print {{display: none;}}
.{u} .alr-cap p {{margin: 4px 0;}}
.{u} .alr-nav label {{display: inline-block; border: 1px solid #888; border-radius: 4px;
  padding: 2px 10px; margin-right: 6px; cursor: pointer; background: #f4f4f4;}}
/* A button with nowhere to go: dimmed, yet readable (4.9:1 on white, as axe-core asks). */
.{u} .alr-nav span {{display: inline-block; padding: 2px 10px; margin-right: 6px; color: #707070;}}
.{u} .alr-key span {{display: inline-block; margin-right: 10px;}}
.{u} .alr-key i {{display: inline-block; width: 12px; height: 12px; vertical-align: middle;
  margin-right: 4px; border: 1px solid #444;}}
@media print {{
  .{u} .alr-body {{display: none;}}
  .{u} .alr-print {{display: flex; flex-wrap: wrap; gap: 8px;}}
  .{u} .alr-print figure {{width: 45%; margin: 0;}}
  .{u} .alr-print svg {{width: 100%; height: auto;}}
}}
"""


def _classes(svg: str) -> str:
    """Give each node of Graphviz's SVG a class from its DOT name (<title>n3</title>)."""
    return re.sub(r'(<g id="[^"]*" class="node")(>\s*<title>)([^<]+)(</title>)',
                  lambda m: f'{m[1][:-1]} g-{html.unescape(m[3])}"{m[2]}{m[3]}{m[4]}', svg)


def _without_header(svg: str) -> str:
    """The <svg> element alone, without Graphviz's ids (a page may show it twice)."""
    return re.sub(r'(<g|<svg)( id="[^"]*")', r"\1", svg[svg.index("<svg"):])


def _rules(replay, u, snapshot_steps):
    """One CSS rule per node: from the step it ran on, in every later frame, on screen
    (the checked radio button) and in the printed snapshots."""
    last = len(replay.frames) - 1

    def selectors(step, target):
        on_screen = [f"#{u}-{k}:checked ~ .alr-body .alr-graph {target}" for k in range(step, last + 1)]
        printed = [f".{u} .alr-snap-{k} {target}" for k in snapshot_steps if k >= step]
        return ",\n".join(on_screen + printed)

    rules = []
    for frame in replay.frames[1:]:
        node = frame.node_index
        rules.append(f"{selectors(frame.step, f'.g-n{node} > polygon')} {{{RAN}}}")
        now = [f"#{u}-{frame.step}:checked ~ .alr-body .alr-graph .g-n{node} > polygon"]
        if frame.step in snapshot_steps:
            now.append(f".{u} .alr-snap-{frame.step} .g-n{node} > polygon")
        rules.append(f"{', '.join(now)} {{{NOW}}}")
        if frame.freed:
            for k in range(replay._saved_boxes[node]):
                target = f".g-n{node}_saved{k}"
                rules.append(f"{selectors(frame.step, target + ' > polygon')} {{{LET_GO}}}")
                rules.append(f"{selectors(frame.step, target + ' text')} {{{LET_GO_TEXT}}}")
    for frame in replay.frames:
        rules.append(f"#{u}-{frame.step}:checked ~ .alr-body .alr-cap-{frame.step},\n"
                     f"#{u}-{frame.step}:checked ~ .alr-body .alr-mark-{frame.step} "
                     "{display: block; visibility: visible;}")
    return "\n".join(rules)


def _memory_svg(replay) -> str:
    """The bytes held after each step, a step line, with a marker per frame (hidden by
    CSS but the checked frame's)."""
    width, height, left, bottom, top = 340, 190, 58, 30, 14
    levels = [frame.level for frame in replay.frames]
    high, low = max(levels + [1]), min(levels + [0])
    steps = len(levels) - 1 or 1

    def x(step):
        return left + (width - left - 10) * step / steps

    def y(level):
        return top + (height - top - bottom) * (high - level) / (high - low)

    points = " ".join(f"{x(k):.1f},{y(levels[k - 1] if k else 0):.1f} {x(k):.1f},{y(level):.1f}"
                      for k, level in enumerate(levels))
    marks = "".join(
        f'<g class="alr-mark alr-mark-{k}"><line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{top}" '
        f'y2="{height - bottom}" stroke="#1b7837" stroke-dasharray="3,3"/>'
        f'<circle cx="{x(k):.1f}" cy="{y(level):.1f}" r="5" fill="#1b7837"/></g>'
        for k, level in enumerate(levels))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="bytes held after each step">'
            f'<line x1="{left}" x2="{width - 10}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#999"/>'
            f'<line x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}" stroke="#999"/>'
            f'<text x="{left - 4}" y="{y(high) + 4:.1f}" text-anchor="end" font-size="11">'
            f'{html.escape(format_bytes(high))}</text>'
            f'<text x="{left - 4}" y="{y(0) + 4:.1f}" text-anchor="end" font-size="11">0</text>'
            + (f'<text x="{left - 4}" y="{y(low) + 4:.1f}" text-anchor="end" font-size="11">'
               f'{html.escape(format_bytes(low))}</text>' if low < 0 else "") +
            f'<text x="{(left + width) / 2:.0f}" y="{height - 6}" text-anchor="middle" '
            f'font-size="11">nodes run (steps)</text>'
            f'<polyline points="{points}" fill="none" stroke="#333" stroke-width="1.5"/>'
            f'{marks}</svg>')


def held(level: int) -> str:
    """'20 B above' or '8 B below' (the level before the backward pass)."""
    return f"{format_bytes(abs(level))} {'below' if level < 0 else 'above'}"


def _caption(frame, u, last) -> str:
    back = (f'<label for="{u}-{frame.step - 1}">&#9664; back</label>' if frame.step
            else '<span>&#9664; back</span>')
    ahead = (f'<label for="{u}-{frame.step + 1}">next &#9654;</label>' if frame.step < last
             else '<span>next &#9654;</span>')
    inside = (f" While it ran: up to {html.escape(held(frame.inside))}."
              if frame.inside > frame.level else "")
    return (f'<div class="alr-cap alr-cap-{frame.step}" data-step="{frame.step}">'
            f'<div class="alr-nav">{back}{ahead}</div>'
            f'<p><b>{frame.step} of {last}.</b> {html.escape(frame.caption)}</p>'
            f'<p>Held: {html.escape(held(frame.level))} the level before the backward '
            f'pass.{inside}</p></div>')





def page(replay, graph_svg: str) -> str:
    last = len(replay.frames) - 1
    digest = hashlib.sha1(repr(replay).encode()).hexdigest()[:8]
    u = f"alr{next(_instances)}-{digest}"
    svg = _without_header(_classes(graph_svg))
    snapshot_steps = (range(last + 1) if last < ALL_SNAPSHOTS_UP_TO else
                      sorted({round(last * k / (SNAPSHOTS - 1)) for k in range(SNAPSHOTS)}))
    radios = "".join(f'<input type="radio" name="{u}" id="{u}-{k}" aria-label="step {k}"'
                     f'{" checked" if k == 0 else ""}>' for k in range(last + 1))
    captions = "".join(_caption(frame, u, last) for frame in replay.frames)
    key = ('<div class="alr-key"><span><i style="background:#b8e186"></i>ran</span>'
           '<span><i style="background:#fff;border-style:dashed"></i>saved tensor let go'
           '</span></div>')
    snapshots = "".join(
        f'<figure class="alr-snap-{k}">{svg}<figcaption>{html.escape(replay.frames[k].caption)} '
        f'Held: {html.escape(held(replay.frames[k].level))} the level before.</figcaption>'
        '</figure>'
        for k in snapshot_steps)
    return (f'<div class="{u}"><style>{STYLE.format(u=u)}\n{_rules(replay, u, snapshot_steps)}'
            f'</style>{radios}<div class="alr-body"><div class="alr-graph">{svg}</div>'
            f'<div class="alr-side">{_memory_svg(replay)}{key}{captions}</div></div>'
            f'<div class="alr-print">{snapshots}</div></div>')
