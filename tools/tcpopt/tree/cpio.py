"""An initramfs packed with the tree's own usr/gen_init_cpio, whole or not.

What the --twice boot and the selftest boot hand QEMU."""

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
