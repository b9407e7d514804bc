"""layouts: the Markdown table, the pictures, and the golden check."""

from __future__ import annotations

import copy
import io
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from typing import List

from tcpopt.layout import tables
from tcpopt.log import ktap
from tcpopt.log.ktap import Run

DATA = Path(__file__).resolve().parent / 'data'
TREE = '6.1'


def parse_file(name: str) -> Run:
    with open(DATA / name, errors='replace') as lines:
        return ktap.parse(lines)


def table_rows(markdown: str) -> List[List[str]]:
    """Cells of every case row."""
    return [line[2:-2].split(' | ') for line in markdown.splitlines()
            if line.startswith('| ') and line not in (tables.HEADER,
                                                      tables.RULE)]


def row_of(markdown: str, name: str) -> List[str]:
    return next(cells for cells in table_rows(markdown) if cells[0] == name)


class DescribeInputsTest(unittest.TestCase):

    def fields(self, text: str) -> str:
        return tables.describe_inputs(ktap.fields(text))

    def test_syn(self) -> None:
        self.assertEqual(self.fields(
            'kind=syn ts=1 sack=1 ws=1 md5=0 syncookie=0 mss=1460 wscale=7 '
            'fo=none fo_len=0 sacks=0 dsack=0'),
            'SYN ts sack ws, mss 1460, wscale 7')
        self.assertEqual(self.fields(
            'kind=syn ts=0 sack=0 ws=0 md5=0 syncookie=0 mss=536 wscale=14 '
            'fo=none fo_len=0 sacks=0 dsack=0'), 'SYN, mss 536')

    def test_synack_md5_syncookie(self) -> None:
        self.assertEqual(self.fields(
            'kind=synack ts=1 sack=1 ws=1 md5=1 syncookie=1 mss=1440 '
            'wscale=9 fo=none fo_len=0 sacks=0 dsack=0'),
            'SYN-ACK ts sack ws md5 syncookie, mss 1440, wscale 9')

    def test_fast_open(self) -> None:
        base = ('kind=syn ts=1 sack=1 ws=1 md5=0 syncookie=0 mss=1460 '
                'wscale=7 sacks=0 dsack=0 ')
        self.assertEqual(self.fields(base + 'fo=exp fo_len=8'),
                         'SYN ts sack ws, mss 1460, wscale 7, FO exp 8')
        self.assertEqual(self.fields(base + 'fo=rfc7413 fo_len=0'),
                         'SYN ts sack ws, mss 1460, wscale 7, FO request')

    def test_established(self) -> None:
        base = ('kind=established sack=0 ws=0 syncookie=0 mss=0 wscale=0 '
                'fo=none fo_len=0 ')
        self.assertEqual(self.fields(base + 'ts=1 md5=0 sacks=3 dsack=1'),
                         'est ts, 3 SACKs + D-SACK')
        self.assertEqual(self.fields(base + 'ts=0 md5=1 sacks=1 dsack=0'),
                         'est md5, 1 SACK')
        self.assertEqual(self.fields(base + 'ts=0 md5=0 sacks=0 dsack=0'),
                         'est, 0 SACKs')

    def test_no_inputs(self) -> None:
        self.assertEqual(tables.describe_inputs({}), '')


