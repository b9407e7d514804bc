"""Compare the kernel's '# sweep:' records with the reference model.

tcp_opt_sweep prints one record per input combination with the bytes the
tree's writer produced; tcpopt.log.ktap.parse() collects them into Run.sweep.
Each record is checked against tcpopt.layout.model, which is written from the
RFCs, so a disagreement points at the kernel or at the model, never at a
table both were copied from. The cross product the suite walks is known
per tree (6.12 with CONFIG_TCP_AO adds the TCP-AO groups), so
combinations the kernel never printed show up as missing, and records
outside the tree's cross product as unexpected.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple)

from tcpopt.layout import model
from tcpopt.layout.model import Inputs
from tcpopt.layout.options import Kind

# Mismatches and missing combinations listed before '... and N more'.
REPORT_LIMIT = 20


@dataclass(frozen=True)
class Mismatch:
    """A record whose size or bytes differ from the model's layout."""

    inputs: Inputs
    record: Dict[str, str]          # the record's own key=value pairs
    kernel_size: int                # the record's size=, may exceed 40
    kernel: bytes                   # at most 40: the kernel prints no more
    model: bytes
    first_difference: int           # first differing byte, or shorter length

    @property
    def size_differs(self) -> bool:
        return self.kernel_size != len(self.model)


@dataclass(frozen=True)
class Invalid:
    """A record the model cannot judge: malformed or outside its inputs."""

    record: Dict[str, str]
    reason: str


@dataclass(frozen=True)
class Duplicate:
    inputs: Inputs
    count: int


@dataclass
class SweepResult:
    total: int = 0                  # records, duplicates and invalid included
    matched: int = 0
    mismatches: List[Mismatch] = field(default_factory=list)
    invalid: List[Invalid] = field(default_factory=list)
    duplicates: List[Duplicate] = field(default_factory=list)
    missing: List[Inputs] = field(default_factory=list)
    # Valid records the cross product does not have (AO records judged as
    # a tree without TCP-AO, say): the model matched them, the suite
    # should not have printed them.
    unexpected: List[Inputs] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.matched == self.total and \
            not (self.duplicates or self.missing or self.unexpected)


def first_difference(a: bytes, b: bytes) -> int:
    """Index of the first byte that differs, or the shorter length."""
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def _kernel_output(record: Mapping[str, str]) -> Tuple[int, bytes]:
    """The record's size= and bytes=, checked against each other."""
    size_text = record.get('size')
    if size_text is None or not size_text.isdigit():
        raise ValueError(f'size={size_text}: expected a decimal number')
    size = int(size_text)
    try:
        data = bytes.fromhex(record.get('bytes', ''))
    except ValueError:
        raise ValueError(f'bytes={record.get("bytes")}: not hex') from None
    # The kernel prints min(size, 40) bytes, never more.
    if len(data) != min(size, model.MAX_OPTION_SPACE):
        raise ValueError(f'size={size} but {len(data)} bytes printed')
    return size, data


def _check(record: Mapping[str, str], inputs: Inputs,
           result: SweepResult) -> None:
    size, data = _kernel_output(record)
    expected = model.layout(inputs)
    if size == len(expected) and data == expected:
        result.matched += 1
        return
    result.mismatches.append(Mismatch(
        inputs=inputs, record=dict(record), kernel_size=size, kernel=data,
        model=expected, first_difference=first_difference(data, expected)))


def cross_product(kinds: Iterable[Kind] = ()) -> List[Inputs]:
    """The model's cross product with the groups of @kinds: those a tree
    writes (Settings.kinds) whose Kind.sweep names a group flag."""
    return model.cross_product(**{kind.sweep: True for kind in kinds
                                  if kind.sweep})


def compare(records: Sequence[Mapping[str, str]],
            expected: Optional[Sequence[Inputs]] = None,
            kinds: Iterable[Kind] = ()) -> SweepResult:
    """Judge every record against the combinations the tree should print.

    @expected defaults to cross_product(@kinds): pass the kinds the tree
    writes (Settings.kinds), so that TCP-AO's groups are due on a tree
    with CONFIG_TCP_AO, AccECN's on 7.3, MPTCP's with CONFIG_MPTCP.
    @kinds is ignored when @expected is given.
    """
    result = SweepResult(total=len(records))
    seen: Counter[Inputs] = Counter()
    for record in records:
        try:
            inputs = model.from_fields(record)
        except ValueError as error:
            result.invalid.append(Invalid(dict(record), str(error)))
            continue
        # Printed, even if garbled: invalid, not missing.
        seen[inputs] += 1
        try:
            _check(record, inputs, result)
        except ValueError as error:
            result.invalid.append(Invalid(dict(record), str(error)))
    result.duplicates = [Duplicate(inputs, count)
                         for inputs, count in seen.items() if count > 1]
    wanted = cross_product(kinds) if expected is None else expected
    result.missing = [inputs for inputs in wanted if inputs not in seen]
    wanted_set = set(wanted)
    result.unexpected = [inputs for inputs in seen
                         if inputs not in wanted_set]
    return result


def record_text(record: Mapping[str, str]) -> str:
    """The combination as the record gave it, without size= and bytes=."""
    return ' '.join(f'{key}={value}' for key, value in record.items()
                    if key not in model.OUTPUT_FIELDS)


def _byte_at(data: bytes, index: int) -> str:
    return f'0x{data[index]:02x}' if index < len(data) else 'none'


def _mismatch_block(m: Mismatch) -> List[str]:
    lines = [record_text(m.record),
             f'kernel: {m.kernel.hex()}',
             f'model:  {m.model.hex()}',
             f'first differing byte: {m.first_difference} '
             f'(kernel {_byte_at(m.kernel, m.first_difference)}, '
             f'model {_byte_at(m.model, m.first_difference)})']
    if m.size_differs:
        printed = '' if len(m.kernel) == m.kernel_size else \
            f' ({len(m.kernel)} printed)'
        lines.append(f'size: kernel {m.kernel_size}{printed}, '
                     f'model {len(m.model)}')
    return lines


def _more(count: int, what: str) -> List[str]:
    extra = count - REPORT_LIMIT
    return [f'... and {extra} more {what}'] if extra > 0 else []


def _section(items: Sequence[Any], header: str,
             line: Callable[[Any], str], what: str) -> List[str]:
    """A blank line, '<count> <header>', a line per item up to the
    limit, and how many more."""
    if not items:
        return []
    return (['', f'{len(items)} {header}'] +
            [line(item) for item in items[:REPORT_LIMIT]] +
            _more(len(items), what))


def format_report(result: SweepResult) -> str:
    """A summary line, then each mismatch, invalid record and gap."""
    lines = [f'{result.total} combinations, {result.matched} matched']
    for m in result.mismatches[:REPORT_LIMIT]:
        lines += [''] + _mismatch_block(m)
    lines += _more(len(result.mismatches), 'mismatches')
    lines += _section(result.invalid, 'records the model cannot judge:',
                      lambda bad: f'{record_text(bad.record)}: {bad.reason}',
                      'invalid records')
    lines += _section(result.duplicates,
                      'combinations printed more than once:',
                      lambda d: f'{model.to_text(d.inputs)} '
                                f'({d.count} records)',
                      'duplicates')
    lines += _section(result.unexpected, 'combinations printed are not in '
                      'the cross product of this tree:', model.to_text,
                      'unexpected combinations')
    lines += _section(result.missing, 'combinations of the cross product '
                      'were not printed:', model.to_text,
                      'missing combinations')
    return '\n'.join(lines)
