"""Drive the kernel's own tools: kunit.py, make, bloat-o-meter, checkpatch."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, List, Optional

from tcpopt.bench import steptime
from tcpopt.core.errors import log as say
from tcpopt.core.settings import DEFAULT_SUITES, Settings, kunit_log
from tcpopt.tree.accel import Accel
from tcpopt.tree.accel import choose as choose_accel

ARCH = 'x86_64'
# After the timeout, kunit.py gets this long to stop QEMU and save its log;
# its own --timeout, this much later, is only a backstop.
STOP_GRACE = 10
POLL = 0.1


def jobs(settings: Settings) -> int:
    """make's -j: --jobs (TCPOPT_JOBS), else one per CPU."""
    return settings.jobs or os.cpu_count() or 1


def build_env(settings: Settings) -> dict:
    """ccache keeps its cache in the work dir, outside the checkout."""
    env = settings.child_env()
    env['CCACHE_DIR'] = str(settings.ccache_dir)
    env.setdefault('CCACHE_MAXSIZE', '5G')
    # Paths relative to the work dir let the scratch trees (mutants,
    # bisectability, bloat) hit the cache the main tree filled.
    env.setdefault('CCACHE_BASEDIR', str(settings.work_dir))
    # kunit.py's Python must not pick up a user's PYTHONPATH additions.
    env.pop('PYTHONPATH', None)
    return env


# A qemu-system-x86_64 that keeps only "-accel tcg" (kunit.py 7.x asks
# for kvm first, which hangs where the KVM probe failed).
TCG_WRAPPER_DIR = Path(__file__).resolve().parents[2] / 'qemu-tcg'


# An stty that keeps quiet without a terminal: kunit.py runs "stty sane"
# after every boot.
QUIET_STTY_DIR = Path(__file__).resolve().parents[2] / 'quiet-stty'


def boot_env(settings: Settings, accel: Optional[Accel]) -> dict:
    """build_env, with the quiet stty first on PATH, and the TCG wrapper
    before it under TCG."""
    env = build_env(settings)
    env['PATH'] = f'{QUIET_STTY_DIR}:{env.get("PATH", "")}'
    if accel is not None and accel.name == 'tcg':
        env['PATH'] = f'{TCG_WRAPPER_DIR}:{env["PATH"]}'
    return env


def compiler() -> str:
    return 'ccache gcc' if shutil.which('ccache') else 'gcc'


def kunit_command(settings: Settings, timeout: Optional[int] = None, *,
                  accel: Optional[Accel] = None,
                  filter_glob: str = DEFAULT_SUITES,
                  build_dir: Optional[Path] = None,
                  action: str = 'run',
                  kunitconfig: Optional[Path] = None,
                  qemu_config: Optional[Path] = None) -> List[str]:
    """kunit.py run (or build, or exec: the options each one takes);
    @qemu_config replaces the arch's QEMU setup (a kunit.py qemu_configs
    file: its own command line and QEMU arguments)."""
    builds, boots = action in ('run', 'build'), action in ('run', 'exec')
    kunitconfig = kunitconfig or settings.kunitconfig
    cmd = [sys.executable, 'tools/testing/kunit/kunit.py', action,
           f'--arch={ARCH}', f'--kunitconfig={kunitconfig}',
           f'--build_dir={build_dir or settings.build_dir}']
    if builds:
        cmd.append(f'--jobs={jobs(settings)}')
    if boots:
        cmd += [f'--timeout={timeout or settings.kunit_timeout}',
                # A panicking kernel reboots at once, which ends QEMU
                # (-no-reboot), instead of spinning until the timeout.
                '--kernel_args=panic=-1']
    if qemu_config:
        cmd.append(f'--qemu_config={qemu_config}')
    if accel:
        # '=': a value starting with '-' is not an option of kunit.py's.
        cmd.append(f'--qemu_args={accel.qemu_args()}')
    if boots:
        cmd.append(filter_glob)
    return cmd + ['--make_options', f'CC={compiler()}'] + \
        [f'--kconfig_add={option}' for option in settings.kconfig_add]