class MarkdownTest(unittest.TestCase):

    def setUp(self) -> None:
        self.run_ = parse_file('layouts-sample.log')
        self.markdown = tables.render_markdown(self.run_, TREE)

    def test_golden_rendering(self) -> None:
        # Regenerate after a deliberate format change with
        # tables.render_markdown(parse('layouts-sample.log'), '6.1').
        self.assertEqual(self.markdown,
                         (DATA / 'layouts-sample.md').read_text())

    def test_one_table_per_suite_in_log_order(self) -> None:
        headings = [line[3:] for line in self.markdown.splitlines()
                    if line.startswith('## ')]
        self.assertEqual(headings, ['tcp_opt_syn', 'tcp_opt_synack',
                                    'tcp_opt_md5', 'tcp_opt_fastopen',
                                    'tcp_opt_established'])
        self.assertEqual(self.markdown.count(tables.HEADER), 5)
        self.assertTrue(self.markdown.startswith('# TCP option layouts'))

    def test_one_row_per_layout(self) -> None:
        self.assertEqual(len(table_rows(self.markdown)), 64)
        self.assertTrue(all(len(cells) == 7
                            for cells in table_rows(self.markdown)))

    def test_syn_row(self) -> None:
        self.assertEqual(row_of(self.markdown, 'syn_ts_sack_ws_mss1460_ws7'), [
            'syn_ts_sack_ws_mss1460_ws7',
            'SYN ts sack ws, mss 1460, wscale 7',
            '`<mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>`',
            '`020405b4 0402080a 00000001 00000000 01030307`', '20', '',
            '[svg](6.1/syn_ts_sack_ws_mss1460_ws7.svg)'])

    def test_established_rows_have_mss_delta(self) -> None:
        cells = row_of(self.markdown, 'est_ts_3_sacks')
        self.assertEqual(cells[1], 'est ts, 3 SACKs')
        self.assertEqual(cells[4:6], ['40', '28'])

    def test_empty_layout_row(self) -> None:
        self.assertEqual(row_of(self.markdown, 'est_nots_0_sacks'), [
            'est_nots_0_sacks', 'est, 0 SACKs', '`<>`', '—', '0', '0',
            '[svg](6.1/est_nots_0_sacks.svg)'])

    def test_md5_and_fast_open_rows(self) -> None:
        md5 = row_of(self.markdown, 'md5_synack_syncookie_keeps_ts')
        self.assertEqual(md5[1],
                         'SYN-ACK ts sack ws md5 syncookie, mss 1440, '
                         'wscale 9')
        self.assertIn('a5a5a5a5', md5[3])
        fo = row_of(self.markdown, 'fo_exp_syn_len8')
        self.assertTrue(fo[1].endswith('FO exp 8'))

    def test_two_layout_case_has_two_rows_and_pictures(self) -> None:
        first = row_of(self.markdown, 'tcp_opt_dsack_sent_once_test')
        second = row_of(self.markdown, 'tcp_opt_dsack_sent_once_test (2)')
        self.assertEqual((first[4], first[5]), ('40', '28'))
        self.assertEqual((second[4], second[5]), ('32', '20'))
        self.assertEqual(second[6],
                         '[svg](6.1/tcp_opt_dsack_sent_once_test-2.svg)')
        pictures = tables.render_pictures(self.run_)
        self.assertIn('tcp_opt_dsack_sent_once_test-2.svg', pictures)
        self.assertEqual(len(pictures), 64)

    def test_log_without_words_has_no_pictures(self) -> None:
        run = parse_file('ktap-pass.log')
        markdown = tables.render_markdown(run, TREE)
        cells = row_of(markdown, 'syn_none_mss1460')
        self.assertEqual(cells, ['syn_none_mss1460', '', '`<mss 1460>`', '—',
                                 '4', '', '—'])
        self.assertEqual(tables.render_pictures(run), {})

    def test_case_without_layout(self) -> None:
        run = Run(cases=[ktap.Case('s', 'broken', 'fail')], crash_lines=[],
                  complete=True)
        self.assertEqual(row_of(tables.render_markdown(run, TREE),
                                'broken'),
                         ['broken', '', '(no layout line)', '—', '', '',
                          '—'])

    def test_no_timestamps_or_paths(self) -> None:
        self.assertNotIn(str(DATA), self.markdown)
        self.assertNotIn('/work', self.markdown)


