"""An initramfs packed with the tree's own usr/gen_init_cpio, whole or not.

What the --twice boot and the selftest boot hand QEMU, with the kunit.py
qemu_configs file that does: kunit.py's x86_64 setup, but for the
kernel's command line and -initrd."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tcpopt.core.errors import HarnessError

BUSYBOX = Path('/bin/busybox')


def pack(build: Path, listing: str, out: Path, what: str) -> Path:
    """gen_init_cpio's archive of @listing (its file format) as @out;
    @what names the caller in errors."""
    if not BUSYBOX.is_file():
        raise HarnessError(f'{what}: no {BUSYBOX}; apt-get install '
                           'busybox-static')
    gen = build / 'usr' / 'gen_init_cpio'
    if not gen.is_file():
        raise HarnessError(f'{what}: no {gen}: the kernel was built without '
                           'CONFIG_BLK_DEV_INITRD')
    list_file = out.with_name(out.stem + '.list')
    list_file.write_text(listing)
    tmp = out.with_name(out.name + '.new')
    try:
        with open(tmp, 'wb') as archive:
            subprocess.run([str(gen), str(list_file)], stdout=archive,
                           check=True, stderr=subprocess.PIPE)
        tmp.rename(out)
    except subprocess.CalledProcessError as error:
        raise HarnessError(f'{what}: {gen} failed: '
                           f'{error.stderr.decode(errors="replace").strip()}')
    finally:
        tmp.unlink(missing_ok=True)
    return out


QEMU = '''from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
\t\t\t   kconfig="""
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y""",
\t\t\t   qemu_arch='x86_64',
\t\t\t   kernel_path='arch/x86/boot/bzImage',
\t\t\t   kernel_command_line={command_line!r},
\t\t\t   extra_qemu_params=['-bios', 'qboot.rom', '-initrd', {initrd!r}])
'''


def qemu_config(path: Path, initrd: Path, command_line: str) -> Path:
    """A kunit.py --qemu_config file at @path booting @initrd. The line
    ends in '--': what kunit.py appends after it goes to /init, which
    ignores it, not to the kernel (6.12's kunit.py appends
    kunit_shutdown=reboot, which would reboot before /init runs)."""
    path.write_text(QEMU.format(initrd=str(initrd),
                                command_line=command_line + ' --'))
    return path