@contextmanager
def log_moved_to(build_dir: Path, dest: Path) -> Iterator[None]:
    """kunit.py always logs to @build_dir/test.log: for the run inside,
    move that log to @dest after, and keep the one there before (the
    last verdicts of that build stay where they were). @dest never holds
    an earlier run's log."""
    log_file = kunit_log(build_dir)
    kept = log_file.with_name(log_file.name + '.kept')
    dest.unlink(missing_ok=True)
    if log_file.is_file():
        log_file.replace(kept)
    try:
        yield
        if log_file.is_file():
            log_file.replace(dest)
    finally:
        if kept.is_file():
            kept.replace(log_file)


@contextmanager
def interrupted_by(*signums: int) -> Iterator[None]:
    """Turn these signals into KeyboardInterrupt for the duration.

    kunit.py runs in its own session, so a closed terminal (SIGHUP) no
    longer reaches make and QEMU, and a kill (SIGTERM) of run.sh never
    did: raising lets the caller stop them first.
    """
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt
    previous = [(signum, signal.signal(signum, interrupt))
                for signum in signums]
    try:
        yield
    finally:
        for signum, handler in previous:
            signal.signal(signum, handler)


def wait_for_kunit(proc: subprocess.Popen, log: Optional[Path], timeout: int,
                   clock: Optional[steptime.Spent] = None) -> bool:
    """Wait for kunit.py; False once QEMU has run for timeout seconds.

    kunit.py creates test.log as it starts QEMU: the clock starts there,
    so a build, however long, does not count. @clock gets the seconds
    before that (the build) and after it (the boot). No @log: a build
    alone, with no clock.
    """
    started = time.monotonic()
    booted: Optional[float] = None
    try:
        while True:
            try:
                proc.wait(timeout=POLL)
                return True
            except subprocess.TimeoutExpired:
                pass
            if booted is None and log is not None and log.exists():
                booted = time.monotonic()
            if booted is not None and time.monotonic() - booted >= timeout:
                return False
    finally:
        if clock is not None:
            now = time.monotonic()
            clock.build += (booted or now) - started
            clock.boot += now - (booted or now)


