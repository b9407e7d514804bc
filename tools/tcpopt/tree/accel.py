"""QEMU's accelerator: KVM when /dev/kvm opens and a probe boot succeeds.

Otherwise TCG. A KVM that opens may still not run a guest (on these
machines QEMU has died with "KVM internal error" or hung without a line
of output), so the only proof is a boot: the kernel already built, with
a filter that matches no suite, must print its KTAP header and power
off. The verdict is kept next to the build (qemu-accel.json), keyed by
the QEMU binary, the host kernel and the guest's .config, so a warm run
pays nothing. It is not keyed by the bzImage: each edit relinks it, and
a probe that times out on a broken KVM would add its timeout to every
edit loop. TCPOPT_ACCEL=kvm|tcg skips the probe.

The first build has no kernel to probe with, so it boots under TCG; the
next run probes once. Probing right after the build would need kunit.py
run split in two (build, then exec) for a one-off saving.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from tcpopt.core.errors import SetupError
from tcpopt.log.ktap import CRASH

QEMU = 'qemu-system-x86_64'
KVM_DEVICE = Path('/dev/kvm')
IMAGE = 'arch/x86/boot/bzImage'
CACHE = 'qemu-accel.json'
# A working KVM boots this kernel to its KTAP header in about a second.
PROBE_TIMEOUT = 10
# Matches no suite: the kernel prints 'KTAP version 1' and '1..0' and
# kunit_shutdown reboots it, which ends QEMU (-no-reboot).
PROBE_CMDLINE = ('console=ttyS0 kunit.enable=1 '
                 'kunit.filter_glob=tcpopt-accel-probe kunit_shutdown=reboot '
                 'panic=-1')
KTAP_HEADER = re.compile(r'^\s*K?TAP version \d+', re.M)
QEMU_ERROR = re.compile(r'(KVM internal error.*|.*[Ee]rror.*|.*Assertion.*)')
CHOICES = ('kvm', 'tcg')

Runner = Callable[..., subprocess.CompletedProcess]


@dataclass(frozen=True)
class Accel:
    """The accelerator one run uses, and why."""

    name: str                       # 'kvm' or 'tcg'
    reason: str
    cached: bool = False

    def line(self) -> str:
        return (f'QEMU: {self.name} ({self.reason}'
                f'{", cached" if self.cached else ""})')

    def qemu_args(self) -> str:
        """kunit.py's --qemu_args value."""
        return f'-accel {self.name}'


@dataclass(frozen=True)
class Probe:
    ok: bool
    reason: str


def forced() -> Optional[str]:
    """TCPOPT_ACCEL, checked; None when unset."""
    value = os.environ.get('TCPOPT_ACCEL', '').strip()
    if not value:
        return None
    if value not in CHOICES:
        raise SetupError(f'TCPOPT_ACCEL={value!r}: give kvm or tcg')
    return value


def device_problem(device: Path = KVM_DEVICE) -> Optional[str]:
    """Why /dev/kvm cannot be used, or None when it opens read-write."""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except OSError as error:
        return f'{device}: {error.strerror or error}'
    os.close(fd)
    return None


def probe_command(qemu: str, image: Path, accel: str = 'kvm') -> list:
    """The machine kunit.py's qemu_configs/x86_64.py boots (6.1, 6.12)."""
    return [qemu, '-nodefaults', '-accel', accel, '-m', '1024',
            '-kernel', str(image), '-append', PROBE_CMDLINE, '-no-reboot',
            '-nographic', '-serial', 'stdio', '-bios', 'qboot.rom']


def _text(output: object) -> str:
    # TimeoutExpired carries bytes even when text=True was asked for.
    if isinstance(output, bytes):
        return output.decode(errors='replace')
    return output or ''


def qemu_complaint(output: str) -> Optional[str]:
    """QEMU's own error line ('KVM internal error. Suberror: 1'), if any."""
    for line in output.splitlines():
        if line.startswith('qemu-system-') or 'KVM' in line:
            match = QEMU_ERROR.search(line)
            if match:
                return match.group(0).strip()[:120]
    return None


