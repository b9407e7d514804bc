"""The upstream suites as each tree gets them, from the one kunit/tests/.

kunit/tests/ is written for mainline. A part that needs a feature an
older tree lacks sits in `#ifdef OPTION_<kind>`: the option bit the tree
defines once it writes that option. Every tree gets the file with those
guards resolved (kept or dropped, never left in), so no tree's series
carries a feature test, and MODULE_IMPORT_NS is spelled as the tree wants
it (a string since 6.13). Other preprocessor lines pass through untouched.
A tree whose KUnit lacks what the suites use (6.1) gets stand-ins,
kunit/tests/compat/kunit-<tree>.h, pasted after the includes: the file
stays one that builds in its patch, as a backport would.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Tuple

from tcpopt.core.errors import HarnessError
from tcpopt.layout import options

# Guard -> the first release that defines it.
GUARDS = {
    'OPTION_AO': options.AO.since,          # TCP-AO, commit 1e03d32bea8e
    'OPTION_ACCECN': options.ACCECN1.since,  # the AccECN option (RFC 9768)
}
# Before 6.13 MODULE_IMPORT_NS() took a bare identifier.
QUOTED_NAMESPACE_SINCE = (6, 13)
QUOTED_IMPORT = re.compile(r'MODULE_IMPORT_NS\("(\w+)"\)')
# Trees whose KUnit needs stand-ins, and where they go: after this line.
KUNIT_STANDINS = {(6, 1): 'kunit-6.1.h'}
COMPAT_DIR = 'compat'         # beside the suites, in kunit/tests/
STANDINS_AFTER = '#include "../tcp_options.h"\n'


DIRECTIVE = re.compile(r'^#\s*(ifdef|ifndef|if|else|elif|endif)\b\s*(\w*)')


def resolve_guards(text: str, version: Tuple[int, int]) -> str:
    """@text with every GUARDS conditional decided for @version; a guard
    with #elif, or an #if/#endif that does not pair, is an error."""
    out: List[str] = []
    # One entry per open conditional: None for one that is not ours, else
    # whether its current branch is kept.
    stack: List[Optional[bool]] = []
    dropped = False     # since the last line kept
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        match = DIRECTIVE.match(line)
        word, symbol = match.groups() if match else ('', '')
        if word in ('ifdef', 'ifndef') and symbol in GUARDS:
            defined = version >= GUARDS[symbol]
            stack.append(defined if word == 'ifdef' else not defined)
            continue
        if word in ('if', 'ifdef', 'ifndef'):
            stack.append(None)
        elif word in ('else', 'elif', 'endif') and not stack:
            raise HarnessError(f'line {number}: #{word} without #if')
        elif word == 'elif' and stack[-1] is not None:
            raise HarnessError(f'line {number}: #elif after a feature guard')
        elif word == 'else' and stack[-1] is not None:
            stack[-1] = not stack[-1]
            continue
        elif word == 'endif':
            if stack.pop() is not None:
                continue
        if any(keep is False for keep in stack):
            dropped = True
        elif not (dropped and out and is_blank(out[-1]) and is_blank(line)):
            # a dropped part between two blank lines leaves one
            out.append(line)
            dropped = False
    if stack:
        raise HarnessError('a feature guard is not closed')
    return ''.join(out)


def is_blank(line: str) -> bool:
    return not line.strip()


def add_standins(text: str, standins: Path) -> str:
    if STANDINS_AFTER not in text:
        raise HarnessError(f'no {STANDINS_AFTER.strip()} line to put '
                           f'{standins.name} after')
    return text.replace(STANDINS_AFTER,
                        STANDINS_AFTER + '\n' + standins.read_text(), 1)


def for_tree(text: str, version: Tuple[int, int],
             compat_dir: Optional[Path] = None) -> str:
    """An upstream test source as the tree of @version takes it;
    @compat_dir holds the KUnit stand-ins."""
    text = resolve_guards(text, version)
    if version < QUOTED_NAMESPACE_SINCE:
        text = QUOTED_IMPORT.sub(r'MODULE_IMPORT_NS(\1)', text)
    if version in KUNIT_STANDINS:
        if compat_dir is None:
            raise HarnessError(f'{version[0]}.{version[1]} needs KUnit '
                               'stand-ins: say where they are')
        text = add_standins(text, compat_dir / KUNIT_STANDINS[version])
    return text


def source_for_tree(path: Path, version: Tuple[int, int]) -> str:
    """The upstream test source at @path as the tree of @version takes it."""
    return for_tree(path.read_text(), version, path.parent / COMPAT_DIR)
