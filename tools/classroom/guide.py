"""The teacher's guide in the classroom build (`make classroom`): build/classroom/guide/.

The guide is written once, in docs/guide.md, which is also a page of the site
(docs/guide.html). build_guide(out_dir) puts beside the other editions:

- out_dir/guide.md: the same text, its lesson links pointing to the teacher edition
  (../teacher/NN_name.ipynb, which JupyterLab opens from its Markdown preview);
- out_dir/index.html: the same, as a page that opens in any browser, offline (no script,
  no font, no style sheet from elsewhere); its slide links lead to ../slides/;
- out_dir/exam.md and out_dir/exam.html: the exam items with their answers (docs/exam.md),
  which are built here only, never into the site, so students do not find the answers.

tests/test_teacher_guide.py checks that every cell the guide cites exists in its lesson.
"""
from __future__ import annotations

import html
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "docs" / "guide.md"

SOURCE_KO = ROOT / "docs" / "guide.ko.md"  # the Korean guide, for build/classroom/ko/guide/
EXAM = {"en": ROOT / "docs" / "exam.md", "ko": ROOT / "docs" / "exam.ko.md"}

# A link to a lesson: ../notebooks/NN_name.ipynb, or ../notebooks/ko/NN_name.ipynb
LESSON_LINK = re.compile(r"\]\(\.\./notebooks/(?:ko/)?([0-9]{2}_\w+\.ipynb)(#[^)\s]*)?\)")

PAGE = """<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="data:,">
<style>
body {{ font-family: system-ui, sans-serif; line-height: 1.5; max-width: 52rem; margin: 2rem auto;
        padding: 0 1rem; color: #222; }}
h2 {{ margin-top: 2.5rem; border-top: 1px solid #ddd; padding-top: 1.5rem; }}
table {{ border-collapse: collapse; margin: 1rem 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.25rem 0.6rem; vertical-align: top; text-align: left; }}
td:first-child {{ white-space: nowrap; }}
code {{ background: #f3f3f3; padding: 0 0.2em; border-radius: 3px; }}
</style>
</head><body>
{body}
</body></html>
"""


def for_classroom(text: str) -> str:
    """The guide's lesson links, pointed at the teacher edition next to it."""
    return LESSON_LINK.sub(lambda m: f"](../teacher/{m[1]})", text)


def render(text: str, lang: str = "en") -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    title = re.search(r"^# (.+)$", text, re.M)
    return PAGE.format(title=html.escape(title[1] if title else "Teacher's guide"), body=body,
                       lang=lang)


def build_guide(out_dir, source: Path = SOURCE, lang: str = "en") -> list[Path]:
    """out_dir/guide.md and out_dir/index.html, from docs/guide.md (or `source`)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    text = for_classroom(Path(source).read_text(encoding="utf-8"))
    markdown, page = out_dir / "guide.md", out_dir / "index.html"
    markdown.write_text(text, encoding="utf-8")
    page.write_text(render(text, lang), encoding="utf-8")
    written = [markdown, page]
    exam = EXAM.get(lang)
    if exam is not None and exam.is_file():
        items = exam.read_text(encoding="utf-8")
        (out_dir / "exam.md").write_text(items, encoding="utf-8")
        (out_dir / "exam.html").write_text(render(items, lang), encoding="utf-8")
        written += [out_dir / "exam.md", out_dir / "exam.html"]
    return written


if __name__ == "__main__":
    for path in build_guide(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "classroom" / "guide"):
        print(path)