def judge_probe(status: Optional[int], output: str, seconds: float,
                timeout: float) -> Probe:
    """Whether the probe boot ran the kernel to its end."""
    header = KTAP_HEADER.search(output)
    crash = CRASH.search(output)
    if status == 0 and header and not crash:
        return Probe(True, f'probe boot ok in {seconds:.1f} s')
    why = qemu_complaint(output)
    if why is None and crash:
        why = f'the kernel crashed: {crash.group(0)}'
    if why is None and status is None:
        why = f'no KTAP header within {timeout:g} s'
    if why is None:
        why = f'QEMU exited with status {status} ' + \
            ('after' if header else 'before') + ' the KTAP header'
    return Probe(False, f'probe boot failed: {why}')


def probe(qemu: str, image: Path, runner: Runner = subprocess.run,
          clock: Callable[[], float] = time.monotonic,
          timeout: float = PROBE_TIMEOUT) -> Probe:
    """Boot the built kernel once under KVM."""
    started = clock()
    try:
        done = runner(probe_command(qemu, image), stdin=subprocess.DEVNULL,
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      text=True, errors='replace', timeout=timeout,
                      check=False)
    except subprocess.TimeoutExpired as expired:
        # run() has killed QEMU: a VM KVM stopped never exits by itself.
        return judge_probe(None, _text(expired.output), timeout, timeout)
    except OSError as error:
        return Probe(False, f'probe boot failed: {error.strerror or error}')
    return judge_probe(done.returncode, _text(done.stdout), clock() - started,
                       timeout)


def identity(path: Path) -> str:
    st = path.stat()
    return f'{path}:{st.st_size}:{st.st_mtime_ns}'


def cache_key(build_dir: Path, qemu: str) -> dict:
    config = build_dir / '.config'
    guest = hashlib.sha256(config.read_bytes()).hexdigest() \
        if config.is_file() else identity(build_dir / IMAGE)
    return {'qemu': identity(Path(qemu).resolve()),
            'host': os.uname().release, 'guest': guest}


def cached_probe(build_dir: Path, key: dict) -> Optional[Probe]:
    try:
        record = json.loads((build_dir / CACHE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get('key') != key:
        return None
    return Probe(bool(record.get('ok')), str(record.get('reason', '')))


def save_probe(build_dir: Path, key: dict, result: Probe) -> None:
    path = build_dir / CACHE
    tmp = path.with_name(path.name + '.new')
    tmp.write_text(json.dumps({'key': key, 'ok': result.ok,
                               'reason': result.reason}, indent=1))
    tmp.rename(path)


def kvm_check(build_dir: Path, runner: Runner = subprocess.run,
              device: Path = KVM_DEVICE,
              qemu: Optional[str] = None) -> tuple[Probe, bool]:
    """Whether KVM runs this build's kernel, and whether that was cached."""
    problem = device_problem(device)
    if problem:
        return Probe(False, problem), False
    qemu = qemu or shutil.which(QEMU)
    if not qemu:
        return Probe(False, f'{QEMU} is not installed'), False
    image = build_dir / IMAGE
    if not image.is_file():
        return Probe(False, 'no kernel built yet to probe KVM with'), False
    key = cache_key(build_dir, qemu)
    known = cached_probe(build_dir, key)
    if known is not None:
        return known, True
    result = probe(qemu, image, runner)
    if not result.ok:
        result = Probe(False, f'{device} opens, but the {result.reason}')
    save_probe(build_dir, key, result)
    return result, False


def choose(build_dir: Path, runner: Runner = subprocess.run,
           device: Path = KVM_DEVICE, qemu: Optional[str] = None) -> Accel:
    """kvm or tcg for a boot of the kernel in build_dir."""
    override = forced()
    if override == 'kvm' and device_problem(device):
        raise SetupError(f'TCPOPT_ACCEL=kvm, but {device_problem(device)}')
    if override:
        return Accel(override, f'TCPOPT_ACCEL={override}')
    result, cached = kvm_check(build_dir, runner, device, qemu)
    return Accel('kvm' if result.ok else 'tcg', result.reason, cached)
