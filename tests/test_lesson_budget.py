"""Every lesson fits a class period, states an honest time, and has its exercises.

The counting is tools/lesson_stats.py's (`make stats` prints the same numbers).
"""
import sys

import pytest

from project import NOTEBOOKS, ROOT

sys.path.insert(0, str(ROOT / "tools"))
from lesson_stats import LessonStats, lesson_stats  # noqa: E402


@pytest.fixture(params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def stats(request):
    return lesson_stats(request.param)


def test_within_the_period_budget(stats):
    assert not stats.over_budget, stats.over_budget


def test_states_the_time_its_size_gives(stats):
    assert stats.stated_minutes is not None, \
        "no '**Time:** about N minutes' line at the top of the lesson"
    assert stats.stated_minutes == stats.estimated_minutes, (
        f"states {stats.stated_minutes} minutes; its core's size gives "
        f"{stats.estimated_minutes} (see tools/lesson_stats.py)")
    assert stats.stated_exercise_minutes == stats.exercise_minutes, (
        f"states {stats.stated_exercise_minutes} minutes for the exercises; "
        f"{stats.exercises} exercises take about {stats.exercise_minutes} "
        "('**Time:** about N minutes for the core, and about M for the two exercises')")


def test_no_silent_checks(stats):
    """A claim is shown to the reader (strict nbval compares it), not asserted in silence."""
    assert stats.silent_checks == 0, f"{stats.silent_checks} code cells assert outside a function"


def test_two_or_three_exercises(stats):
    assert 2 <= stats.exercises <= 3


def test_the_budget_check_can_fail():
    long = LessonStats("long", core_words=1501, total_words=1501, core_cells=61,
                       core_code_cells=20, exercises=2, stated_minutes=30)
    assert len(long.over_budget) == 2  # words and cells (15.01 + 15 = 30.01 min: in time)
    # 800 words + 200 printed (10 min) + 65 code lines (5) + 20 cells (15) + 5 predictions (5)
    ok = LessonStats("ok", 800, 2200, 60, 20, 3, 35, core_code_lines=65, predictions=5,
                     core_output_words=200)
    assert ok.estimated_minutes == 35 and not ok.over_budget
    assert LessonStats("loud", 800, 2200, 60, 20, 3, 35, core_code_lines=65, predictions=5,
                       core_output_words=201).over_budget == ["core 40 min > 35"]
    assert ok.exercise_minutes == 25  # three answered with a value: 21 minutes
    assert LessonStats("ok", 1000, 2200, 60, 20, 3, 30, programs=2).exercise_minutes == 30  # 27
    assert LessonStats("slow", 1000, 2200, 60, 20, 3, 30, core_code_lines=160,
                       predictions=5).over_budget == ["core 45 min > 35"]


def test_the_core_ends_at_the_exercises_and_counts_printed_words(tmp_path):
    import json
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "one two three"},
        {"cell_type": "code", "metadata": {}, "source": "print(x)", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "four five"},
            {"output_type": "error", "ename": "E", "evalue": "",
             "traceback": ["\x1b[31mRuntimeError\x1b[0m: six"]},
            {"output_type": "display_data", "metadata": {},
             "data": {"image/png": "", "text/plain": "<Figure size 640x480 with 1 Axes>"}}]},
        {"cell_type": "markdown", "metadata": {}, "source": "seven\n## Exercises\nnot counted"},
        {"cell_type": "code", "metadata": {}, "source": "exercise_1(answer)", "outputs": []}]
    path = tmp_path / "01_x.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    stats = lesson_stats(path)
    assert (stats.core_words, stats.core_output_words, stats.core_cells) == (4, 4, 3)
    assert stats.core_code_cells == 1 and stats.exercises == 1


def test_a_silent_check_is_seen(tmp_path):
    import json
    cells = [{"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
             for source in ("assert x == 1", "def f():\n    assert True", "x == 1",
                            "lesson_checks.lesson01.exercise_1(answer)")]
    path = tmp_path / "01_x.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    assert lesson_stats(path).silent_checks == 1