def stop(proc: subprocess.Popen, grace: float = STOP_GRACE) -> None:
    """Stop kunit.py's session as Ctrl-C would, then SIGKILL what is left.

    On SIGINT make and QEMU quit and kunit.py saves test.log.
    """
    if proc.poll() is not None:
        return
    for signum, wait in ((signal.SIGINT, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


def last_console_line(log: Path) -> str:
    try:
        lines = log.read_text(errors='replace').splitlines()
    except OSError:
        lines = []
    # QEMU's own 'terminating on signal' says nothing about the kernel.
    lines = [line.strip() for line in lines if line.strip() and
             not line.startswith('qemu-system-')]
    return lines[-1][:120] if lines else '(none)'


def run_kunit(settings: Settings, source: Path, *,
              build_dir: Optional[Path] = None,
              filter_glob: Optional[str] = None,
              accel: Optional[Accel] = None, action: str = 'run',
              output: Optional[IO] = None,
              kunitconfig: Optional[Path] = None,
              timeout: Optional[int] = None,
              qemu_config: Optional[Path] = None) -> tuple[int, Path]:
    """Build and boot the suite; returns kunit.py's status and the raw log.

    Without an accelerator given, the one accel.choose() picks is used
    and named on stdout.
    """
    build_dir = build_dir or settings.build_dir
    filter_glob = filter_glob or settings.filter_glob or DEFAULT_SUITES
    log = kunit_log(build_dir)
    if log.exists():
        log.unlink()        # never read a previous run's verdicts
    build_dir.mkdir(parents=True, exist_ok=True)
    timeout = timeout or settings.kunit_timeout
    if accel is None and action != 'build':
        accel = choose_accel(build_dir)
        print(accel.line(), flush=True)
    command = kunit_command(settings, timeout + STOP_GRACE, accel=accel,
                            filter_glob=filter_glob, build_dir=build_dir,
                            action=action, kunitconfig=kunitconfig,
                            qemu_config=qemu_config)
    return supervise(settings, command, source, log, accel, output,
                     timeout), log


def supervise(settings: Settings, command: List[str], cwd: Path,
              log: Optional[Path],
              accel: Optional[Accel], output: Optional[IO],
              timeout: int) -> int:
    """Run a kunit.py @command; the one place that starts and stops one.

    kunit.py gets a session of its own, so that a hung kernel or an
    interrupt stops it with make and QEMU, never leaving them running
    after the lock is released. The kernel gets @timeout seconds from
    the moment kunit.py creates @log (when QEMU starts).
    """
    with interrupted_by(signal.SIGHUP, signal.SIGTERM):
        proc = subprocess.Popen(command, cwd=cwd,
                                env=boot_env(settings, accel),
                                stdout=output,
                                stderr=subprocess.STDOUT if output else None,
                                start_new_session=True)
        try:
            if not wait_for_kunit(proc, log, timeout, steptime.CURRENT):
                stop(proc)
                say(f'QEMU timed out: the kernel was still running {timeout} '
                    f's after boot (TCPOPT_KUNIT_TIMEOUT={timeout}), stopped '
                    f'it; last console line: {last_console_line(log)}')
        finally:
            stop(proc)
    return proc.returncode


def make(settings: Settings, source: Path, out: Path, *targets: str,
         quiet: bool = True) -> subprocess.CompletedProcess:
    cmd = ['make', '-C', str(source), f'O={out}', f'ARCH={ARCH}',
           f'CC={compiler()}', f'-j{jobs(settings)}', *targets]
    if quiet:
        cmd.insert(1, '-s')
    started = time.monotonic()
    try:
        return subprocess.run(cmd, env=build_env(settings),
                              capture_output=True, text=True, check=False)
    finally:
        steptime.add(build=time.monotonic() - started)


def set_kconfig(source: Path, config: Path, symbol: str,
                value: Optional[bool]) -> None:
    flag = '--enable' if value else '--disable'
    subprocess.run([str(source / 'scripts/config'), '--file', str(config),
                    flag, symbol], check=True)


# --- skipping make when nothing changed -------------------------------------

BUILT = '.tcpopt-built.json'


def build_inputs(settings: Settings) -> dict:
    """What the kernel in build/ depends on besides the tree's files."""
    return {'kunitconfig': settings.kunitconfig.read_text(),
            'kconfig_add': settings.kconfig_add,
            'compiler': compiler()}


def unchanged_since_build(settings: Settings, source: Path) -> bool:
    """True when build/ holds a kernel made from exactly this tree and
    config: no file of the tree is newer than that build's start."""
    stamp = settings.build_dir / BUILT
    kernel = settings.build_dir / 'arch/x86/boot/bzImage'
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    if recorded != build_inputs(settings) or not kernel.is_file():
        return False
    return not any_file_newer(source, stamp.stat().st_mtime_ns)


def any_file_newer(tree: Path, mtime_ns: int) -> bool:
    """Whether a file under @tree changed after @mtime_ns (stops early)."""
    pending = [str(tree)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.stat(follow_symlinks=False).st_mtime_ns > \
                        mtime_ns:
                    return True
    return False


def start_build_stamp(settings: Settings) -> Path:
    """Written before make starts (an edit during the build is newer),
    put in place only once the build and the boot succeeded."""
    pending = settings.build_dir / (BUILT + '.new')
    settings.build_dir.mkdir(parents=True, exist_ok=True)
    pending.write_text(json.dumps(build_inputs(settings)))
    return pending


def drop_build_stamp(settings: Settings) -> None:
    (settings.build_dir / BUILT).unlink(missing_ok=True)
