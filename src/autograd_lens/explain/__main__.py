"""python -m autograd_lens.explain script.py [args...]: run a script as `python script.py
[args...]` would (same sys.argv, __name__ == "__main__", stdout, stderr and exit code),
with explain() on, so that autograd's freed-buffer and in-place errors get their note."""
import os
import runpy
import sys
import traceback

from . import explain

USAGE = "usage: python -m autograd_lens.explain script.py [args...]"


def _print_error(error, script):
    """The traceback from the script's own frames on, as `python script.py` prints it."""
    tb = error.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb or error.__traceback__)
    if sys.version_info < (3, 11):  # PEP 678 notes are printed by 3.11 and newer only
        for note in getattr(error, "__notes__", []):
            print(note, file=sys.stderr)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 2
    script = os.path.abspath(argv[0])
    if not os.path.isfile(script):
        print(f"{USAGE}\nautograd_lens.explain: no such file: {argv[0]}", file=sys.stderr)
        return 2
    sys.argv = argv
    sys.path[0] = os.path.dirname(script)  # as `python script.py` sets it
    try:
        with explain():
            runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise  # sys.exit(3) in the script: the same exit code
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - printed as Python would, exit code 1
        _print_error(error, script)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
