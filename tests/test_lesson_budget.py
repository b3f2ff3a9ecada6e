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


def test_two_or_three_exercises(stats):
    assert 2 <= stats.exercises <= 3


def test_the_budget_check_can_fail():
    long = LessonStats("long", core_words=1501, total_words=1501, core_cells=61,
                       core_code_cells=30, exercises=2, stated_minutes=30)
    assert len(long.over_budget) == 2
    assert LessonStats("ok", 1500, 2200, 60, 30, 2, 30).estimated_minutes == 30

