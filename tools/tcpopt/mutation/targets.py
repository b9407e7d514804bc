"""The functions mutated, and the mutants a run picks from them.

--functions names functions or groups of them, --ids single mutants,
--sample a seeded random subset; each is checked before any tree is
prepared.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from tcpopt.core.errors import UsageError
from tcpopt.core.settings import Settings
from tcpopt.mutation.operators import IDENT, Mutant, generate, tcpolen_twins

# The layout functions the upstream series splits out of the
# calculators (every tree), and the two helpers they share.
LAYOUT_FUNCTIONS = (
    'tcp_syn_options_layout', 'tcp_synack_options_layout',
    'tcp_established_options_start', 'tcp_established_options_finish',
    'tcp_options_header_delta', 'tcp_syn_common_layout',
    'tcp_key_option_layout')

# Names --functions takes for a set of functions; a run of one writes
# its own report, docs/mutation/<tree>-<name>.md.
GROUPS: Dict[str, Tuple[str, ...]] = {'layout': LAYOUT_FUNCTIONS}

# The functions mutated, by file. Helpers they call in tcp_output.c are
# listed too: what decides a layout or a size.
TARGETS: Dict[str, Tuple[str, ...]] = {
    'net/ipv4/tcp_output.c': (
        'tcp_options_write', 'tcp_syn_options', 'tcp_synack_options',
        'tcp_established_options', 'tcp_current_mss', 'tcp_sync_mss',
        '__tcp_mtu_to_mss', 'tcp_mtu_to_mss', 'tcp_fastopen_opt_space',
        'tcp_options_fit_accecn', 'tcp_accecn_option_beacon_check',
        *LAYOUT_FUNCTIONS),
    'net/ipv4/tcp_input.c': ('tcp_parse_options',),
}


def expand(functions: Optional[Sequence[str]]) -> Optional[List[str]]:
    """--functions with each group name replaced by its functions."""
    if functions is None:
        return None
    return [n for name in functions for n in GROUPS.get(name, (name,))]


def group_of(functions: Optional[Sequence[str]]) -> Optional[str]:
    """The group these functions are, exactly, or None."""
    for name, members in GROUPS.items():
        if functions and list(functions) == list(members):
            return name
    return None


def check_arguments(functions: Optional[Sequence[str]],
                    ids: Optional[Sequence[str]]) -> None:
    """--functions and --ids, checked before any tree is prepared: a
    name that is no target, or an id no mutant could have."""
    known = {n for names in TARGETS.values() for n in names}
    unknown = sorted(set(functions or ()) - known - set(GROUPS))
    if unknown:
        raise UsageError(f'--functions: no such target {", ".join(unknown)} '
                         f'(known: {", ".join(sorted(known))}; groups: '
                         f'{", ".join(GROUPS)})')
    malformed = [i for i in ids or () if not IDENT.fullmatch(i) or
                 IDENT.fullmatch(i).group('function') not in known]
    if malformed:
        raise UsageError(f'--ids: no such mutant {", ".join(malformed)} '
                         '(an id is a target function, "-" and 8 hex digits; '
                         './run.sh mutate --list shows them)')


def all_mutants(settings: Settings, tree: Path,
                functions: Optional[Sequence[str]] = None) -> List[Mutant]:
    twins = tcpolen_twins(tree)
    wanted = set(functions) if functions else None
    out = []
    for file, names in TARGETS.items():
        chosen = [n for n in names if wanted is None or n in wanted]
        if chosen:
            out += generate(file, (tree / file).read_text(), chosen, twins)
    if wanted:
        known = {n for names in TARGETS.values() for n in names}
        unknown = sorted(wanted - known)
        if unknown:
            raise UsageError(f'--functions: no such target '
                             f'{", ".join(unknown)} (known: '
                             f'{", ".join(sorted(known))})')
    return out


def select(mutants: List[Mutant], ids: Optional[Sequence[str]]
           ) -> List[Mutant]:
    """The mutants with these ids, or all; an unknown id is an error."""
    if not ids:
        return mutants
    known = {m.ident: m for m in mutants}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(f'--ids: no such mutant {", ".join(unknown)} '
                         '(./run.sh mutate --list shows them)')
    return [known[i] for i in ids]


def sample(mutants: List[Mutant], size: Optional[int],
           seed: int) -> List[Mutant]:
    if size is None or size >= len(mutants):
        return mutants
    picked = random.Random(seed).sample(range(len(mutants)), size)
    return [mutants[i] for i in sorted(picked)]
