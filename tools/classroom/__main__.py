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
import importlib
import importlib.util
import sys
from pathlib import Path

from .editions import build_student, build_teacher
from .exercises import ROOT, lesson_paths
from .nbgrader_course import build_course

OUT = ROOT / "build" / "classroom"
NODE_MODULES = ROOT / "docs" / "node_modules"


def optional(module: str, function: str):
    """A builder from a sibling module, or None while that module does not exist."""
    name = f"{__package__}.{module}"
    if importlib.util.find_spec(name) is None:
        return None
    return getattr(importlib.import_module(name), function)


def main(argv: list[str]) -> None:
    lessons = [Path(arg).resolve() for arg in argv] or lesson_paths()
    build_student(lessons, OUT / "student")
    build_course(lessons, OUT / "nbgrader")
    build_teacher(lessons, OUT / "teacher")
    build_slides = optional("slides", "build_slides")
    if build_slides is not None and not NODE_MODULES.is_dir():
        print("No slides: they need reveal.js and MathJax from npm, in docs/node_modules "
              "(`make classroom` fetches them where npm is installed).")
    elif build_slides is not None:
        build_slides(OUT / "teacher", OUT / "slides")
    build_guide = optional("guide", "build_guide")
    if build_guide is not None:
        build_guide(OUT / "guide")
    print(f"The classroom editions are in {OUT.relative_to(ROOT)}: "
          + ", ".join(sorted(p.name for p in OUT.iterdir() if p.is_dir())))


if __name__ == "__main__":
    main(sys.argv[1:])
