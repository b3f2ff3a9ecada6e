"""A code cell's outputs as strict nbval compares them (nbval 0.11, as `make test` runs it:
pyproject.toml's addopts, tests/nbval_sanitize.cfg).

nbval merges each stream's pieces, drops the keys below, runs the sanitize file's
replacements on every text, and compares, key by key, the list of values that the cell's
outputs have under that key. `compared(cell)` gives that; two cells' outputs pass nbval's
comparison exactly when their `compared` values are equal. The teacher edition's test uses
it to hold a run that `make classroom` already made to the lesson's stored outputs, instead
of running the teacher edition a second time.
"""
import copy
import re

from nbval.plugin import coalesce_streams, get_sanitize_patterns, transform_streams_for_comparison

from project import ROOT

# nbval's IPyNbFile.skip_compare, with PNG and JPEG images (compared only under nbdime).
NOT_COMPARED = ("metadata", "traceback", "prompt_number", "output_type", "name",
                "execution_count", "application/vnd.jupyter.widget-view+json",
                "image/png", "image/jpeg")
SANITIZE = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text())
# Cells whose outputs nbval does not compare (its metadata tags).
NOT_CHECKED = ("nbval-ignore-output", "nbval-skip")


def _sanitized(value):
    if not isinstance(value, str):
        return value
    for pattern, replacement in SANITIZE:
        value = re.sub(pattern, replacement, value)
    return value


def compared(cell) -> dict:
    """{output key or MIME type: [its sanitized values, in order]}, as nbval builds it."""
    found = {}
    for output in transform_streams_for_comparison(coalesce_streams(copy.deepcopy(cell.outputs))):
        for key, value in output.items():
            if key in NOT_COMPARED:
                continue
            if key == "data":
                for mime, data in value.items():
                    if mime not in NOT_COMPARED:
                        found.setdefault(mime, []).append(_sanitized(data))
            else:
                found.setdefault(key, []).append(_sanitized(value))
    return found


def checked_by_nbval(cell) -> bool:
    tags = cell.metadata.get("tags", [])
    return cell.cell_type == "code" and not any(tag in tags for tag in NOT_CHECKED)
