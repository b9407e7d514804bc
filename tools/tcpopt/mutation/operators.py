"""Mutants of C source: the operators, one change at one place of a function.

The functions are found by their kernel-style definitions; comments and
preprocessor lines are never mutated. The operators and what each one
changes are listed in tcpopt.mutation.generated's docstring. A mutant's
id hashes its function, kind and text, not its line, so that it keys
results.json across runs and edits elsewhere in the file.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

RELATIONAL = {'<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=',
              '!=': '=='}
ARITHMETIC = {'+': '-', '-': '+', '+=': '-=', '-=': '+=', '<<': '>>',
              '>>': '<<'}
LOGICAL = {'&&': '||', '||': '&&'}
BITWISE = {'&': '|', '|': '&', '|=': '&=', '&=': '|='}
# Longest first, so that '<<=' is never read as '<<' and '='.
TOKEN = re.compile(r'<<=|>>=|->|\+\+|--|&&|\|\||<<|>>|<=|>=|==|!=|\+=|-=|'
                   r'\|=|&=|[-+<>&|]|\b0[xX][0-9a-fA-F]+\b|\b\d+[uUlL]*\b|'
                   r'\bTCPOLEN_\w+|[A-Za-z_]\w*|[)\]]')
DECLARATION = re.compile(r'^\s*(?:const\s+|static\s+|unsigned\s+|struct\s+|'
                         r'enum\s+)*(?:u8|u16|u32|u64|int|bool|__be32|__be16|'
                         r'__u8|__u16|__u32|long|char|size_t|[a-z_]+_t|'
                         r'tcp_\w+|inet_\w+|sock|sk_buff|mptcp_\w+)\b[\s*]')


# Where the TCPOLEN_ constants are defined; MPTCP's in its own header.
LENGTH_HEADERS = ('include/net/tcp.h', 'include/uapi/linux/tcp.h',
                  'include/net/mptcp.h', 'net/mptcp/protocol.h')
MPTCP_LENGTH = 'TCPOLEN_MPTCP_'

# A TCPOLEN_ constant's possible slips: (operator kind, other constant).
Swaps = Dict[str, Tuple[Tuple[str, str], ...]]


@dataclass
class Mutant:
    file: str
    function: str
    line: int               # first line replaced, 1-based
    count: int              # lines replaced
    kind: str
    before: str             # the replaced lines
    after: str              # what replaces them
    occurrence: int = 0     # same change, same text: which one

    @property
    def ident(self) -> str:
        digest = hashlib.sha1('\0'.join(
            (self.file, self.function, self.kind, self.before, self.after,
             str(self.occurrence))).encode()).hexdigest()
        return f'{self.function}-{digest[:8]}'

    def describe(self) -> str:
        old = ' '.join(self.before.split())
        new = ' '.join(self.after.split())
        if self.kind == 'delete':
            new = '(deleted)'
        return f'{old}  ->  {new}'


# A mutant's id: its function, '-', 8 hex digits (Mutant.ident).
IDENT = re.compile(r'(?P<function>\w+)-[0-9a-f]{8}')


# --- finding the functions -------------------------------------------------

def function_span(lines: Sequence[str],
                  name: str) -> Optional[Tuple[int, int]]:
    """0-based first and last line of @name's body braces, or None.
    A definition starts at column 0 and names the function before '(',
    on the line of its type or, kernel style, on a line of its own.
    """
    head = re.compile(r'^(?:[A-Za-z_].*\b)?' + re.escape(name) + r'\(')
    for i, line in enumerate(lines):
        if not head.match(line) or line.rstrip().endswith(';'):
            continue
        j = i
        while j < len(lines) and not lines[j].startswith('{'):
            if lines[j].rstrip().endswith(';'):
                break           # a prototype after all
            j += 1
        if j >= len(lines) or not lines[j].startswith('{'):
            continue
        for k in range(j + 1, len(lines)):
            if lines[k].startswith('}'):
                return j, k
    return None


def code_lines(lines: Sequence[str], start: int, end: int) -> Iterator[int]:
    """Body lines that hold code: no comment, no preprocessor line."""
    in_comment = False
    for i in range(start + 1, end):
        text = lines[i].strip()
        if in_comment:
            in_comment = '*/' not in text
            continue
        if text.startswith('/*'):
            in_comment = '*/' not in text
            continue
        if not text or text.startswith(('#', '//')):
            continue
        yield i


def strip_comment(line: str) -> str:
    """The line with a trailing /* ... */ blanked, same length."""
    at = line.find('/*')
    return line if at < 0 else line[:at] + ' ' * (len(line) - at)


# --- the mutation operators ------------------------------------------------

def is_binary(code: str, at: int) -> bool:
    """Whether the operator at @at follows an operand (else it is unary)."""
    before = code[:at].rstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in ')]_')


def token_mutants(code: str, twins: Swaps) -> Iterator[
        Tuple[str, int, int, str]]:
    """(kind, start, end, replacement) for each token of one line."""
    for match in TOKEN.finditer(code):
        tok, start, end = match.group(), match.start(), match.end()
        if tok in RELATIONAL:
            yield 'relational', start, end, RELATIONAL[tok]
        elif tok in LOGICAL:
            yield 'logical', start, end, LOGICAL[tok]
        elif tok in ('+', '-', '&', '|') and not is_binary(code, start):
            continue
        elif tok in ARITHMETIC:
            yield 'arithmetic', start, end, ARITHMETIC[tok]
        elif tok in BITWISE:
            yield 'bitwise', start, end, BITWISE[tok]
        elif re.fullmatch(r'0[xX][0-9a-fA-F]+|\d+[uUlL]*', tok):
            digits = re.match(r'0[xX][0-9a-fA-F]+|\d+', tok).group()
            value = int(digits, 0)
            suffix = tok[len(digits):]
            yield 'constant', start, end, f'{value + 1}{suffix}'
            if value > 0:
                yield 'constant', start, end, f'{value - 1}{suffix}'
        else:
            for kind, other in twins.get(tok, ()):
                yield kind, start, end, other


def statement_end(lines: Sequence[str], i: int, end: int) -> Optional[int]:
    """The line that ends the statement starting at @i, if it is one
    statement with balanced parentheses and no block."""
    depth = 0
    for k in range(i, end):
        code = strip_comment(lines[k])
        if '{' in code or '}' in code:
            return None
        depth += code.count('(') - code.count(')')
        if code.rstrip().endswith(';') and depth == 0:
            return k
    return None


def is_expression_statement(first: str) -> bool:
    """An expression statement, or a bare 'return;': deleting one is how
    a guard like 'if (opsize > length) return;' goes missing."""
    text = first.strip()
    if text.startswith('return;'):
        return True
    return not (DECLARATION.match(first) or text.startswith(
        ('return', 'break', 'continue', 'goto', 'if', 'else', 'for',
         'while', 'do', 'case', 'default', 'switch')))


def starts_statement(lines: Sequence[str], i: int) -> bool:
    """Whether line @i starts a statement (the previous code line ended
    one or opened or closed a block, or is a label)."""
    k = i - 1
    while k >= 0 and (not strip_comment(lines[k]).strip() or
                      lines[k].lstrip().startswith('#')):
        k -= 1
    prev = strip_comment(lines[k]).rstrip() if k >= 0 else '{'
    return prev.endswith((';', '{', '}', ':')) or \
        re.match(r'^\s*(?:else|if \(.*\)|for \(.*\)|while \(.*\))\s*$',
                 prev) is not None


def generate(file: str, text: str, functions: Sequence[str],
             twins: Swaps) -> List[Mutant]:
    """Every mutant of @functions in @text, in source order."""
    lines = text.split('\n')
    out: List[Mutant] = []
    for name in functions:
        span = function_span(lines, name)
        if span is None:
            continue            # not in this tree (AccECN before 6.18)
        start, end = span
        body = list(code_lines(lines, start, end))
        for i in body:
            out += line_mutants(file, name, lines, i, twins)
            out += statement_mutants(file, name, lines, i, end)
    seen: Dict[Tuple[str, str, str, str], int] = {}
    for mutant in out:
        key = (mutant.function, mutant.kind, mutant.before, mutant.after)
        mutant.occurrence = seen.get(key, 0)
        seen[key] = mutant.occurrence + 1
    return out


def line_mutants(file: str, name: str, lines: Sequence[str], i: int,
                 twins: Swaps) -> List[Mutant]:
    line = lines[i]
    code = strip_comment(line)
    out = []
    for kind, s, e, new in token_mutants(code, twins):
        out.append(Mutant(file, name, i + 1, 1, kind, line,
                          line[:s] + new + line[e:]))
    cond = re.match(r'^(\s*(?:\} else )?if \()(.*)(\)\s*\{?\s*)$', code)
    if cond and cond.group(2).count('(') == cond.group(2).count(')'):
        out.append(Mutant(file, name, i + 1, 1, 'if-true', line,
                          cond.group(1) + '1' + cond.group(3).rstrip()))
    return out


def statement_mutants(file: str, name: str, lines: Sequence[str], i: int,
                      end: int) -> List[Mutant]:
    if not starts_statement(lines, i) or \
            not is_expression_statement(lines[i]):
        return []
    last = statement_end(lines, i, end)
    if last is None:
        return []
    before = '\n'.join(lines[i:last + 1])
    # An empty statement keeps an unbraced if's body an if's body.
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    out = [Mutant(file, name, i + 1, last - i + 1, 'delete', before,
                  indent + ';')]
    first = write_unit(lines, i, end)
    second = write_unit(lines, first[0] + 1, end) if first else None
    if first and second and first[1] == second[1]:
        one = '\n'.join(lines[i:first[0] + 1])
        two = '\n'.join(lines[first[0] + 1:second[0] + 1])
        out.append(Mutant(file, name, i + 1, second[0] - i + 1, 'swap',
                          one + '\n' + two, two + '\n' + one))
    return out


# A write of option bytes through a pointer: '*ptr++ = x;', or
# 'put_unaligned_be32(x, ptr);' and the 'ptr += n;' that may follow it.
POINTER_STORE = re.compile(r'^\s*\*(\w+)\+\+ =')
UNALIGNED_STORE = re.compile(r'^\s*put_unaligned_be(?:16|32|64)\(')
LAST_ARGUMENT = re.compile(r',\s*(\w+)\);\s*$')


def write_unit(lines: Sequence[str], i: int,
               end: int) -> Optional[Tuple[int, str]]:
    """The last line of the option write that starts at line @i, and the
    pointer it writes through; None if line @i starts no such write."""
    if i >= end:
        return None
    store = POINTER_STORE.match(lines[i])
    if not store and not UNALIGNED_STORE.match(lines[i]):
        return None
    last = statement_end(lines, i, end)
    if last is None:
        return None
    if store:
        return last, store.group(1)
    target = LAST_ARGUMENT.search(strip_comment(lines[last]))
    if target is None:
        return None
    pointer = target.group(1)
    step = last + 1
    if step < end and re.fullmatch(rf'\s*{pointer} \+= \w+;\s*',
                                   lines[step]):
        last = step
    return last, pointer


def defined_lengths(tree: Path) -> List[str]:
    """The TCPOLEN_ constants @tree defines, in the order of definition."""
    names: List[str] = []
    for header in LENGTH_HEADERS:
        path = tree / header
        if path.is_file():
            names += [n for n in re.findall(
                r'#define\s+(TCPOLEN_\w+)', path.read_text(errors='replace'))
                if n not in names]
    return names


def mptcp_neighbours(one: str, two: str) -> bool:
    """Two TCPOLEN_MPTCP_ lengths of one family (the word after the
    prefix) one slip apart: a word more (_PRIO, _PRIO_ALIGN; _ADD_ADDR,
    _ADD_ADDR_PORT, _ADD_ADDR_BASE) or one word's digits (_DSS_ACK32,
    _DSS_ACK64; _ADD_ADDR, _ADD_ADDR6)."""
    a = one[len(MPTCP_LENGTH):].split('_')
    b = two[len(MPTCP_LENGTH):].split('_')
    if a[0] != b[0] or a == b:
        return False
    if abs(len(a) - len(b)) == 1:
        short, long_ = sorted((a, b), key=len)
        return any(long_[:k] + long_[k + 1:] == short
                   for k in range(1, len(long_)))
    differing = [(x, y) for x, y in zip(a, b) if x != y]
    return len(a) == len(b) and len(differing) == 1 and \
        re.sub(r'\d', '', differing[0][0]) == \
        re.sub(r'\d', '', differing[0][1])


def tcpolen_twins(tree: Path) -> Swaps:
    """What each TCPOLEN_ constant a slip could turn into: TCPOLEN_X and
    TCPOLEN_X_ALIGNED ('twin'), and a TCPOLEN_MPTCP_ length and its
    neighbours in its family ('family')."""
    names = defined_lengths(tree)
    swaps: Dict[str, List[Tuple[str, str]]] = {}
    for name in names:
        plain = name[:-len('_ALIGNED')]
        if name.endswith('_ALIGNED') and plain in names:
            swaps.setdefault(name, []).append(('twin', plain))
            swaps.setdefault(plain, []).append(('twin', name))
    mptcp = [n for n in names if n.startswith(MPTCP_LENGTH)]
    for name in mptcp:
        for other in mptcp:
            if mptcp_neighbours(name, other):
                swaps.setdefault(name, []).append(('family', other))
    return {name: tuple(found) for name, found in swaps.items()}
