"""`MemoryTimeline.plot`: bytes held over a block, phases shaded, the peak marked."""
from .memory import format_bytes

# One colour per kind of phase; repeated phases (backward #1, #2) alternate two shades.
PHASE_COLOURS = {"forward": "#dbe9f6", "other": "#f0f0f0", "optimizer step": "#e5f5e0",
                 "zero_grad": "#f2f2f2"}
BACKWARD_COLOURS = ("#fde0c5", "#fcc5c0")


def _unit(top: int):
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if top >= size:
            return unit, size
    return "bytes", 1


def _colour(name: str) -> str:
    if name.startswith("backward #"):
        return BACKWARD_COLOURS[(int(name.split("#")[1]) - 1) % 2]
    return PHASE_COLOURS.get(name, "#f0f0f0")


# Phase names and the peak's label at matplotlib's default tick-label size, so that a slide
# that shows tick labels readably shows these too.
NAME_FONT_SIZE = 10
NAME_POINTS_PER_CHARACTER = 6.0  # about, for a 10-point sans-serif name


def _axes_width_points(ax) -> float:
    figure = ax.get_figure()
    return ax.get_position().width * figure.get_figwidth() * 72


def plot(timeline, ax=None, title=None):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.2))
    events = timeline.events
    unit, size = _unit(max(abs(e.level) for e in events) or 1)
    # The level before the first event is 0: the level at entry.
    xs = [0] + [e.index + 1 for e in events]
    ys = [0] + [e.level / size for e in events]
    ax.step(xs, ys, where="post", color="black", linewidth=1.2)
    top = max(ys)
    ax.set_xlim(0, len(events) + 1)
    # Phase names at the top of their bands, in two rows so that neighbours do not overlap;
    # a name with no room in either row is left out (its band's colour still shows).
    width = _axes_width_points(ax)
    points_per_x = width / (len(events) + 1)
    row_ends = [float("-inf"), float("-inf")]  # where each row's last name ends, in points
    for phase in timeline.phases:
        ax.axvspan(phase.first + 0.5, phase.last + 1.5, color=_colour(phase.name), zorder=0)
        middle = ((phase.first + phase.last) / 2 + 1) * points_per_x
        half = len(phase.name) * NAME_POINTS_PER_CHARACTER / 2
        band = (phase.last - phase.first + 1) * points_per_x
        middle = min(max(middle, half + 2), width - half - 2)  # inside the axes
        row = next((r for r, end in enumerate(row_ends) if middle - half > end + 4), None)
        if row is None or band < 2 * half * 0.8:
            continue
        row_ends[row] = middle + half
        # x: the data's, y: a fraction of the axes' height
        ax.text(middle / points_per_x, 0.97 - 0.09 * row, phase.name, ha="center", va="top",
                fontsize=NAME_FONT_SIZE, clip_on=True, transform=ax.get_xaxis_transform())
    peak = timeline.peak
    if peak.event is not None:
        x, y = peak.event.index + 1, peak.bytes / size
        ax.plot([x], [y], "o", color="crimson")
        ax.annotate(f"peak {format_bytes(peak.bytes)}", (x, y), xytext=(7, 3),
                    textcoords="offset points", color="crimson", fontsize=NAME_FONT_SIZE)
    ax.set_ylim(min(0, min(ys)) * 1.1, top * 1.35 if top > 0 else 1)
    ax.set_xlabel("allocations and frees, in order")
    ax.set_ylabel(f"{unit} above the level at entry")
    if title:
        ax.set_title(title)
    return ax
