"""The language of the lessons' verdicts and hints, and the font of their plots.

A lesson's set-up cell chooses it, `set_language("en")` or `set_language("ko")`: the one
line in which the two editions' code differs only by a string. Every message a checker
writes goes through `say(english, korean)`, called when the message is made, so both
texts sit side by side in the checker's code (tests/test_checker_language.py checks that
no message is left in English only).

`set_language("ko")` also gives matplotlib a Hangul font, the first of `KOREAN_FONTS`
installed, so that a Korean lesson's plots draw Hangul wherever its kernel started
(Colab, a copied notebook), not only in notebooks/ko, whose matplotlibrc names the same
fonts (tests/test_korean_edition.py checks that the two lists agree).
"""
import warnings

LANGUAGES = ("en", "ko")
# The fonts of the Korean lessons' plots, the first one installed drawing all of a plot's
# text. Debian's fonts-noto-cjk has collection files that matplotlib reads by their first
# face, "Noto Sans CJK JP", whose Hangul is the KR face's; macOS and Windows have the
# last two. KOREAN_RC are the settings that use them, notebooks/ko/matplotlibrc's two lines.
KOREAN_FONTS = ("Noto Sans CJK KR", "Noto Sans CJK JP", "Apple SD Gothic Neo", "Malgun Gothic")
KOREAN_RC = {"font.family": ["sans-serif"], "font.sans-serif": list(KOREAN_FONTS)}

_current = "en"
_fonts_before = None  # the KOREAN_RC settings' values before set_language("ko") changed them
_warned = False


def set_language(code: str) -> None:
    """Write the verdicts and hints in `code`: "en" (English) or "ko" (Korean).

    "ko" also gives matplotlib the settings `KOREAN_RC` (font.family sans-serif,
    font.sans-serif `KOREAN_FONTS`), so plots draw Hangul from any working folder; when
    none of those fonts is installed it leaves the fonts alone and warns, once, what to
    install.
    "en" puts back the two font settings as they were before "ko" changed them (and
    leaves matplotlib alone, without importing it, when "ko" changed nothing).
    """
    global _current
    if code not in LANGUAGES:
        raise ValueError(f"set_language takes one of {LANGUAGES}; got {code!r}")
    _current = code
    if code == "ko":
        _use_korean_font()
    else:
        _restore_font()


def language() -> str:
    """The language the checkers write in now: "en" or "ko"."""
    return _current


def say(english: str, korean: str) -> str:
    """The message in the current language (both are given, as f-strings, at the call)."""
    return korean if _current == "ko" else english


def _installed_korean_fonts(font_manager) -> list[str]:
    """The KOREAN_FONTS that matplotlib's font list has. A font installed after matplotlib
    made its cached list (fontlist-*.json) is not in it: when none is found, the system's
    fonts that the list lacks are added to it (for this process) and looked at again."""
    manager = font_manager.fontManager
    found = [name for name in KOREAN_FONTS if name in {font.name for font in manager.ttflist}]
    if found:
        return found
    known = {font.fname for font in manager.ttflist}
    for path in font_manager.findSystemFonts():
        if path not in known:
            try:
                manager.addfont(path)
            except Exception:  # a file FreeType cannot read: matplotlib skips it too
                pass
    return [name for name in KOREAN_FONTS if name in {font.name for font in manager.ttflist}]


def _use_korean_font() -> None:
    global _fonts_before, _warned
    try:
        import matplotlib
        from matplotlib import font_manager
    except ImportError:  # no plots without matplotlib: nothing to set
        return
    if not _installed_korean_fonts(font_manager):
        if not _warned:
            _warned = True
            fonts = ", ".join(KOREAN_FONTS)
            warnings.warn(say(
                f"matplotlib finds no Korean font ({fonts}): the plots will show Hangul "
                "as empty boxes. Install one: on Debian or Ubuntu `sudo apt-get install "
                "fonts-noto-cjk`; on Colab run `!apt-get install fonts-noto-cjk` in a cell, "
                "then restart the session and run the set-up cell again; on macOS "
                "`brew install font-noto-sans-cjk-kr`.",
                f"matplotlib이 한글 글꼴({fonts})을 찾지 못해 그림 속 한글이 빈 네모로 "
                "나옵니다. 글꼴을 설치하세요. Debian이나 Ubuntu에서는 `sudo apt-get install "
                "fonts-noto-cjk`, Colab에서는 셀에서 `!apt-get install fonts-noto-cjk`를 "
                "실행한 뒤 세션을 다시 시작하고 준비 셀을 다시 실행하세요. macOS에서는 "
                "`brew install font-noto-sans-cjk-kr`로 설치합니다."), UserWarning, stacklevel=3)
        return
    if _fonts_before is None:
        _fonts_before = {key: matplotlib.rcParams[key] for key in KOREAN_RC}
    matplotlib.rcParams.update({key: list(value) for key, value in KOREAN_RC.items()})


def _restore_font() -> None:
    global _fonts_before
    if _fonts_before is None:
        return
    import matplotlib

    matplotlib.rcParams.update(_fonts_before)
    _fonts_before = None
