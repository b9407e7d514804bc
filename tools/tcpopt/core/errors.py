"""The harness's one exception type, its exit statuses and its one logger.

The exception is the one the command line turns into a one-line error."""

from __future__ import annotations

import errno
import sys
from typing import Optional

# Exit status, as kunit.py's.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_HELP = (f'exit status, as kunit.py\'s: {EXIT_OK} every check passed, '
             f'{EXIT_FAILED} a test or check failed, {EXIT_USAGE} a usage or '
             'set-up error (nothing was tested: a bad option, a missing '
             'package, a tarball or patch that does not apply); '
             f'{EXIT_INTERRUPTED} interrupted.')

# Who speaks on stderr: run.sh, or tools/bisect-layout (set_program()).
_PROGRAM = ['run.sh']


def set_program(name: str) -> None:
    _PROGRAM[0] = name


def log(message: str) -> None:
    """One line on stderr, prefixed with the program the user ran."""
    print(f'{_PROGRAM[0]}: {message}', file=sys.stderr, flush=True)


class HarnessError(Exception):
    """A failure the user can act on; str(error) is the whole message."""


def no_space(error: OSError) -> Optional[str]:
    """The one line for a full disk or quota; None for any other error."""
    if error.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    where = f' writing {error.filename}' if error.filename else ''
    return (f'no space left on device{where}: free some space, or point '
            'TCPOPT_WORK_DIR at a bigger disk')


class UsageError(HarnessError):
    """A mistake in how run.sh was called: exit 2, as kunit.py."""


class SetupError(HarnessError):
    """The machine or the tree is not ready for the work (a package
    missing, a tarball or a patch that does not apply): exit 2, like a
    usage error. Nothing was tested, so no test verdict may come of it."""


def first_error(output: str, default: str) -> str:
    """The cause: tools print it first and a summary ('Exiting with
    failure status due to previous errors') last. A full disk is named
    wherever it is: tar may first report a short write ('Wrote only 4096
    of 7673 bytes') that does not say why."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    full = [line for line in lines if 'No space left on device' in line]
    return (full or lines or [default])[0]
