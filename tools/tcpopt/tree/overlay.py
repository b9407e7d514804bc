"""kunit/ copied into a kernel tree: which file goes where, only changed bytes.

A file whose bytes did not change keeps its mtime, so make rebuilds
only what an edit of kunit/ touched."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

from tcpopt.core.settings import (KUNIT_SELFTESTS, OVERLAY_DIR,
                                  SELFTEST_DIR, UPSTREAM_TEST_DIR,
                                  UPSTREAM_TESTS, Settings)
from tcpopt.series.upstream_tests import source_for_tree


def kunit_sources(kunit_dir: Path, upstream: bool,
                  selftests: bool = False) -> Dict[str, Path]:
    """In-tree path -> kunit/ file, for every test source of a tree: the
    harness's in net/ipv4/, with @upstream those of kunit/tests/ in
    net/ipv4/tests/, and with @selftests kunit/selftests/tcp_ao/'s in
    the TCP-AO selftests' folder."""
    places = [(kunit_dir, OVERLAY_DIR)]
    if upstream:
        places.append((kunit_dir / UPSTREAM_TESTS, UPSTREAM_TEST_DIR))
    if selftests:
        places.append((kunit_dir / KUNIT_SELFTESTS, SELFTEST_DIR))
    return {f'{where}/{p.name}': p
            for folder, where in places if folder.is_dir()
            for p in sorted(folder.iterdir()) if p.suffix in ('.c', '.h')}


def source_bytes(name: str, path: Path, version: Tuple[int, int]) -> bytes:
    """What the tree of @version gets at @name from kunit/ @path: the
    upstream suites with the guards of that tree resolved."""
    if name.startswith(UPSTREAM_TEST_DIR + '/'):
        return source_for_tree(path, version).encode()
    return path.read_bytes()


def overlay_sources(settings: Settings,
                    tree: Optional[Path] = None) -> List[Path]:
    """Copy kunit/ into the tree, touching only files whose bytes changed."""
    root = tree or settings.source
    copied = []
    for name, src in kunit_sources(settings.kunit_dir, settings.layered,
                                   settings.has_ao_selftests).items():
        dst = root / name
        data = source_bytes(name, src, settings.version)
        if dst.is_file() and dst.read_bytes() == data:
            continue
        tmp = dst.with_name(dst.name + '.new')
        try:
            tmp.write_bytes(data)
        except OSError as error:
            tmp.unlink(missing_ok=True)     # a full disk: no half file
            error.filename = error.filename or str(tmp)
            raise
        tmp.rename(dst)
        copied.append(dst)
    return copied
