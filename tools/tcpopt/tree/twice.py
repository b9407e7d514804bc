"""Every suite twice in one boot (./run.sh run --twice), splats scanned.

The debug kernel runs the suites at boot, then its /init runs each of
them again through KUnit's debugfs 'run' file, and both runs' kernel log
is scanned for splats.

A suite that leaves something behind (a socket not released, a key
still installed, a namespace not torn down, a lock class misused) is
clean once and shows it the second time: a case fails, or lockdep,
KASAN or debugobjects report it.

kunit.py starts the boot, with a qemu_configs file of our own:
kunit_shutdown=none lets the kernel go on to /init after the boot-time
run, and QEMU gets -initrd. The initramfs holds busybox-static and the
script below, packed with the tree's own usr/gen_init_cpio. During the
second run the console is quiet (printk level 1); /init then prints the
kernel log from its marker on, so the second run's KTAP and splats
arrive once, after the marker, and are read from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence

from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.settings import Settings
from tcpopt.log import ktap
from tcpopt.tree import cpio, kernel

MARK = 'tcpopt-twice:'
INITRAMFS = 'twice-initramfs.cpio'
QEMU_CONFIG = 'twice_qemu.py'
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\] ?')

INIT = '''#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
echo 1 > /proc/sys/kernel/printk
echo "{mark} second run" > /dev/kmsg
for suite in {suites}; do
	run=/sys/kernel/debug/kunit/$suite/run
	if [ -e $run ]; then echo run > $run; else echo "{mark} no $run"; fi
done
echo "{mark} kernel log"
dmesg -s {log_buf} | sed -n '/{mark} second run/,$p'
echo "{mark} done"
reboot -f
'''

CPIO_LIST = '''dir /bin 0755 0 0
dir /dev 0755 0 0
dir /proc 0755 0 0
dir /sys 0755 0 0
nod /dev/console 0600 0 0 c 5 1
nod /dev/kmsg 0600 0 0 c 1 11
file /bin/busybox {busybox} 0755 0 0
file /init {init} 0755 0 0
'''

# After the boot-time run the kernel goes on to /init.
COMMAND_LINE = 'console=ttyS0 kunit_shutdown=none'


def check_tree(src: Path) -> None:
    """KUnit can run a suite again from debugfs since 6.7."""
    debugfs = src / 'lib/kunit/debugfs.c'
    if 'debugfs_run' not in debugfs.read_text(errors='replace'):
        raise UsageError(f'--twice: {src} has no KUnit debugfs "run" file '
                         '(Linux 6.7 and later); use the 7.3 tree')


def log_buffer_size(build: Path) -> int:
    """The kernel log's size: busybox's dmesg reads 16 KiB unless told."""
    config = build / '.config'
    text = config.read_text() if config.is_file() else ''
    shift = re.search(r'^CONFIG_LOG_BUF_SHIFT=(\d+)$', text, re.M)
    return 1 << int(shift.group(1) if shift else 17)


def pack(build: Path, suites: Sequence[str]) -> Path:
    """The initramfs, written whole or not at all."""
    init = build / 'twice-init.sh'
    init.write_text(INIT.format(mark=MARK, suites=' '.join(suites),
                                log_buf=log_buffer_size(build)))
    return cpio.pack(build, CPIO_LIST.format(busybox=cpio.BUSYBOX, init=init),
                     build / INITRAMFS, '--twice')


def qemu_config(build: Path, initrd: Path) -> Path:
    return cpio.qemu_config(build / QEMU_CONFIG, initrd, COMMAND_LINE)


@dataclass
class Boot:
    first: ktap.Run         # the boot-time run
    second: ktap.Run        # the debugfs runs, from /init's kernel log
    splats: ktap.Run        # the whole console: every report of both runs
    missing_suites: List[str]
    done: bool              # /init reached its last line


def split(lines: Sequence[str], suites: Sequence[str]) -> Boot:
    """The console of a --twice boot, read once."""
    lines = [line.rstrip('\r\n') for line in lines]
    start = next((i for i, line in enumerate(lines)
                  if line.strip() == f'{MARK} kernel log'), len(lines))
    end = next((i for i, line in enumerate(lines)
                if line.strip() == f'{MARK} done'), len(lines))
    second = [TIMESTAMP.sub('', line) for line in lines[start + 1:end]]
    header = ['KTAP version 1', f'1..{len(suites)}']
    missing = [line.split('/')[-2] for line in lines[:start]
               if line.startswith(f'{MARK} no ')]
    return Boot(first=ktap.parse(lines[:start]),
                second=ktap.parse(header + second),
                splats=ktap.parse(lines),
                missing_suites=missing, done=end < len(lines))


def log_of(settings: Settings) -> Path:
    """Where boot() keeps the console of its boot."""
    return settings.build_dir / 'twice.log'


def boot(settings: Settings, suites: Sequence[str]) -> Boot:
    """Pack /init, boot the built debug kernel once more, read the
    console. kunit.py always logs to test.log: the sanitizer run's log is
    kept there, this boot's goes to twice.log."""
    build = settings.build_dir
    initrd = pack(build, suites)
    twice_log = log_of(settings)
    with kernel.log_moved_to(build, twice_log):
        kernel.run_kunit(settings, settings.source, action='exec',
                         qemu_config=qemu_config(build, initrd))
    if not twice_log.is_file():
        raise HarnessError(f'--twice: kunit.py wrote no log in {build}')
    with open(twice_log, errors='replace') as lines:
        return split(list(lines), suites)
