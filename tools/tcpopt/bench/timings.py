"""./run.sh bench: the times a developer waits, and the hot path's cost.

The developer-loop rows run the real ./run.sh as a subprocess, each timed
with time.monotonic(), so the numbers are what one sees at the prompt:
a cold work dir with an empty and with a warm ccache, a second run with
nothing changed, an edit of a kunit/ source and of tcp_output.c. Then
the built kernel is booted to its verdict under TCG and, when the probe
says it works, KVM; the tcp_opt_bench suite compares the pristine and
the patched tree (hotpath.py).

The bench never writes to the checkout: the kunit/ edit goes to a
throw-away copy under the work dir (TCPOPT_KUNIT_DIR points run.sh at it),
and the document to <work dir>/bench/performance.md.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

from tcpopt.bench import hotpath, kconfig_costs, table
from tcpopt.bench.table import Boots, Row
from tcpopt.core.errors import log as say
from tcpopt.core.fs import display, remove_tree
from tcpopt.core.settings import Settings
from tcpopt.log import ktap
from tcpopt.log.expected import expected_cases
from tcpopt.log.report import judge
from tcpopt.tree import accel, worktree
from tcpopt.tree.identity import kernel_version
from tcpopt.tree.kernel import interrupted_by, run_kunit

# Targets from the issue, in seconds, on the 2-core machine.
TARGET_WARM = 15
TARGET_EDIT = 25
TARGET_COLD_WARM_CCACHE = 180
BOOTS = 3
# After one SIGTERM, run.sh stops kunit.py, make and QEMU; then it is late.
STOP_WAIT = 60
QEMU_LINE = re.compile(r'^QEMU: (?P<accel>\w+) \((?P<reason>.*)\)$', re.M)
EDITED_SOURCE = 'tcp_options_test.c'
EDIT_MARK = './run.sh bench: a throw-away edit, undone at its end'

Runner = Callable[[List[str], Dict[str, str], Path], int]


def run_logged(argv: List[str], env: Dict[str, str], log: Path) -> int:
    """argv, its output in log. run.sh gets a session of its own, so an
    interrupt reaches it once, as SIGTERM from here: a second signal
    while it stops kunit.py would cut that short."""
    with open(log, 'w') as out:
        proc = subprocess.Popen(argv, env=env, stdout=out,
                                stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            return proc.wait()
        except BaseException:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_WAIT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            raise


@dataclass
class Timing:
    """One run of ./run.sh."""

    seconds: float
    status: int
    log: Path
    qemu: str = ''                  # its 'QEMU: ...' line, without 'QEMU: '
    hits: Optional[int] = None      # ccache, from CCACHE_STATSLOG
    misses: Optional[int] = None

    @property
    def ok(self) -> bool:
        return self.status == 0

    def ccache(self) -> str:
        if self.hits is None or self.misses is None:
            return ''
        total = self.hits + self.misses
        share = f' ({100 * self.hits / total:.0f} % hits)' if total else ''
        return f'ccache {self.hits} hits, {self.misses} misses{share}'


def ccache_counts(stats: Path) -> tuple[Optional[int], Optional[int]]:
    """Hits and misses from a CCACHE_STATSLOG file: one counter a line."""
    try:
        lines = stats.read_text().split()
    except OSError:
        return None, None
    hits = lines.count('direct_cache_hit') + \
        lines.count('preprocessed_cache_hit')
    return hits, lines.count('cache_miss')


def qemu_line(log: Path) -> str:
    try:
        match = QEMU_LINE.search(log.read_text(errors='replace'))
    except OSError:
        return ''
    return f'{match.group("accel")} ({match.group("reason")})' if match \
        else ''


def shell_words(env: Dict[str, str], argv: List[str]) -> str:
    """The command as one would type it."""
    return ' '.join([f'{key}={shlex.quote(value)}'
                     for key, value in env.items()] +
                    [shlex.quote(arg) for arg in argv])


@dataclass
class Bench:
    """Where the bench runs, and how it runs ./run.sh (tests fake it)."""

    settings: Settings
    runner: Runner = run_logged
    clock: Callable[[], float] = time.monotonic

    @property
    def root(self) -> Path:
        return self.settings.work_dir / 'bench'

    @property
    def cold_dir(self) -> Path:
        return self.root / 'cold'

    def argv(self) -> List[str]:
        return ['./run.sh', '--tree', self.settings.tree]

    def run_sh(self, name: str, **env: str) -> Timing:
        """./run.sh --tree T with env added, timed, its output logged."""
        log = self.root / 'logs' / f'{self.settings.tree}-{name}.log'
        log.parent.mkdir(parents=True, exist_ok=True)
        stats = log.with_suffix('.ccache')
        stats.unlink(missing_ok=True)
        full = self.settings.child_env(**env, CCACHE_STATSLOG=str(stats))
        argv = [str(self.settings.repo / 'run.sh')] + self.argv()[1:]
        say(f'{name}: {shell_words(env, self.argv())} (output in {log})')
        started = self.clock()
        status = self.runner(argv, full, log)
        seconds = self.clock() - started
        hits, misses = ccache_counts(stats)
        timing = Timing(seconds, status, log, qemu_line(log), hits, misses)
        say(f'{name}: {seconds:.1f} s' +
            ('' if timing.ok else f', exit {status}: see {log}'))
        return timing


def row(what: str, how: str, timing: Timing,
        target: Optional[float] = None, *notes: str) -> Row:
    extra = [note for note in notes if note]
    if timing.ccache():
        extra.append(timing.ccache())
    if not timing.ok:
        extra.append(f'FAILED: exit {timing.status}, see {timing.log}')
    return Row(what, how, timing.seconds, target, extra, not timing.ok)


def warm_rows(bench: Bench) -> List[Row]:
    """Two runs in the main work dir; the second is the one timed."""
    first = bench.run_sh('warm-first')
    second = bench.run_sh('warm')
    command = shell_words({}, bench.argv())
    return [row('bring the main work dir up to date', f'`{command}`', first),
            row('warm, no change', f'`{command}` again, nothing edited',
                second, TARGET_WARM,
                f'QEMU: {second.qemu}' if second.qemu else '')]


def cold_row(bench: Bench, warm_ccache: bool) -> Row:
    """A fresh work dir: extract, patch, build, boot, verdict."""
    cold = bench.cold_dir
    ccache = bench.settings.ccache_dir if warm_ccache else cold / 'ccache'
    env = {'TCPOPT_WORK_DIR': str(cold), 'CCACHE_DIR': str(ccache)}
    remove_tree(cold)
    try:
        timing = bench.run_sh('cold-warm-ccache' if warm_ccache
                              else 'cold-empty-ccache', **env)
    finally:
        remove_tree(cold)      # a whole kernel tree and build
    how = f'`{shell_words(env, bench.argv())}`, work dir removed first'
    if warm_ccache:
        return row('cold, warm ccache', how + ', the main ccache', timing,
                   TARGET_COLD_WARM_CCACHE)
    return row('cold, empty ccache', how + ', an empty ccache', timing)


# --- throw-away edits --------------------------------------------------------

def edit_text(nonce: int) -> str:
    """A line of code, not a comment: the preprocessor drops comments, and
    ccache would then serve the old object instead of a compile."""
    return (f'/* {EDIT_MARK} */\n'
            f'static const int tcpopt_bench_edit_{nonce} __maybe_unused;\n')


def append_edit(path: Path) -> bytes:
    """Append a line of code to path; return the bytes it had before."""
    original = path.read_bytes()
    path.write_bytes(original + edit_text(time.time_ns()).encode())
    return original


@contextmanager
def kunit_copy(bench: Bench) -> Iterator[Path]:
    """A throw-away copy of kunit/ under the work dir. The bench edits the
    copy, never the checkout: a killed bench leaves nothing to undo, and
    the next plain run.sh copies the checkout's bytes back into src/."""
    bench.root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix='kunit-', dir=bench.root) as tmp:
        copy = Path(tmp) / 'kunit'
        shutil.copytree(bench.settings.kunit_dir, copy)
        yield copy


