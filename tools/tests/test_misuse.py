"""run.sh under misuse: the real entry point, in a sandbox, per situation.

Every test runs ./run.sh as a subprocess with
  - a temporary TCPOPT_WORK_DIR and HOME (never ~/.cache/tcpopt-kunit),
  - TCPOPT_TARBALL: a small linux-source-6.1 tarball built here, holding a
    Makefile, the pre-images of net/ipv4/ files the real 6.1 series
    patches (at the line numbers its hunks name), and data/misuse/
    fake_kunit.py as tools/testing/kunit/kunit.py, whose behaviour
    (pass, slow, hang, panic) FAKE_KUNIT_MODE picks,
  - TCPOPT_NO_INSTALL=1 and a PATH of its own: a fake dpkg-query
    (data/misuse/dpkg-query) and links to python3, tar, xz, cp, patch and
    dirname, so that apt-get is out of reach,
and checks the one line the user sees and the exit status. docs/faults.md
lists the messages. No kernel is built and no QEMU runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from tcpopt.core.settings import REPO, Settings
from tcpopt.log.expected import expected_cases
from tcpopt.series import seriesfile
from tcpopt.tree import kernel

DATA = Path(__file__).resolve().parent / 'data' / 'misuse'
TREE = '6.1'
PACKAGE = 'linux-source-6.1'
PATCH_DIR = REPO / 'kernel-patches' / TREE
FIRST_PATCH = 'kernel-patches/6.1/upstream/' \
    '0001-tcp-move-the-option-layout-definitions-to-tcp_options.h.patch'
# The cases a default run of the tree expects: the harness's and, the
# series having the upstream layer, the upstream suites' as 6.1 gets them.
EXPECTED = expected_cases(
    REPO / 'kunit',
    Settings(tree=TREE, work_dir=Path('/nonexistent')).upstream_suites
    or False)
KERNEL = 'arch/x86/boot/bzImage'     # the fake kunit.py's "kernel"
INTERRUPTED = ('run.sh: interrupted; the next run picks up where this one '
               'stopped')
TOOLS = ('python3', 'tar', 'xz', 'cp', 'patch', 'dirname')
PAGE = 4096

# A line of tcp_output.c that a newer kernel "changed": hunk #2 of the
# first patch removes it (to tcp_options.h), so that hunk no longer
# applies.
CHANGED_LINE = '#define OPTION_SACK_ADVERTISE\tBIT(0)'
HUNK = re.compile(r'^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@')

FIXTURES: Dict[str, Path] = {}


# --- the fake kernel tree ----------------------------------------------------

# Per file: (old start, new start, new length, old lines) per hunk.
Hunks = Dict[str, List[Tuple[int, int, int, List[str]]]]


def parse_hunks(patch: Path) -> Hunks:
    """The hunks of a unified diff, with the lines each expects."""
    hunks: Hunks = {}
    name = ''
    lines = patch.read_text().splitlines()
    for index, line in enumerate(lines):
        if line.startswith('+++ b/'):
            name = line[len('+++ b/'):]
            continue
        match = HUNK.match(line)
        if not match:
            continue
        old_len = int(match.group(2) or 1)
        new_len = int(match.group(4) or 1)
        old: List[str] = []
        seen_old = seen_new = 0
        for body in lines[index + 1:]:
            if seen_old >= old_len and seen_new >= new_len:
                break
            if body[:1] in (' ', ''):
                old.append(body[1:])
                seen_old += 1
                seen_new += 1
            elif body[:1] == '-':
                old.append(body[1:])
                seen_old += 1
            elif body[:1] == '+':
                seen_new += 1
        hunks.setdefault(name, []).append(
            (int(match.group(1)), int(match.group(3)), new_len, old))
    return hunks


def pristine_files() -> Dict[str, List[str]]:
    """Files on which the real series applies exactly, blank lines elsewhere.

    A later patch's line numbers count the earlier patches' lines: map them
    back through every earlier hunk that ends before them.
    """
    per_patch = [parse_hunks(p) for p in seriesfile.read_series(PATCH_DIR)]
    # Files the series creates (a hunk at old line 0) are not pristine.
    created = {name for hunks in per_patch for name, file_hunks in
               hunks.items() if any(h[0] == 0 for h in file_hunks)}
    placed: Dict[str, List[Tuple[int, List[str]]]] = {}
    for number, hunks in enumerate(per_patch):
        for name, file_hunks in hunks.items():
            if name in created:
                continue
            for start, _, _, old in file_hunks:
                for earlier in reversed(per_patch[:number]):
                    start -= sum(new_len - len(prev_old)
                                 for _, new, new_len, prev_old
                                 in earlier.get(name, [])
                                 if new + new_len <= start)
                placed.setdefault(name, []).append((start, old))
    files = {}
    for name, pieces in placed.items():
        lines: List[str] = []
        for start, old in sorted(pieces, key=lambda piece: piece[0]):
            if len(lines) >= start:
                # Context an earlier patch added (the Kconfig entries each
                # test patch appends after the last): not pristine.
                continue
            lines += [''] * (start - 1 - len(lines)) + old
        files[name] = lines
    return files


def make_tarball(root: Path, version: str, changed: bool = False) -> Path:
    """linux-source-<tree>.tar.xz of a fake tree at this version."""
    major, minor, sub = version.split('.')
    top = f'linux-source-{major}.{minor}'
    tree = root / version / top
    changes = 0
    for name, lines in pristine_files().items():
        text = '\n'.join(lines) + '\n'
        if changed:
            changes += text.count(CHANGED_LINE)
            text = text.replace(CHANGED_LINE, CHANGED_LINE + ' /* v2 */')
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    if changed and changes != 1:
        raise AssertionError(f'{CHANGED_LINE!r} is in the fake tree '
                             f'{changes} times, not once')
    (tree / 'Makefile').write_text(
        f'# SPDX-License-Identifier: GPL-2.0\nVERSION = {major}\n'
        f'PATCHLEVEL = {minor}\nSUBLEVEL = {sub}\nEXTRAVERSION =\n'
        'NAME = Fake Tree for test_misuse\n')
    kunit = tree / 'tools/testing/kunit/kunit.py'
    kunit.parent.mkdir(parents=True)
    shutil.copy(DATA / 'fake_kunit.py', kunit)
    tarball = root / version / f'{top}.tar.xz'
    subprocess.run(['tar', '-cJf', str(tarball), '-C', str(tree.parent), top],
                   check=True)
    return tarball


def pass_console(path: Path) -> Path:
    """A complete KTAP log with every case the tree expects, passing:
    kunit/*.c's and the upstream suites' (kunit/tests/)."""
    names = EXPECTED
    lines = ['KTAP version 1', '1..1', '    KTAP version 1',
             '    # Subtest: tcp_opt_fake', f'    1..{len(names)}']
    lines += [f'    ok {i} {name}' for i, name in enumerate(names, 1)]
    lines += [f'# tcp_opt_fake: pass:{len(names)} fail:0 skip:0 '
              f'total:{len(names)}', 'ok 1 tcp_opt_fake']
    path.write_text('\n'.join(lines) + '\n')
    return path


def tree_pages(version: str) -> int:
    """tmpfs pages one extracted copy takes (directories take none)."""
    return sum(-(-path.stat().st_size // PAGE)
               for path in (FIXTURES['root'] / version).rglob('*')
               if path.is_file() and not path.name.endswith('.tar.xz'))


def setUpModule() -> None:
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    if missing:
        raise unittest.SkipTest(f'needs {" ".join(missing)}')
    root = Path(tempfile.mkdtemp(prefix='tcpopt-misuse-'))
    FIXTURES['root'] = root
    FIXTURES['6.1.192'] = make_tarball(root, '6.1.192')
    FIXTURES['6.1.90'] = make_tarball(root, '6.1.90')
    FIXTURES['6.1.200'] = make_tarball(root, '6.1.200', changed=True)
    FIXTURES['6.12.9'] = make_tarball(root, '6.12.9')
    FIXTURES['pass'] = pass_console(root / 'console-pass.log')


def tearDownModule() -> None:
    if 'root' in FIXTURES:
        shutil.rmtree(FIXTURES['root'], ignore_errors=True)


# --- the sandbox -------------------------------------------------------------

def gone(pid: int) -> bool:
    """No such process, or only a zombie awaiting its reaper."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1]
    except OSError:
        return True
    return state.split()[0] in ('Z', 'X')


def default_sigint() -> None:
    """A terminal's Ctrl-C, even when the tests themselves run in the
    background: a shell starts background jobs with SIGINT ignored, and
    run.sh would inherit that.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class MisuseTestCase(unittest.TestCase):
    """A sandbox: its own work dir, HOME, PATH, tarball and journal."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory(prefix='tcpopt-misuse-')
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        self.work = self.root / 'work'
        self.tarball = self.root / 'usr-src' / f'{PACKAGE}.tar.xz'
        self.journal = self.root / 'journal'
        self.bin = self.root / 'bin'
        self.bin.mkdir()
        (self.root / 'home').mkdir()
        self.installs = 0
        self.addCleanup(self.end_leftovers)
        shutil.copy(DATA / 'dpkg-query', self.bin / 'dpkg-query')
        (self.bin / 'dpkg-query').chmod(0o755)
        for tool in TOOLS:
            real = sys.executable if tool == 'python3' else shutil.which(tool)
            (self.bin / tool).symlink_to(real)
        self.install('6.1.192')

    @property
    def tree_dir(self) -> Path:
        return self.work / TREE

    def install(self, version: str) -> None:
        """Put a tarball where TCPOPT_TARBALL points, with a new mtime."""
        self.tarball.parent.mkdir(exist_ok=True)
        shutil.copyfile(FIXTURES[version], self.tarball)
        # Sizes may match; the identity also holds the mtime.
        self.installs += 1
        stamp = time.time_ns() + self.installs * 10**9
        os.utime(self.tarball, ns=(stamp, stamp))

    def env(self, **extra: str) -> Dict[str, str]:
        """A whole environment of its own; an empty value unsets."""
        env = {'PATH': str(self.bin), 'HOME': str(self.root / 'home'),
               'LANG': 'C.UTF-8', 'LC_ALL': 'C.UTF-8',
               'TCPOPT_WORK_DIR': str(self.work),
               'TCPOPT_TARBALL': str(self.tarball),
               'TCPOPT_NO_INSTALL': '1',
               'FAKE_KUNIT_JOURNAL': str(self.journal),
               'FAKE_KUNIT_CONSOLE': str(FIXTURES['pass'])}
        env.update(extra)
        return {key: value for key, value in env.items() if value}

    def command(self, args: Tuple[str, ...]) -> List[str]:
        return [str(REPO / 'run.sh'), '--tree', TREE, *args]

    def run_sh(self, *args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(args), env=self.env(**env),
                              cwd=REPO, capture_output=True, text=True,
                              timeout=60, start_new_session=True,
                              check=False)

    def start(self, name: str, *args: str, **env: str) -> subprocess.Popen:
        """run.sh in the background, its output in files named after it."""
        out = open(self.root / f'{name}.out', 'w')
        err = open(self.root / f'{name}.err', 'w')
        self.addCleanup(out.close)
        self.addCleanup(err.close)
        proc = subprocess.Popen(self.command(args), env=self.env(**env),
                                cwd=REPO, stdout=out, stderr=err,
                                start_new_session=True,
                                preexec_fn=default_sigint)
        self.addCleanup(self.reap, proc)
        return proc

    def reap(self, proc: subprocess.Popen) -> None:
        """After a failed test: end the run.sh it started."""
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def end_leftovers(self) -> None:
        """After a failed test: end the fake kunit.py, make and QEMU, by
        the process ids they wrote to the journal."""
        for pid in self.pids('start') + self.pids('make') + self.pids('qemu'):
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)

    def output(self, name: str) -> str:
        return (self.root / f'{name}.err').read_text()

    def events(self) -> List[str]:
        return self.journal.read_text().splitlines() \
            if self.journal.exists() else []

    def pids(self, event: str) -> List[int]:
        return [int(line.split()[-1]) for line in self.events()
                if line.startswith(event + ' ')]

    def wait_for(self, what: str, check: Callable[[], object],
                 timeout: float = 20) -> None:
        end = time.monotonic() + timeout
        while not check():
            if time.monotonic() > end:
                self.fail(f'timed out waiting for {what}')
            time.sleep(0.05)

    def assert_error_line(self, result: subprocess.CompletedProcess,
                          expected: str, status: int = 1) -> str:
        """stderr ends in exactly one 'run.sh: error:' line, no traceback;
        a set-up error exits 2 (nothing was tested), a failure 1."""
        self.assertEqual(result.returncode, status, result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        errors = [line for line in result.stderr.splitlines()
                  if line.startswith('run.sh: error: ')]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertEqual(result.stderr.splitlines()[-1], errors[0])
        self.assertIn(expected, errors[0])
        return errors[0]

    def assert_passes(self, result: subprocess.CompletedProcess) -> None:
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        count = len(EXPECTED)
        self.assertIn(f'{count} KUnit cases: {count} passed, 0 failed, '
                      '0 skipped, 0 missing', result.stdout)

    def built_from(self) -> str:
        return (self.tree_dir / 'build' / KERNEL).read_text().strip()

    def leftovers(self) -> List[str]:
        """Half-done things: staging dirs, rejects, backups, temp files."""
        return sorted(str(path.relative_to(self.work))
                      for path in self.work.rglob('*')
                      if re.search(r'\.(new|old|tree|rej|orig|tmp)$',
                                   path.name))


# --- 1. the tarball is missing and apt-get cannot help -----------------------

class MissingTarballTest(MisuseTestCase):

    def setUp(self) -> None:
        super().setUp()
        self.tarball.unlink()

    def test_package_not_installed_with_no_install(self) -> None:
        result = self.run_sh(FAKE_DPKG_MISSING=PACKAGE)
        line = self.assert_error_line(result, PACKAGE, status=2)
        self.assertEqual(line, 'run.sh: error: missing Debian packages: '
                         f'{PACKAGE} (TCPOPT_NO_INSTALL is set; install them '
                         f'with apt-get install {PACKAGE})')
        self.assertFalse(self.work.exists())

    def test_package_not_installed_and_no_apt_get(self) -> None:
        env = self.env()
        self.assertIsNone(shutil.which('apt-get', path=env['PATH']))
        result = self.run_sh(FAKE_DPKG_MISSING=PACKAGE, TCPOPT_NO_INSTALL='')
        line = self.assert_error_line(result, PACKAGE, status=2)
        self.assertEqual(line, 'run.sh: error: missing Debian packages: '
                         f'{PACKAGE} (run as root with apt-get, or: sudo '
                         f'apt-get install {PACKAGE})')

    def test_package_listed_but_its_tarball_deleted(self) -> None:
        result = self.run_sh()
        line = self.assert_error_line(result, PACKAGE, status=2)
        self.assertEqual(line, f'run.sh: error: {self.tarball} is missing: '
                         f'install the Debian package {PACKAGE} again '
                         f'(apt-get install --reinstall {PACKAGE})')
        self.assertFalse((self.tree_dir / 'pristine').exists())
        self.assertEqual(self.events(), [])


# --- 2. another kernel version in the work tree ------------------------------

class OtherKernelVersionTest(MisuseTestCase):

    def setUp(self) -> None:
        super().setUp()
        self.install('6.1.90')
        self.assert_passes(self.run_sh())
        self.assertEqual(self.built_from(), '6.1.90')

    def test_new_point_release_is_extracted_and_rebuilt(self) -> None:
        self.install('6.1.192')
        result = self.run_sh()
        self.assert_passes(result)
        self.assertIn(f'extracting {self.tarball}', result.stderr)
        self.assertIn(f'{self.tree_dir / "build"} was built from another '
                      'kernel tree: removing it', result.stderr)
        self.assertIn(f'tree: {PACKAGE} 6.1.192', result.stdout)
        self.assertEqual(self.built_from(), '6.1.192')
        log = (self.tree_dir / 'build/test.log').read_text()
        self.assertTrue(log.startswith('Linux version 6.1.192'))
        self.assertEqual(self.leftovers(), [])

    def test_build_dir_without_a_record_of_its_tree_is_not_reused(
            self) -> None:
        # src/ (and with it the record of the old base) is gone, as after
        # a manual clean-up; build/ of 6.1.90 must not meet 6.1.192.
        shutil.rmtree(self.tree_dir / 'src')
        self.install('6.1.192')
        self.assert_passes(self.run_sh())
        self.assertEqual(self.built_from(), '6.1.192')

    def test_tarball_of_another_tree_is_refused(self) -> None:
        self.install('6.12.9')
        result = self.run_sh()
        self.assertEqual(self.assert_error_line(result, '6.12.9', status=2),
                         f'run.sh: error: {self.tarball} holds Linux 6.12.9, '
                         f'not 6.1: use the {PACKAGE} tarball')
        pristine = self.tree_dir / 'pristine/Makefile'
        self.assertIn('SUBLEVEL = 90', pristine.read_text())
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(self.built_from(), '6.1.90')


# --- 3. the series no longer applies -----------------------------------------

class SeriesNoLongerAppliesTest(MisuseTestCase):

    MESSAGE = (f'run.sh: error: {FIRST_PATCH} does not apply to {PACKAGE} '
               '6.1.200: net/ipv4/tcp_output.c: hunk #2 FAILED at line 409')

    def test_first_run_leaves_no_source_tree(self) -> None:
        self.install('6.1.200')
        result = self.run_sh()
        self.assertEqual(self.assert_error_line(result, FIRST_PATCH,
                                                status=2),
                         self.MESSAGE)
        self.assertTrue((self.tree_dir / 'pristine').is_dir())
        self.assertFalse((self.tree_dir / 'src').exists())
        self.assertFalse((self.tree_dir / 'build').exists())
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(self.events(), [])      # kunit.py never ran

    def test_previous_good_tree_is_kept_and_never_claims_the_new_base(
            self) -> None:
        self.assert_passes(self.run_sh())
        self.install('6.1.200')
        for _ in range(2):          # and a second run does not trust it
            result = self.run_sh()
            self.assertEqual(self.assert_error_line(result, FIRST_PATCH,
                                                status=2),
                             self.MESSAGE)
        state = json.loads((self.tree_dir / 'src' /
                            '.tcpopt-state.json').read_text())
        self.assertEqual(state['version'], '6.1.192')
        self.assertEqual(self.built_from(), '6.1.192')
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(len(self.pids('start')), 1)


# --- 4. Ctrl-C in the middle of the build ------------------------------------

class InterruptTest(MisuseTestCase):

    def interrupt(self, signum: int, whole_group: bool) -> None:
        proc = self.start('interrupted', FAKE_KUNIT_MODE='slow')
        self.wait_for('the build to start', lambda: self.pids('make'))
        if whole_group:         # what a terminal's Ctrl-C does
            os.killpg(proc.pid, signum)
        else:                   # kill -INT <pid of run.sh>
            os.kill(proc.pid, signum)
        self.assertEqual(proc.wait(timeout=30), 130)
        err = self.output('interrupted')
        self.assertEqual(err.splitlines()[-1], INTERRUPTED)
        self.assertNotIn('Traceback', err)
        # Nothing keeps building once the lock is released.
        for pid in self.pids('start') + self.pids('make'):
            self.assertTrue(gone(pid), f'pid {pid} still running')
        self.assertFalse((self.tree_dir / 'build' / KERNEL).exists())
        self.assert_passes(self.run_sh())
        self.assertEqual(self.built_from(), '6.1.192')

    def test_ctrl_c_then_the_next_run_completes(self) -> None:
        self.interrupt(signal.SIGINT, whole_group=True)

    def test_sigint_to_run_sh_alone_stops_the_build_too(self) -> None:
        self.interrupt(signal.SIGINT, whole_group=False)

    def test_sigterm_to_run_sh_stops_the_build_too(self) -> None:
        self.interrupt(signal.SIGTERM, whole_group=False)


# --- 5. a full disk ----------------------------------------------------------

class DiskFullTest(MisuseTestCase):
    """The work dir on a small tmpfs; a ballast file sets the free space."""

    def setUp(self) -> None:
        super().setUp()
        self.disk = self.root / 'disk'
        self.disk.mkdir()
        if os.geteuid() != 0:
            self.skipTest('mounting a tmpfs needs root')
        mount = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=4m',
                                'tmpfs', str(self.disk)],
                               capture_output=True, check=False)
        if mount.returncode:
            self.skipTest('cannot mount a tmpfs here')
        self.addCleanup(subprocess.run, ['umount', str(self.disk)],
                        check=False)
        self.work = self.disk / 'work'
        self.ballast = self.disk / 'ballast'
        self.tree = tree_pages('6.1.192') + 1       # + the pristine stamp

    def leave_free(self, pages: int) -> None:
        stat = os.statvfs(self.disk)
        size = (stat.f_bavail - pages) * stat.f_frsize
        with open(self.ballast, 'wb') as ballast:
            os.posix_fallocate(ballast.fileno(), 0, size)

    def run_out_of_space(self, pages: int, expected: str,
                         absent: Tuple[str, ...] = ()) -> str:
        """One error line, nothing half-done, then a run that completes."""
        self.leave_free(pages)
        result = self.run_sh()
        line = self.assert_error_line(result, expected)
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(self.events(), [])
        for name in absent:
            self.assertFalse((self.tree_dir / name).exists(), name)
        # Free the space: the next run finishes the job.
        self.ballast.unlink()
        self.assert_passes(self.run_sh())
        return line

    def test_extracting_the_tarball(self) -> None:
        line = self.run_out_of_space(
            self.tree // 2, f'could not extract {self.tarball} into '
            f'{self.tree_dir}: tar: ', absent=('pristine', 'src'))
        self.assertIn('No space left on device', line)

    def test_copying_the_pristine_tree(self) -> None:
        line = self.run_out_of_space(
            self.tree + self.tree // 2, 'could not copy '
            f'{self.tree_dir / "pristine"} to {self.tree_dir / "src.new"}: ',
            absent=('src',))
        self.assertIn('No space left on device', line)

    def test_applying_the_series(self) -> None:
        # Room for both trees and a few pages, not for the test sources
        # the series adds: patch(1) fails, and src.new goes with it.
        room = 4
        biggest = max(path.stat().st_size for path in
                      (REPO / 'kunit').glob('*.[ch]'))
        self.assertGreater(biggest, (room + 2) * PAGE)
        line = self.run_out_of_space(
            2 * self.tree + 1 + room, 'could not apply kernel-patches/6.1/',
            absent=('src',))
        self.assertIn('No space left on device', line)


# --- 6. the kernel hangs in QEMU ---------------------------------------------

class HangTest(MisuseTestCase):

    def test_timeout_stops_qemu_with_a_clear_line(self) -> None:
        began = time.monotonic()
        result = self.run_sh(FAKE_KUNIT_MODE='hang', TCPOPT_KUNIT_TIMEOUT='1',
                             FAKE_KUNIT_CONSOLE=str(DATA / 'console-hang.log'))
        self.assertLess(time.monotonic() - began, 15)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn('run.sh: QEMU timed out: the kernel was still running '
                      '1 s after boot (TCPOPT_KUNIT_TIMEOUT=1), stopped it; '
                      'last console line: ok 3 syn_sack_mss1460',
                      result.stderr)
        self.assertIn('the kernel did not finish cleanly: the KTAP output '
                      'stopped before the last suite', result.stdout)
        self.assertNotIn('Traceback', result.stderr)
        for pid in self.pids('qemu') + self.pids('start'):
            self.assertTrue(gone(pid), f'pid {pid} still running')

    def test_a_bad_timeout_is_one_line(self) -> None:
        result = self.run_sh(TCPOPT_KUNIT_TIMEOUT='soon')
        self.assertEqual(self.assert_error_line(result, 'soon', status=2),
                         "run.sh: error: TCPOPT_KUNIT_TIMEOUT='soon': give a "
                         'whole number of seconds, at least 1')


class StopTest(unittest.TestCase):
    """kernel.stop: SIGKILL for a kunit.py that ignores SIGINT."""

    def test_sigkill_after_the_grace(self) -> None:
        code = ('import signal, time; signal.signal(signal.SIGINT, '
                'signal.SIG_IGN); print(flush=True); time.sleep(60)')
        proc = subprocess.Popen([sys.executable, '-c', code],
                                stdout=subprocess.PIPE,
                                start_new_session=True)
        proc.stdout.readline()      # its SIGINT handler is in place
        proc.stdout.close()
        kernel.stop(proc, grace=0.2)
        self.assertEqual(proc.returncode, -signal.SIGKILL)


# --- 7. a kernel panic in a test ---------------------------------------------

class PanicTest(MisuseTestCase):

    def test_panic_fails_the_run_with_its_lines(self) -> None:
        began = time.monotonic()
        result = self.run_sh(FAKE_KUNIT_MODE='panic',
                             TCPOPT_KUNIT_TIMEOUT='30',
                             FAKE_KUNIT_CONSOLE=str(DATA /
                                                    'console-panic.log'))
        # panic=-1 ends QEMU at once: no waiting for the timeout.
        self.assertLess(time.monotonic() - began, 15)
        self.assertNotIn('timed out', result.stderr)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn('\nthe kernel did not finish cleanly: BUG: kernel NULL '
                      'pointer dereference, address: 0000000000000000\n'
                      '    Oops: 0000 [#1] PREEMPT SMP NOPTI\n'
                      '    RIP: 0010:tcp_options_write+0x3b/0x3a0\n'
                      '    Call Trace:\n'
                      '    Kernel panic - not syncing: Fatal exception\n',
                      result.stdout)
        self.assertRegex(result.stdout, r'PASS +tcp_opt_syn +'
                         r'syn_ws_mss1460_ws7')


# --- 8. two runs at once -----------------------------------------------------

class ConcurrentRunsTest(MisuseTestCase):

    def test_second_run_waits_for_the_first(self) -> None:
        release = self.root / 'release'
        first = self.start('first', FAKE_KUNIT_MODE='slow',
                           FAKE_KUNIT_RELEASE=str(release))
        self.wait_for('the first build', lambda: self.pids('make'))
        second = self.start('second')
        self.wait_for('the second run to wait', lambda: 'waiting for '
                      'another run' in self.output('second'))
        self.assertIn(f'run.sh: waiting for another run using '
                      f'{self.tree_dir}', self.output('second'))
        time.sleep(0.3)
        self.assertIsNone(second.poll())
        self.assertEqual([event.split()[0] for event in self.events()],
                         ['start', 'make'])
        release.touch()
        self.assertEqual(first.wait(timeout=30), 0, self.output('first'))
        self.assertEqual(second.wait(timeout=30), 0, self.output('second'))
        order = [' '.join(e.split()[:2]) for e in self.events()
                 if e.startswith(('start', 'end'))]
        self.assertEqual(order, ['start slow', 'end slow', 'start pass',
                                 'end pass'])


if __name__ == '__main__':
    unittest.main()


class FirstErrorTest(unittest.TestCase):
    """The cause named in a tool's error output."""

    def test_the_first_line_unless_the_disk_is_full(self) -> None:
        from tcpopt.core.errors import first_error
        self.assertEqual(first_error('a: broken\nExiting\n', 'x'),
                         'a: broken')
        self.assertEqual(first_error(
            'tar: f.c: Wrote only 4096 of 7673 bytes\n'
            'tar: g.c: Cannot write: No space left on device\n', 'x'),
            'tar: g.c: Cannot write: No space left on device')
        self.assertEqual(first_error('\n', 'tar failed'), 'tar failed')
