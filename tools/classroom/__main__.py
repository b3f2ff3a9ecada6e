"""`make classroom`: the teaching editions of the lessons, under build/classroom/.

    python -m tools.classroom                     # every lesson (from the repository's root)
    python -m tools.classroom notebooks/02_retain_graph.ipynb

- student/  outputs cleared, exercises unanswered, no solution (editions.py);
- teacher/  worked solutions in place, run, each check cell "✓ correct" (editions.py);
- nbgrader/ a course folder: source/<lesson>/ for `nbgrader generate_assignment`
            (nbgrader_course.py);
- slides/   one reveal.js deck per lesson, from the teacher edition (slides.py);
- guide/    the teacher's guide (guide.py).

The one source is notebooks/NN_name.ipynb; the worked solutions live in its answer
cells' metadata (exercises.py says where and how).
"""
import sys
from pathlib import Path

from .editions import build_student, build_teacher
from .exercises import ROOT, lesson_paths
from .guide import build_guide
from .nbgrader_course import build_course
from .slides import build_slides

OUT = ROOT / "build" / "classroom"
NODE_MODULES = ROOT / "docs" / "node_modules"


def main(argv: list[str]) -> None:
    lessons = [Path(arg).resolve() for arg in argv] or lesson_paths()
    build_student(lessons, OUT / "student")
    build_course(lessons, OUT / "nbgrader")
    build_teacher(lessons, OUT / "teacher")
    if NODE_MODULES.is_dir():
        build_slides(OUT / "teacher", OUT / "slides")
    else:
        print("No slides: they need reveal.js and MathJax from npm, in docs/node_modules "
              "(`make classroom` fetches them where npm is installed).")
    build_guide(OUT / "guide")
    print(f"The classroom editions are in {OUT.relative_to(ROOT)}: "
          + ", ".join(sorted(p.name for p in OUT.iterdir() if p.is_dir())))


if __name__ == "__main__":
    main(sys.argv[1:])