def not_measured(what: str, how: str, path: Path,
                 target: Optional[float]) -> Row:
    return Row(what, how, None, target, [f'not measured: no {path}'],
               failed=True)


def undone_row(bench: Bench, name: str, what: str, how: str,
               timing: Timing, target: Optional[float]) -> Row:
    """The edit's row; run.sh once more first, back on the unedited
    sources, so the next measurement starts clean."""
    undo = bench.run_sh(f'{name}-undo')
    result = row(what, how, timing, target,
                 f'the run after undoing it: {undo.seconds:.1f} s')
    result.failed = result.failed or not undo.ok
    return result


def kunit_edit_row(bench: Bench) -> Row:
    what = 'edit loop: a kunit/ test source'
    how = (f'a line of code appended to a copy of kunit/{EDITED_SOURCE}, '
           f'then `TCPOPT_KUNIT_DIR=<copy> {shell_words({}, bench.argv())}`')
    if not (bench.settings.kunit_dir / EDITED_SOURCE).is_file():
        return not_measured(what, how, bench.settings.kunit_dir /
                            EDITED_SOURCE, TARGET_EDIT)
    with kunit_copy(bench) as copy:
        append_edit(copy / EDITED_SOURCE)
        timing = bench.run_sh('edit-kunit', TCPOPT_KUNIT_DIR=str(copy))
    return undone_row(bench, 'edit-kunit', what, how, timing, TARGET_EDIT)


