"""What the nbgrader edition's hidden tests grade with (tools/classroom/nbgrader_course.py).

A check cell's visible line, `lesson04.exercise_1(answer, TwoHeadNet)`, goes through names
the student's cells can rebind: `lesson04.exercise_1 = lambda *a, **k: True`, or `lesson04`
bound to a stub, would pass it. So the hidden test grades with a fresh copy of this
package, loaded anew from its files under a private name (its checkers, verdicts and
helpers all new), and takes from the notebook only what the exercise needs: the answer,
and the lesson's definitions the check cell passes (a class, a data set).

The hidden test runs this file by its path (runpy), not through `import lesson_checks`,
which a cell could have replaced in sys.modules. What a cell can still do is patch the
standard library, torch or autograd_lens: that is beyond what a check cell can guard.
"""
import importlib
import importlib.machinery
import importlib.util
import sys

PACKAGE = "lesson_checks"
PRIVATE = "_graded_lesson_checks"  # where the fresh copy lives in sys.modules


def fresh_checker(lesson: str):
    """lessonNN of a copy of the package just loaded from its files."""
    found = importlib.machinery.PathFinder.find_spec(PACKAGE)  # on sys.path, not sys.modules
    for name in [n for n in sys.modules if n == PRIVATE or n.startswith(PRIVATE + ".")]:
        del sys.modules[name]  # an earlier copy, or anything a cell put there
    spec = importlib.util.spec_from_file_location(
        PRIVATE, found.origin, submodule_search_locations=found.submodule_search_locations)
    package = importlib.util.module_from_spec(spec)
    sys.modules[PRIVATE] = package  # its relative imports load its own submodules
    spec.loader.exec_module(package)
    return importlib.import_module(f"{PRIVATE}.lesson{lesson}")


def grade(lesson: str, number: int, answer, *definitions):
    """Fail unless the fresh checker finds the answer correct; the failure's message is its
    verdict, hint included, which nbgrader shows the student as feedback."""
    verdict = getattr(fresh_checker(lesson), f"exercise_{number}")(answer, *definitions)
    if verdict.correct is not True:  # raised, not asserted: `python -O` drops asserts
        raise AssertionError(repr(verdict))
