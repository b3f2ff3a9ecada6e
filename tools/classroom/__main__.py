"""`make classroom`: the teaching editions of the lessons, under build/classroom/.

    python -m tools.classroom                     # every lesson, both languages (from the repository's root)
    python -m tools.classroom notebooks/02_retain_graph.ipynb

- student/  outputs cleared, exercises unanswered, no solution (editions.py);
- teacher/  worked solutions in place, run, each check cell "✓ correct" (editions.py);
- nbgrader/ a course folder: source/<lesson>/ for `nbgrader generate_assignment`
            (nbgrader_course.py);
- slides/   one reveal.js deck per lesson, from the teacher edition (slides.py);
- guide/    the teacher's guide, and the exam items with their answers (guide.py);
- handouts/ one printable PDF per lesson (handouts.py; needs Chromium).
- ko/       the Korean edition's student/, teacher/, slides/, guide/ and handouts/, the same way,
            from notebooks/ko/ and docs/guide.ko.md (nbgrader's course is English only).

The one source is notebooks/NN_name.ipynb (notebooks/ko/NN_name.ipynb in Korean); the
worked solutions live in its answer cells' metadata (exercises.py says where and how).
"""
import sys
from pathlib import Path

from .editions import build_student, build_teacher
from .exercises import NOTEBOOKS, ROOT, lesson_paths
from .guide import SOURCE, SOURCE_KO, build_guide
from .handouts import CHROMIUM, build_handouts
from .nbgrader_course import build_course
from .slides import build_slides

OUT = ROOT / "build" / "classroom"
NODE_MODULES = ROOT / "docs" / "node_modules"
KOREAN = NOTEBOOKS / "ko"


def build_edition(lessons: list[Path], out: Path, guide: Path, lang: str) -> None:
    build_student(lessons, out / "student")
    if lang == "en":
        build_course(lessons, out / "nbgrader")
    build_teacher(lessons, out / "teacher")
    if NODE_MODULES.is_dir():
        build_slides(out / "teacher", out / "slides")
    else:
        print("No slides: they need reveal.js and MathJax from npm, in docs/node_modules "
              "(`make classroom` fetches them where npm is installed).")
    if guide.is_file():
        build_guide(out / "guide", guide, lang)
    if Path(CHROMIUM).is_file() and NODE_MODULES.is_dir():
        build_handouts(lessons, out / "handouts")
    else:
        print(f"No handouts: they are printed by Chromium ({CHROMIUM}, or set CHROMIUM) with "
              "MathJax from npm (docs/node_modules).")


def main(argv: list[str]) -> None:
    chosen = [Path(arg).resolve() for arg in argv]
    english = [p for p in chosen if p.parent == NOTEBOOKS] if chosen else lesson_paths()
    korean = [p for p in chosen if p.parent == KOREAN] if chosen else lesson_paths(KOREAN)
    if english:
        build_edition(english, OUT, SOURCE, "en")
    if korean:
        build_edition(korean, OUT / "ko", SOURCE_KO, "ko")
    print(f"The classroom editions are in {OUT.relative_to(ROOT)}: "
          + ", ".join(sorted(str(p.relative_to(OUT)) for p in [*OUT.iterdir(), *OUT.glob("ko/*")]
                             if p.is_dir())))


if __name__ == "__main__":
    main(sys.argv[1:])
