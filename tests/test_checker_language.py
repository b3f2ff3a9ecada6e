"""Every verdict and hint the checkers write exists in English and in Korean.

A checker writes its messages with `say(english, korean)` (lesson_checks.language). The
static test below fails on any English sentence in the checkers' code that is not the
English half of a `say`, and on any `say` whose Korean half has no Korean in it; the
others run each lesson's worked solutions and blank answers in both languages.
"""
import ast
import re
from pathlib import Path

import pytest

from project import ROOT

CHECKERS = sorted((ROOT / "course" / "lesson_checks").glob("*.py"))
# Two English words in a row: a sentence, not an identifier or a label.
PROSE = re.compile(r"[A-Za-z]{2,}[ ,;:'()-]+[A-Za-z]{2,}")
HANGUL = re.compile(r"[\uac00-\ud7a3]")

# Text that is not a message: code the exercises show (it stays as it is, like all code),
# and the error for a wrong `set_language` call, which is raised, not shown as a verdict.
NOT_MESSAGES = {
    # (module, the name of the function or module-level constant the text is in)
    ("language.py", "set_language"),
    ("language.py", "KOREAN_FONTS"),  # font names and matplotlib settings, not messages
    ("language.py", "KOREAN_RC"),
    ("errors.py", "FREED"),  # PyTorch's own messages, matched, never shown
    ("errors.py", "VERSION"),
    ("errors.py", "FREED_BUFFER"),  # the labels the reader's answer uses: code
    ("errors.py", "error_name"),  # spellings of those labels that the reader may type
    ("lesson01.py", "EXERCISE_2_CODE"),  # the code exercise 2 shows and runs: code
    ("lesson02.py", "CALLS_2"),  # the calls exercise 2 shows and runs: code
    ("lesson07.py", "OP_WORDS"),  # the words exercise 2's answer may use for its choices
    ("lesson05.py", "SNIPPETS"),  # the snippets exercise 2 shows and runs: code
}


def literal_text(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return None


def is_docstring(node, parent):
    return (isinstance(parent, ast.Expr) and isinstance(node, ast.Constant))


def is_say(call):
    return isinstance(call, ast.Call) and getattr(call.func, "id", None) == "say"


def english_only_texts(path):
    """(line, text) for each English sentence in `path` not said in both languages."""
    tree = ast.parse(path.read_text())
    found = []

    def visit(node, parent, owner):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            owner = node.name
        elif isinstance(node, ast.Assign) and parent is tree:
            names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            owner = names[0] if names else owner
        if is_say(node):
            english, korean = node.args
            if not HANGUL.search(literal_text(korean) or ""):
                found.append((node.lineno, f"say(...)'s Korean half has no Korean: "
                                           f"{ast.unparse(korean)[:60]}"))
            for argument in node.args:  # f-strings inside may hold further says
                for value in getattr(argument, "values", []):
                    if isinstance(value, ast.FormattedValue):
                        visit(value.value, value, owner)
                if literal_text(argument) is None:
                    visit(argument, node, owner)
            return
        text = literal_text(node)
        if text is not None:
            if (PROSE.search(text) and not is_docstring(node, parent)
                    and (path.name, owner) not in NOT_MESSAGES):
                found.append((node.lineno, text[:60]))
            if isinstance(node, ast.Constant):
                return
            # an f-string: look into its {expressions} only, not again at its text
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    visit(value.value, value, owner)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, node, owner)

    visit(tree, None, None)
    return found


@pytest.mark.parametrize("path", CHECKERS, ids=[p.name for p in CHECKERS])
def test_every_message_is_said_in_both_languages(path):
    untranslated = english_only_texts(path)
    assert not untranslated, (
        f"{path.name}: write these with say(english, korean), or list them in "
        f"NOT_MESSAGES if they are not messages: " +
        "; ".join(f"line {line}: {text!r}" for line, text in untranslated))
