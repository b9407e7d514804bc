"""kunit.py exec instead of run only when nothing changed since a build."""

from __future__ import annotations

import os
import tempfile
import unittest
from dataclasses import replace
from pathlib import Path

from tcpopt.core.settings import Settings
from tcpopt.tree import kernel


class BuildStampTest(unittest.TestCase):

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        root = Path(tmp.name)
        self.source = root / 'src'
        (self.source / 'net/ipv4').mkdir(parents=True)
        self.file = self.source / 'net/ipv4/tcp_output.c'
        self.file.write_text('int x;\n')
        self.settings = Settings.create('6.1', root / 'work')
        image = self.settings.build_dir / 'arch/x86/boot/bzImage'
        image.parent.mkdir(parents=True)
        image.write_text('kernel')
        self.age(self.file, 100)

    @staticmethod
    def age(path: Path, seconds: int) -> None:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns,
                           stat.st_mtime_ns - seconds * 10**9))

    def built(self) -> None:
        pending = kernel.start_build_stamp(self.settings)
        pending.rename(self.settings.build_dir / kernel.BUILT)

    def test_no_stamp_builds(self) -> None:
        self.assertFalse(kernel.unchanged_since_build(self.settings,
                                                      self.source))

    def test_nothing_changed_boots_the_last_build(self) -> None:
        self.built()
        self.assertTrue(kernel.unchanged_since_build(self.settings,
                                                     self.source))

    def test_an_edit_after_the_build_started_builds(self) -> None:
        self.built()
        self.age(self.settings.build_dir / kernel.BUILT, 10)
        self.file.write_text('int y;\n')
        self.assertFalse(kernel.unchanged_since_build(self.settings,
                                                      self.source))

    def test_another_config_builds(self) -> None:
        self.built()
        sanitized = replace(self.settings, sanitize=True)
        (sanitized.build_dir / 'arch/x86/boot').mkdir(parents=True)
        (sanitized.build_dir / 'arch/x86/boot/bzImage').write_text('k')
        (sanitized.build_dir / kernel.BUILT).write_text(
            (self.settings.build_dir / kernel.BUILT).read_text())
        self.assertFalse(kernel.unchanged_since_build(sanitized, self.source))

    def test_a_dropped_stamp_builds(self) -> None:
        self.built()
        kernel.drop_build_stamp(self.settings)
        self.assertFalse(kernel.unchanged_since_build(self.settings,
                                                      self.source))


if __name__ == '__main__':
    unittest.main()
