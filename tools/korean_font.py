"""Make sure matplotlib sees the Korean font (`make setup` runs this after installing it).

matplotlib keeps a list of the machine's fonts in a cache (fontlist-*.json in its cache
folder), made the first time it runs; a font installed after that (Debian's
fonts-noto-cjk, for the Korean lessons' plots) is not in the list until the cache is
made again. When no font that notebooks/ko/matplotlibrc names is in the list, this
removes the cache, as matplotlib's documentation advises, and lets a fresh matplotlib
make it again.
"""
import re
import subprocess
import sys
from pathlib import Path

RC = Path(__file__).resolve().parent.parent / "notebooks" / "ko" / "matplotlibrc"
# A fresh interpreter: the font list is read when matplotlib is imported.
SEES = ("import sys; from matplotlib import font_manager\n"
        "known = {font.name for font in font_manager.fontManager.ttflist}\n"
        "sys.exit(0 if known & set(sys.argv[1:]) else 1)")


def wanted() -> list[str]:
    line = re.search(r"^font\.sans-serif:\s*(.+)$", RC.read_text(), re.MULTILINE)[1]
    return [name.strip() for name in line.split(",")]


def matplotlib_sees_one() -> bool:
    return subprocess.run([sys.executable, "-c", SEES, *wanted()]).returncode == 0


def main() -> int:
    if matplotlib_sees_one():
        return 0
    import matplotlib

    for cache in Path(matplotlib.get_cachedir()).glob("fontlist-*.json"):
        cache.unlink()
    if matplotlib_sees_one():
        print(f"matplotlib's font list made again ({matplotlib.get_cachedir()}): "
              "it now has the Korean font")
    else:
        print(f"note: matplotlib finds none of {', '.join(wanted())}: the Korean lessons' "
              "plots will show Hangul as empty boxes (install Debian's fonts-noto-cjk)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
