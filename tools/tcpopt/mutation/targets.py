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

# MPTCP's option code: it writes into the same 40 bytes, and sizes its
# options before SACK blocks get what is left.
MPTCP_FUNCTIONS = (
    'mptcp_write_options', 'mptcp_syn_options', 'mptcp_synack_options',
    'mptcp_established_options', 'mptcp_established_options_dss',
    'mptcp_established_options_add_addr',
    'mptcp_established_options_rm_addr',
    'mptcp_established_options_mp_prio',
    'mptcp_established_options_fastclose',
    'mptcp_established_options_rst', 'mptcp_established_options_mp_fail')

# Names --functions takes for a set of functions; a run of one writes
# its own report, docs/mutation/<tree>-<name>.md.
GROUPS: Dict[str, Tuple[str, ...]] = {'layout': LAYOUT_FUNCTIONS,
                                      'mptcp': MPTCP_FUNCTIONS}

# The functions mutated, by file. Helpers they call in tcp_output.c are
# listed too: what decides a layout or a size. A function a tree does not
# have (TCP-AO before 6.7, AccECN before 6.18) has no mutants there.
TARGETS: Dict[str, Tuple[str, ...]] = {
    'net/ipv4/tcp_output.c': (
        'tcp_options_write', 'tcp_syn_options', 'tcp_synack_options',
        'tcp_established_options', 'tcp_current_mss', 'tcp_sync_mss',
        '__tcp_mtu_to_mss', 'tcp_mtu_to_mss', 'tcp_fastopen_opt_space',
        'tcp_options_fit_accecn', 'tcp_accecn_option_beacon_check',
        *LAYOUT_FUNCTIONS, 'process_tcp_ao_options',
        'tcp_synack_options_combine_saving', 'tcp_advertise_mss'),
    'net/ipv4/tcp_input.c': ('tcp_parse_options',),
    'net/mptcp/options.c': MPTCP_FUNCTIONS,
}
# TCP's own option code, MPTCP's left out: the targets before MPTCP's
# joined them, and the AO writer and two helpers added with it.
GROUPS['tcp'] = TARGETS['net/ipv4/tcp_output.c'] + \
    TARGETS['net/ipv4/tcp_input.c']


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
    """@size mutants drawn in turn from each function (in an order the
    seed shuffles), so that a sample as large as the number of functions
    has one of every target; in source order."""
    if size is None or size >= len(mutants):
        return mutants
    rng = random.Random(seed)
    pools: Dict[str, List[int]] = {}
    for index, mutant in enumerate(mutants):
        pools.setdefault(mutant.function, []).append(index)
    order = list(pools)
    rng.shuffle(order)
    for name in order:
        rng.shuffle(pools[name])
    picked: List[int] = []
    while len(picked) < size:
        for name in order:
            if pools[name] and len(picked) < size:
                picked.append(pools[name].pop())
    return [mutants[i] for i in sorted(picked)]
