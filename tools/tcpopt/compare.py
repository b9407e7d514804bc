"""Side by side: every case whose layout, size or MSS delta differs
between two trees, with the rule that explains the difference."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .ktap import Case, Run

# Differences the trees are known to have, and why (docs/trees.md).
REASON_AO = ('TCP-AO (RFC 5925) exists since 6.7: the row is skipped on '
             'the older tree')
REASON_MD5_MSS = ('since 6.7 an accepted socket\'s tcp_header_len counts '
                  'TS and TCP-AO, not MD5, so tcp_current_mss() takes the '
                  '20 MD5 bytes off every segment')
REASON_UNKNOWN = 'no known rule explains this difference: review it'


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


def _needs_ao(case: Optional[Case]) -> bool:
    if case is None:
        return False
    if case.inputs and case.inputs[0].get('ao_maclen'):
        return True
    # A sweep group has no inputs line; its skip reason names TCP-AO.
    return case.status == 'skip' and \
        any('TCP-AO' in d for d in case.diagnostics)


def reason(old: Optional[Case], new: Optional[Case]) -> str:
    if _needs_ao(old) or _needs_ao(new):
        return REASON_AO
    if old and new and old.layouts == new.layouts and \
            old.sizes == new.sizes and old.inputs and \
            old.inputs[0].get('md5') == '1':
        return REASON_MD5_MSS
    return REASON_UNKNOWN


def differences(old: Run, new: Run) -> List[Tuple[str, Optional[Case],
                                                  Optional[Case]]]:
    old_cases: Dict[str, Case] = old.by_name()
    new_cases: Dict[str, Case] = new.by_name()
    names = list(old_cases) + [n for n in new_cases if n not in old_cases]
    found = []
    for name in names:
        a, b = old_cases.get(name), new_cases.get(name)
        if _summary(a) != _summary(b) or len(a.layouts if a else []) != \
                len(b.layouts if b else []):
            found.append((name, a, b))
    return found


def render(old_tree: str, old: Run, new_tree: str, new: Run) -> str:
    rows = differences(old, new)
    lines = [f'# TCP option layouts: {old_tree} vs {new_tree}', '',
             f'Every KUnit case whose layout, size or MSS delta differs '
             f'between the two trees, from their last runs. Regenerate with '
             f'`./run.sh layouts --compare {old_tree} {new_tree}`.', '',
             f'| case | {old_tree} layout | size | mss delta | {new_tree} '
             f'layout | size | mss delta | reason |',
             '| --- | --- | ---: | ---: | --- | ---: | ---: | --- |']
    for name, a, b in rows:
        cells = [name, *_summary(a), *_summary(b), reason(a, b)]
        lines.append('| ' + ' | '.join(cells) + ' |')
    lines += ['', f'{len(rows)} cases differ.']
    return '\n'.join(lines) + '\n'
