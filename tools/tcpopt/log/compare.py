"""Side by side: the cases whose layout differs between two or three trees.

Every case whose layout, size or MSS delta differs between the trees,
with the rule that explains the difference."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from tcpopt.log.ktap import Case, Run

# Differences the trees are known to have, and why (docs/trees.md).
REASON_AO = ('TCP-AO (RFC 5925) exists since 6.7: the row is skipped on '
             'the older tree')
REASON_ACCECN = ('AccECN (RFC 9768) exists since 6.18: the row is skipped '
                 'on the older trees')
REASON_MD5_MSS = ('since 6.7 an accepted socket\'s tcp_header_len counts '
                  'TS and TCP-AO, not MD5, so tcp_current_mss() takes the '
                  '20 MD5 bytes off every segment')
REASON_USEC_TS = ('microsecond TS values (tcp_usec_ts) exist since 6.7: '
                  'the case is skipped on the older tree')
REASON_ALLFRAG = ('RTAX_FEATURE_ALLFRAG (a fragment header on every IPv6 '
                  'packet, 8 bytes off the MSS) is unused from 6.7 on '
                  '(dst_allfrag() is gone): the case is skipped on the '
                  'newer trees')
REASON_UNKNOWN = 'no known rule explains this difference: review it'
# Rows that pin one commit, beyond their feature's own reason.
COMMIT_REASONS = {
    'accecn_est_md5_sack_no_room':
        'since 77a4fdf43c5e tcp_established_options() goes on past a SACK '
        'block that does not fit: AccECN takes the 8 bytes MD5 and TS '
        'leave; 6.12 returned there',
}

Cases = Sequence[Optional[Case]]


def _first(values: list) -> Optional[object]:
    return values[0] if values else None


def _summary(case: Optional[Case]) -> Tuple[str, str, str]:
    """(layout, size, mss delta) as table cells; '—' when absent."""
    if case is None:
        return ('absent', '—', '—')
    if case.status == 'skip':
        return ('skipped', '—', '—')
    if not case.layouts:
        # A sweep group or plain check: it prints no single layout.
        return (case.status, '—', '—')
    delta = _first(case.mss_deltas)
    return (f'`<{case.layouts[0]}>`', str(case.sizes[0]),
            '' if delta is None else str(delta))


def _needs(case: Optional[Case], key: str, skip_word: str) -> bool:
    """The case has input @key, or was skipped for want of @skip_word (a
    sweep group has no inputs line; its skip reason names the feature)."""
    if case is None:
        return False
    if case.inputs and case.inputs[0].get(key, '0') not in ('0', ''):
        return True
    return case.status == 'skip' and \
        any(skip_word in d for d in case.diagnostics)


def reason(*cases: Optional[Case]) -> str:
    """Why the same case differs between the trees, oldest first."""
    if any(_needs(c, 'accecn', 'AccECN') for c in cases):
        name = next(c.name for c in cases if c is not None)
        return '; '.join(filter(None, [REASON_ACCECN,
                                       COMMIT_REASONS.get(name)]))
    if any(_needs(c, 'ao_maclen', 'TCP-AO') for c in cases):
        return REASON_AO
    if any(_needs(c, 'usec_ts', 'microsecond') for c in cases):
        return REASON_USEC_TS
    if any(_needs(c, 'allfrag', 'RTAX_FEATURE_ALLFRAG') for c in cases):
        return REASON_ALLFRAG
    present = [c for c in cases if c is not None]
    if len(present) == len(cases) and present[0].inputs and \
            present[0].inputs[0].get('md5') == '1' and \
            all(c.layouts == present[0].layouts and c.sizes ==
                present[0].sizes for c in present):
        return REASON_MD5_MSS
    return REASON_UNKNOWN


def _shape(case: Optional[Case]) -> Tuple:
    return _summary(case) + (len(case.layouts if case else []),)


def differences(*runs: Run) -> List[Tuple[str, List[Optional[Case]]]]:
    """(name, the case on each tree) for every case that is not the same
    on all of @runs."""
    by_tree: List[Dict[str, Case]] = [run.by_name() for run in runs]
    names: List[str] = []
    for cases in by_tree:
        names += [name for name in cases if name not in names]
    found = []
    for name in names:
        row = [cases.get(name) for cases in by_tree]
        if len({_shape(case) for case in row}) > 1:
            found.append((name, row))
    return found


def render(trees: Sequence[str], runs: Sequence[Run]) -> str:
    rows = differences(*runs)
    head = ' | '.join(f'{tree} layout | size | mss delta' for tree in trees)
    align = ' | '.join('--- | ---: | ---:' for _ in trees)
    lines = [f'# TCP option layouts: {" vs ".join(trees)}', '',
             'Every KUnit case whose layout, size or MSS delta differs '
             'between the trees, from their last runs. Regenerate with '
             f'`./run.sh layouts --compare {" ".join(trees)}`.', '',
             f'| case | {head} | reason |', f'| --- | {align} | --- |']
    for name, cases in rows:
        cells = [name] + [cell for case in cases for cell in _summary(case)]
        lines.append('| ' + ' | '.join(cells + [reason(*cases)]) + ' |')
    lines += ['', f'{len(rows)} cases differ.']
    return '\n'.join(lines) + '\n'
