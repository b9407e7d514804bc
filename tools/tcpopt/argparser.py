"""argparse as run.sh wants it: one-line usage errors, options at hand.

A usage error is a UsageError (one line, exit 2), not argparse's usage
dump; the options a parser takes stay listed for the command line's own
checks; an option joins a mutually exclusive group by name.
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, List, NoReturn, Optional

from tcpopt.core.errors import UsageError


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a UsageError: one line, exit 2; the
    options added to it stay at hand in .options (argparse keeps its own
    list private); and an option may join a mutually exclusive group by
    name (one_of), whichever option group adds it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.options: List[argparse.Action] = []
        self.exclusive: Dict[str, Any] = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, one_of: Optional[str] = None,
                     **kwargs: Any) -> argparse.Action:
        """@one_of: the options added with the same name exclude each
        other (argparse's mutually exclusive group of that name)."""
        if one_of is None:
            action = super().add_argument(*args, **kwargs)
        else:
            action = self.exclusive_group(one_of).add_argument(*args,
                                                               **kwargs)
        self.options.append(action)
        return action

    def exclusive_group(self, name: str) -> Any:
        if name not in self.exclusive:
            self.exclusive[name] = self.add_mutually_exclusive_group()
        return self.exclusive[name]

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f'{text}: not a positive number')
    return value
