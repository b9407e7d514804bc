"""The selftests' initramfs: busybox, the binaries, an /init printing TAP.

/init runs the binaries one by one and prints kselftest's TAP.
/init quiets the console (printk level 1) so that no kernel message
breaks a TAP line, prints each test's output prefixed with '# ' and one
'ok'/'not ok' line for it, as tools/testing/selftests/kselftest/runner.sh
does (exit 4 is a skip, a test killed by `timeout` a failure), then the
kernel log from its start, where splats are read."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tcpopt.tree import cpio

MARK = 'tcpopt-selftest:'
COLLECTION = 'selftests: net/tcp_ao'
# kselftest's exit status for a skip (KSFT_SKIP).
SKIP = 4

INIT = '''#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
echo 1 > /proc/sys/kernel/printk
ip link set lo up
echo "{mark} tap"
echo "TAP version 13"
echo "1..{count}"
n=0
for t in {tests}; do
	n=$((n + 1))
	echo "# {collection}: $t"
	cd /tests
	timeout {timeout} ./$t > /out 2>&1
	rc=$?
	sed 's/^/# /' /out
	case $rc in
	0) echo "ok $n {collection}: $t" ;;
	{skip}) echo "ok $n {collection}: $t # SKIP" ;;
	124|143) echo "not ok $n {collection}: $t # TIMEOUT {timeout} seconds" ;;
	*) echo "not ok $n {collection}: $t # exit=$rc" ;;
	esac
done
echo "{mark} kernel log"
dmesg -s {log_buf}
echo "{mark} done"
reboot -f
'''

DEVICES = '''dir /bin 0755 0 0
dir /dev 0755 0 0
dir /proc 0755 0 0
dir /sys 0755 0 0
dir /tmp 1777 0 0
dir /tests 0755 0 0
nod /dev/console 0600 0 0 c 5 1
nod /dev/null 0666 0 0 c 1 3
nod /dev/zero 0666 0 0 c 1 5
nod /dev/random 0666 0 0 c 1 8
nod /dev/urandom 0666 0 0 c 1 9
nod /dev/kmsg 0600 0 0 c 1 11
'''


def init_script(binaries: Sequence[Path], timeout: int,
                log_buf: int) -> str:
    return INIT.format(mark=MARK, collection=COLLECTION, skip=SKIP,
                       count=len(binaries), timeout=timeout, log_buf=log_buf,
                       tests=' '.join(path.name for path in binaries))


def pack(build: Path, out: Path, binaries: Sequence[Path], timeout: int,
         log_buf: int) -> Path:
    """@out, whole or not at all."""
    init = out.with_name(out.stem + '-init.sh')
    init.write_text(init_script(binaries, timeout, log_buf))
    listing = DEVICES + f'file /bin/busybox {cpio.BUSYBOX} 0755 0 0\n' + \
        f'file /init {init} 0755 0 0\n' + \
        ''.join(f'file /tests/{path.name} {path} 0755 0 0\n'
                for path in binaries)
    return cpio.pack(build, listing, out, 'selftest')
