"""Errors a user's input causes, and how a command line ends on one: one sentence on stderr and exit 2.

``UserError`` is the base of the errors that name a bad input (a missing dataset, a folder that holds
something else, a leg file of another version); the command-line entry points run their ``main``
through ``run_cli``, which turns those and the operating system's refusals about a path the user gave
(no such file, not a folder, no permission) into ``<prog>: error: <message>`` and exit status 2, and
an interrupt into exit status 130, never a traceback. Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import sys
from collections.abc import Callable

USAGE_EXIT = 2          # argparse's status for a bad command line; ours for a bad input
INTERRUPTED_EXIT = 130  # 128 + SIGINT, as a shell reports it

# the operating system's refusals about a path: the user named something that is not there or not usable
PATH_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError, FileExistsError)


class UserError(Exception):
    """An input the user gave cannot be used; the message says which and what was expected."""


def one_sentence(exc: BaseException) -> str:
    """The message of ``exc`` on one line (an OS error without one: its strerror and file name)."""
    text = str(exc).strip()
    if isinstance(exc, OSError) and exc.filename is not None and (not text or text.startswith("[Errno")):
        text = f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    return " ".join(text.split()) or type(exc).__name__


def run_cli(main: Callable[[list[str] | None], int | None], argv: list[str] | None = None,
            prog: str | None = None) -> int:
    """``main(argv)``'s exit status; a user's error or an interrupt as one line on stderr instead of a traceback."""
    name = prog or (sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "legwork")
    try:
        return main(argv) or 0
    except (UserError, *PATH_ERRORS) as exc:
        print(f"{name}: error: {one_sentence(exc)}", file=sys.stderr, flush=True)
        return USAGE_EXIT
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr, flush=True)
        return INTERRUPTED_EXIT
