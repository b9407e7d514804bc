"""The one exception type the command line turns into a one-line error."""


class HarnessError(Exception):
    """A failure the user can act on; str(error) is the whole message."""