class WriteAndCheckTest(unittest.TestCase):

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name) / 'layouts'
        self.run_ = parse_file('layouts-sample.log')
        self.written = tables.write_layouts(self.run_, TREE, self.out)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def snapshot(self) -> dict:
        return {path.relative_to(self.out).as_posix(): path.read_bytes()
                for path in sorted(self.out.rglob('*')) if path.is_file()}

    def test_files_written(self) -> None:
        self.assertEqual(self.written[0], self.out / '6.1.md')
        self.assertEqual(len(self.written), 65)
        self.assertTrue((self.out / '6.1' / 'est_nots_0_sacks.svg').is_file())
        self.assertTrue((self.out / '6.1' /
                         'tcp_opt_dsack_sent_once_test-2.svg').is_file())

    def test_byte_identical_when_rewritten(self) -> None:
        before = self.snapshot()
        tables.write_layouts(parse_file('layouts-sample.log'), TREE,
                             self.out)
        self.assertEqual(self.snapshot(), before)
        for name, body in before.items():
            self.assertNotIn(self.tmp.name.encode(), body, name)

    def test_stale_pictures_removed(self) -> None:
        stale = self.out / '6.1' / 'gone_case.svg'
        stale.write_text('<svg/>')
        tables.write_layouts(self.run_, TREE, self.out)
        self.assertFalse(stale.exists())

    def test_matching_docs_have_no_diff(self) -> None:
        self.assertEqual(tables.check_golden(self.run_, TREE, self.out), [])

    def test_changed_layout_names_the_case(self) -> None:
        changed = copy.deepcopy(self.run_)
        case = changed.by_name()['syn_ts_mss536']
        case.layouts[0] = 'mss 537,nop,nop,TS val 1 ecr 0'
        blocks = tables.check_golden(changed, TREE, self.out)
        self.assertEqual(len(blocks), 1)
        block = blocks[0]
        self.assertTrue(block.startswith('case syn_ts_mss536: differs'))
        self.assertIn('-| syn_ts_mss536 |', block)
        self.assertIn('+| syn_ts_mss536 |', block)
        self.assertIn('`<mss 537,nop,nop,TS val 1 ecr 0>`', block)
        self.assertIn('committed 6.1/syn_ts_mss536.svg', block)

    def test_changed_picture_only(self) -> None:
        path = self.out / '6.1' / 'est_ts_1_sack.svg'
        path.write_text(path.read_text().replace('SACK 1 block', 'SACK'))
        blocks = tables.check_golden(self.run_, TREE, self.out)
        self.assertEqual(len(blocks), 1)
        self.assertTrue(blocks[0].startswith('case est_ts_1_sack: differs'))
        self.assertNotIn('committed 6.1.md', blocks[0])

    def test_second_layout_of_a_case(self) -> None:
        changed = copy.deepcopy(self.run_)
        case = changed.by_name()['tcp_opt_dsack_sent_once_test']
        case.mss_deltas[1] = 99
        blocks = tables.check_golden(changed, TREE, self.out)
        self.assertEqual(len(blocks), 1)
        self.assertIn('+| tcp_opt_dsack_sent_once_test (2) |', blocks[0])

    def test_missing_and_extra_cases(self) -> None:
        changed = copy.deepcopy(self.run_)
        removed = changed.cases.pop(0)
        added = copy.deepcopy(changed.cases[0])
        added.name = 'syn_new_case'
        changed.cases.insert(0, added)
        blocks = tables.check_golden(changed, TREE, self.out)
        heads = [block.splitlines()[0] for block in blocks]
        self.assertIn('case syn_new_case: missing from the committed docs',
                      heads)
        self.assertIn(f'case {removed.name}: committed but not in this run',
                      heads)
        self.assertIn(f'6.1/{removed.name}.svg: committed picture of no '
                      'layout in this run', heads)
        new_block = blocks[heads.index('case syn_new_case: missing from the '
                                       'committed docs')]
        self.assertIn('picture 6.1/syn_new_case.svg is not committed',
                      new_block)

    def test_missing_markdown(self) -> None:
        (self.out / '6.1.md').unlink()
        self.assertEqual(tables.check_golden(self.run_, TREE, self.out),
                         ['6.1.md is not committed yet: run with --update'])

    def test_edited_intro(self) -> None:
        path = self.out / '6.1.md'
        path.write_text(path.read_text().replace('do not edit by hand',
                                                 'edit freely'))
        blocks = tables.check_golden(self.run_, TREE, self.out)
        self.assertEqual(len(blocks), 1)
        self.assertTrue(blocks[0].startswith('6.1.md: text outside'))

    def test_update_restores_a_missing_picture(self) -> None:
        path = self.out / '6.1' / 'syn_none_mss1460.svg'
        path.unlink()
        self.assertTrue(tables.check_golden(self.run_, TREE, self.out))
        tables.write_layouts(self.run_, TREE, self.out)
        self.assertTrue(path.is_file())
        self.assertEqual(tables.check_golden(self.run_, TREE, self.out), [])

    def test_no_command_line_of_its_own(self) -> None:
        """./run.sh layouts is the one command line (issue 15)."""
        self.assertFalse(hasattr(tables, 'main'))
        self.assertFalse(hasattr(tables, 'parse_args'))


if __name__ == '__main__':
    unittest.main()
