"""twice.py: the console of a boot that runs every suite twice."""

import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.tree import cpio, twice

FIRST = '''[    0.1] Linux version 7.3.4
KTAP version 1
1..1
    KTAP version 1
    # Subtest: tcp_opt_layout
    1..2
    ok 1 md5_drops_ts
    ok 2 mss_only
ok 1 tcp_opt_layout
'''

SECOND = '''tcpopt-twice: kernel log
[    9.000000] tcpopt-twice: second run
[    9.100000]     KTAP version 1
[    9.100000]     # Subtest: tcp_opt_layout
[    9.100000]     1..2
[    9.200000]     ok 1 md5_drops_ts
[    9.300000] WARNING: suspicious RCU usage
[    9.300000] -----------------------------
[    9.400000]     not ok 2 mss_only
[    9.400000] not ok 2 tcp_opt_layout
tcpopt-twice: done
'''


class SplitTest(unittest.TestCase):

    def test_each_run_is_read_on_its_own(self):
        boot = twice.split((FIRST + SECOND).splitlines(True),
                           ['tcp_opt_layout'])
        self.assertEqual([(c.name, c.status) for c in boot.first.cases],
                         [('md5_drops_ts', 'pass'), ('mss_only', 'pass')])
        self.assertEqual([(c.name, c.status) for c in boot.second.cases],
                         [('md5_drops_ts', 'pass'), ('mss_only', 'fail')])
        self.assertTrue(boot.first.complete and boot.second.complete)
        self.assertTrue(boot.done)

    def test_a_splat_of_the_second_run_is_counted(self):
        boot = twice.split((FIRST + SECOND).splitlines(), ['tcp_opt_layout'])
        self.assertEqual([r.kind for r in boot.splats.sanitizer], ['RCU'])
        self.assertEqual(boot.splats.sanitizer[0].case, 'mss_only')

    def test_an_init_that_stopped_early_is_not_done(self):
        cut = SECOND.split('tcpopt-twice: done')[0]
        boot = twice.split((FIRST + cut).splitlines(), ['tcp_opt_layout'])
        self.assertFalse(boot.done)

    def test_a_suite_without_a_run_file_is_named(self):
        text = FIRST + ('tcpopt-twice: no /sys/kernel/debug/kunit/'
                        'tcp_opt_write/run\n') + SECOND
        boot = twice.split(text.splitlines(), ['tcp_opt_layout'])
        self.assertEqual(boot.missing_suites, ['tcp_opt_write'])

    def test_the_second_run_missing_leaves_no_cases(self):
        boot = twice.split(FIRST.splitlines(), ['tcp_opt_layout'])
        self.assertEqual(boot.second.cases, [])
        self.assertFalse(boot.done)


class TreeTest(unittest.TestCase):

    def test_a_kunit_without_a_debugfs_run_file_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            debugfs = Path(tmp) / 'lib/kunit/debugfs.c'
            debugfs.parent.mkdir(parents=True)
            debugfs.write_text('static int debugfs_print_results(void);\n')
            with self.assertRaisesRegex(UsageError, '6.7 and later'):
                twice.check_tree(Path(tmp))
            debugfs.write_text('static ssize_t debugfs_run(void);\n')
            twice.check_tree(Path(tmp))


class PackTest(unittest.TestCase):

    def gen(self, tmp: Path, script: str) -> Path:
        gen = tmp / 'usr' / 'gen_init_cpio'
        gen.parent.mkdir(parents=True)
        gen.write_text('#!/bin/sh\n' + script)
        gen.chmod(0o755)
        return gen

    def test_the_list_names_busybox_and_the_script(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = Path(tmp)
            self.gen(build, 'cat "$1"\n')
            with mock.patch.object(cpio, 'BUSYBOX', Path('/bin/sh')):
                out = twice.pack(build, ['tcp_opt_layout', 'tcp_opt_write'])
            listing = out.read_text()
            self.assertIn('file /bin/busybox /bin/sh 0755', listing)
            # No devtmpfs: the marker goes through a node of our own.
            self.assertIn('nod /dev/kmsg 0600 0 0 c 1 11', listing)
            self.assertIn(f'file /init {build}/twice-init.sh', listing)
            init = (build / 'twice-init.sh').read_text()
            self.assertIn('for suite in tcp_opt_layout tcp_opt_write;', init)
            self.assertTrue(init.rstrip().endswith('reboot -f'))
            self.assertIn('dmesg -s 131072 |', init)     # no .config: 17

    def test_dmesg_reads_the_whole_log_buffer(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / '.config').write_text('CONFIG_LOG_BUF_SHIFT=24\n')
            self.assertEqual(twice.log_buffer_size(Path(tmp)), 1 << 24)

    def test_a_failed_pack_leaves_no_initramfs(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = Path(tmp)
            self.gen(build, 'echo half; echo "bad line 3" >&2; exit 1\n')
            with mock.patch.object(cpio, 'BUSYBOX', Path('/bin/sh')), \
                    self.assertRaisesRegex(HarnessError, 'bad line 3'):
                twice.pack(build, ['tcp_opt_layout'])
            self.assertEqual(sorted(p.name for p in build.glob('*.cpio*')),
                             [])

    def test_no_busybox_says_which_package(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(cpio, 'BUSYBOX', Path(tmp) / 'none'), \
                self.assertRaisesRegex(HarnessError, 'busybox-static'):
            twice.pack(Path(tmp), ['tcp_opt_layout'])


if __name__ == '__main__':
    unittest.main()