def output_edit_row(bench: Bench) -> Row:
    """tcp_output.c of the work tree (not tracked); put back in a finally
    block, with a new mtime so make rebuilds the object from it."""
    path = bench.settings.source / 'net/ipv4/tcp_output.c'
    what = 'edit loop: net/ipv4/tcp_output.c'
    how = (f'a line of code appended to {display(path)}, then '
           f'`{shell_words({}, bench.argv())}`')
    if not path.is_file():
        return not_measured(what, how, path, None)
    original = append_edit(path)
    try:
        timing = bench.run_sh('edit-tcp-output')
    finally:
        path.write_bytes(original)
    return undone_row(bench, 'edit-tcp-output', what, how, timing, None)


def edit_rows(bench: Bench) -> List[Row]:
    return [kunit_edit_row(bench), output_edit_row(bench)]


# --- QEMU boot to verdict ----------------------------------------------------

def boot_once(settings: Settings, chosen: accel.Accel, log: Path,
              run: Callable = run_kunit) -> bool:
    """kunit.py exec on the built kernel; True if the verdict is a pass."""
    with open(log, 'w') as out:
        status, console = run(settings, settings.source, action='exec',
                              accel=chosen, output=out)
    if status or not console.is_file():
        return False
    due = expected_cases(settings.kunit_dir, settings.upstream_suites)
    return judge(ktap.read(console), due).ok


def boots_under(bench: Bench, chosen: accel.Accel, runs: int = BOOTS,
                run: Callable = run_kunit) -> Boots:
    result = Boots(chosen.name)
    for number in range(1, runs + 1):
        log = bench.root / 'logs' / \
            f'{bench.settings.tree}-boot-{chosen.name}-{number}.log'
        log.parent.mkdir(parents=True, exist_ok=True)
        started = bench.clock()
        ok = boot_once(bench.settings, chosen, log, run)
        result.seconds.append(bench.clock() - started)
        result.failures += not ok
        say(f'boot {chosen.name} {number}/{runs}: '
            f'{result.seconds[-1]:.1f} s{"" if ok else f", FAILED: {log}"}')
    return result


def boot_rows(bench: Bench, run: Callable = run_kunit,
              check: Callable = accel.kvm_check) -> List[Boots]:
    """TCG always; KVM when /dev/kvm opens and the probe boot works."""
    build = bench.settings.build_dir
    tcg = accel.Accel('tcg', 'bench')
    results = [boots_under(bench, tcg, run=run)]
    probe, _ = check(build)
    if probe.ok:
        results.append(boots_under(bench, accel.Accel('kvm', probe.reason),
                                   run=run))
    else:
        results.append(Boots('kvm', unavailable=probe.reason))
    return results


# --- the whole bench ---------------------------------------------------------

def main(settings: Settings, argv: List[str], costs: bool = False,
         runner: Runner = run_logged, doc: Optional[Path] = None) -> int:
    """Every measurement in one go; the table, then the document, in the
    work dir: docs/performance.md is a copy of it, made by hand."""
    bench = Bench(settings, runner)
    doc = doc or bench.root / 'performance.md'
    command = shell_words({}, ['./run.sh'] + argv)
    machine = table.machine(settings.repo)
    with interrupted_by(signal.SIGHUP, signal.SIGTERM):
        report = measure(bench, command, machine, costs)
    print(table.terminal(report))
    table.write(doc, table.render(report))
    say(f'wrote {doc} (cp it to docs/performance.md to commit it)')
    return 0 if report.ok else 1


def measure(bench: Bench, command: str, machine: Dict[str, str],
            costs: bool) -> table.Report:
    settings = bench.settings
    rows = warm_rows(bench)
    rows += [cold_row(bench, warm_ccache=False),
             cold_row(bench, warm_ccache=True)]
    rows += edit_rows(bench)
    # run.sh holds the tree's lock itself; the bench's own boots and
    # builds take it here, between the runs, never around one.
    with worktree.locked(settings):
        version = kernel_version(settings.source)
        boots = boot_rows(bench)
        chosen = accel.choose(settings.build_dir)
        worktree.ensure_pristine(settings)
        hot = hotpath.measure(settings, chosen)
        cost_rows = kconfig_costs.measure(settings, settings.source,
                                          chosen) if costs else []
    return table.Report(command=command, machine=machine,
                        tree=f'{settings.package} {version}',
                        qemu=chosen.line(), rows=rows, boots=boots,
                        hot=hot, costs=cost_rows)
