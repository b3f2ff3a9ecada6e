"""Make sure matplotlib sees the Korean font (`make setup` runs this after installing it).

matplotlib keeps a list of the machine's fonts in a cache, made the first time it runs;
a font installed after that (Debian's fonts-noto-cjk, for the Korean lessons' plots) is
not in the list until the cache is made again. This makes it again when no font that
notebooks/ko/matplotlibrc names is in it, and says so.
"""
import re
import sys
from pathlib import Path

import matplotlib
from matplotlib import font_manager

RC = Path(__file__).resolve().parent.parent / "notebooks" / "ko" / "matplotlibrc"


def wanted() -> list[str]:
    line = re.search(r"^font\.sans-serif:\s*(.+)$", RC.read_text(), re.MULTILINE)[1]
    return [name.strip() for name in line.split(",")]


def known() -> set[str]:
    return {font.name for font in font_manager.fontManager.ttflist}


def main() -> int:
    if set(wanted()) & known():
        return 0
    font_manager.fontManager = font_manager._load_fontmanager(try_read_cache=False)
    if set(wanted()) & known():
        print(f"matplotlib's font list made again ({matplotlib.get_cachedir()}): "
              "it now has the Korean font")
        return 0
    print(f"note: matplotlib finds none of {', '.join(wanted())}: the Korean lessons' plots "
          "will show Hangul as empty boxes (install Debian's fonts-noto-cjk)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
