"""Generated mutants: the operators, stable ids, sampling, the score."""

import tempfile
import unittest
from pathlib import Path

from tcpopt.core.errors import HarnessError, UsageError
from tcpopt.core.settings import Settings
from tcpopt.mutation import (boot, generated, operators, results, scorecard,
                             targets)
from tcpopt.mutation.operators import Mutant
from tcpopt.mutation.results import Result

SOURCE = '''\
static int helper(int a);

static unsigned int tcp_syn_options(struct sock *sk, int remaining)
{
	/* a comment with a < b and 7 */
	unsigned int size = 0;

	if (remaining >= TCPOLEN_MSS_ALIGNED) {
		size += TCPOLEN_MSS_ALIGNED;
		remaining -= 4;
	}
	if (a && !b)
		size |= 1 << 3;
#ifdef CONFIG_X
	*ptr++ = htonl(1);
	*ptr++ = htonl(2 |
		       3);
#endif
	return size;
}

static void other(void)
{
	x = 1 + 2;
}
'''
TWINS = {'TCPOLEN_MSS': (('twin', 'TCPOLEN_MSS_ALIGNED'),),
         'TCPOLEN_MSS_ALIGNED': (('twin', 'TCPOLEN_MSS'),)}


def changes(mutants, kind):
    return [(m.line, m.describe()) for m in mutants if m.kind == kind]


class GenerateTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.mutants = operators.generate('f.c', SOURCE, ['tcp_syn_options'],
                                         TWINS)

    def test_only_the_named_function_and_never_comments(self):
        self.assertEqual({m.function for m in self.mutants},
                         {'tcp_syn_options'})
        lines = {m.line for m in self.mutants}
        self.assertTrue(lines <= set(range(6, 20)), lines)
        self.assertNotIn(5, lines)          # the comment
        self.assertNotIn(14, lines)         # the preprocessor line
        self.assertIn((6, 'unsigned int size = 0;  ->  '
                       'unsigned int size = 1;'),
                      changes(self.mutants, 'constant'))

    def test_relational_and_logical(self):
        self.assertIn((8, 'if (remaining >= TCPOLEN_MSS_ALIGNED) {  ->  '
                       'if (remaining > TCPOLEN_MSS_ALIGNED) {'),
                      changes(self.mutants, 'relational'))
        self.assertEqual(changes(self.mutants, 'logical'),
                         [(12, 'if (a && !b)  ->  if (a || !b)')])

    def test_arithmetic_bitwise_and_shifts(self):
        self.assertIn((9, 'size += TCPOLEN_MSS_ALIGNED;  ->  '
                       'size -= TCPOLEN_MSS_ALIGNED;'),
                      changes(self.mutants, 'arithmetic'))
        self.assertIn((13, 'size |= 1 << 3;  ->  size |= 1 >> 3;'),
                      changes(self.mutants, 'arithmetic'))
        self.assertIn((13, 'size |= 1 << 3;  ->  size &= 1 << 3;'),
                      changes(self.mutants, 'bitwise'))
        # '!' and the unary '*' of '*ptr++' are not binary operators.
        self.assertFalse([c for c in changes(self.mutants, 'arithmetic')
                          if c[0] == 15])

    def test_constants_and_twins(self):
        self.assertIn((10, 'remaining -= 4;  ->  remaining -= 5;'),
                      changes(self.mutants, 'constant'))
        self.assertIn((10, 'remaining -= 4;  ->  remaining -= 3;'),
                      changes(self.mutants, 'constant'))
        self.assertIn((9, 'size += TCPOLEN_MSS_ALIGNED;  ->  '
                       'size += TCPOLEN_MSS;'), changes(self.mutants, 'twin'))

    def test_statements_if_conditions_and_adjacent_writes(self):
        self.assertIn((10, 'remaining -= 4;  ->  (deleted)'),
                      changes(self.mutants, 'delete'))
        self.assertIn((12, 'if (a && !b)  ->  if (1)'),
                      changes(self.mutants, 'if-true'))
        [swap] = [m for m in self.mutants if m.kind == 'swap']
        self.assertEqual((swap.line, swap.count), (15, 3))
        self.assertTrue(swap.after.startswith('\t*ptr++ = htonl(2 |'))
        # A declaration or a return is no statement to delete.
        deleted = [m.line for m in self.mutants if m.kind == 'delete']
        self.assertNotIn(6, deleted)
        self.assertNotIn(19, deleted)

    def test_a_deleted_statement_leaves_an_empty_one(self):
        [unbraced] = [m for m in self.mutants
                      if m.kind == 'delete' and m.line == 13]
        self.assertEqual(unbraced.after, '\t\t;')

    def test_ids_are_stable_and_unique(self):
        again = operators.generate('f.c', SOURCE, ['tcp_syn_options'], TWINS)
        self.assertEqual([m.ident for m in again],
                         [m.ident for m in self.mutants])
        self.assertEqual(len({m.ident for m in self.mutants}),
                         len(self.mutants))
        # The same change moved down by a line keeps its id.
        moved = operators.generate('f.c', '\n' + SOURCE, ['tcp_syn_options'],
                                   TWINS)
        self.assertEqual([m.ident for m in moved],
                         [m.ident for m in self.mutants])

    def test_a_function_the_tree_lacks_gives_nothing(self):
        self.assertEqual(operators.generate('f.c', SOURCE, ['nope'], TWINS),
                         [])


MPTCP_WRITER = '''\
void mptcp_write_options(__be32 *ptr, u8 *bptr)
{
	*ptr++ = mptcp_option(MPTCPOPT_MP_JOIN,
			      TCPOLEN_MPTCP_MPJ_SYN, 0, 0);
	put_unaligned_be32(opts->token, ptr);
	ptr += 1;
	put_unaligned_be64(opts->thmac, ptr);
	ptr += 2;
	put_unaligned_be16(port, bptr);
	bptr += 2;
	len = TCPOLEN_MPTCP_DSS_ACK32 + TCPOLEN_MPTCP_PRIO;
}
'''


class WriteSwapTest(unittest.TestCase):
    """Two adjacent writes through one pointer, swapped: the fields of an
    option in the wrong order. A put_unaligned_be*() takes the pointer
    step after it along."""

    def swaps(self):
        return [m for m in operators.generate(
            'f.c', MPTCP_WRITER, ['mptcp_write_options'], {})
            if m.kind == 'swap']

    def test_each_pair_through_one_pointer_is_swapped(self):
        got = [(m.line, m.count) for m in self.swaps()]
        # *ptr++ with the token, the token with the HMAC; never the HMAC
        # with the port, which goes through bptr.
        self.assertEqual(got, [(3, 4), (5, 4)])

    def test_the_pointer_step_moves_with_its_write(self):
        second = self.swaps()[1]
        self.assertEqual(second.after.split('\n'), [
            '\tput_unaligned_be64(opts->thmac, ptr);', '\tptr += 2;',
            '\tput_unaligned_be32(opts->token, ptr);', '\tptr += 1;'])

    def test_a_swap_applies_as_valid_text(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'f.c').write_text(MPTCP_WRITER)
            generated.apply(Path(tmp), self.swaps()[0])
            lines = (Path(tmp) / 'f.c').read_text().split('\n')
        self.assertEqual(lines[2:7], [
            '\tput_unaligned_be32(opts->token, ptr);', '\tptr += 1;',
            '\t*ptr++ = mptcp_option(MPTCPOPT_MP_JOIN,',
            '\t\t\t      TCPOLEN_MPTCP_MPJ_SYN, 0, 0);',
            '\tput_unaligned_be64(opts->thmac, ptr);'])


PROTOCOL_H = '''\
#define TCPOLEN_MPTCP_MPC_SYN		4
#define TCPOLEN_MPTCP_MPC_ACK		20
#define TCPOLEN_MPTCP_MPC_ACK_DATA	22
#define TCPOLEN_MPTCP_DSS_ACK32		4
#define TCPOLEN_MPTCP_DSS_ACK64		8
#define TCPOLEN_MPTCP_ADD_ADDR		16
#define TCPOLEN_MPTCP_ADD_ADDR_PORT	18
#define TCPOLEN_MPTCP_ADD_ADDR_BASE	8
#define TCPOLEN_MPTCP_ADD_ADDR6		28
#define TCPOLEN_MPTCP_ADD_ADDR6_BASE_PORT	22
#define TCPOLEN_MPTCP_PORT_LEN		2
#define TCPOLEN_MPTCP_PORT_ALIGN	2
#define TCPOLEN_MPTCP_PRIO		3
#define TCPOLEN_MPTCP_PRIO_ALIGN	4
'''


class LengthSwapTest(unittest.TestCase):
    """TCPOLEN_X and its _ALIGNED twin; an MPTCP length and its family's
    neighbours: a word more or less, or one word's digits."""

    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / 'include/net').mkdir(parents=True)
            (root / 'net/mptcp').mkdir(parents=True)
            (root / 'include/net/tcp.h').write_text(
                '#define TCPOLEN_MSS 4\n#define TCPOLEN_MSS_ALIGNED 4\n'
                '#define TCPOLEN_WINDOW 3\n')
            (root / 'net/mptcp/protocol.h').write_text(PROTOCOL_H)
            cls.swaps = operators.tcpolen_twins(root)

    def others(self, name, kind='family'):
        return sorted(o for k, o in self.swaps.get(name, ()) if k == kind)

    def test_aligned_twins(self):
        self.assertEqual(self.others('TCPOLEN_MSS', 'twin'),
                         ['TCPOLEN_MSS_ALIGNED'])
        self.assertNotIn('TCPOLEN_WINDOW', self.swaps)

    def test_the_issue_s_pairs_are_neighbours(self):
        self.assertEqual(self.others('TCPOLEN_MPTCP_DSS_ACK32'),
                         ['TCPOLEN_MPTCP_DSS_ACK64'])
        self.assertEqual(self.others('TCPOLEN_MPTCP_PRIO'),
                         ['TCPOLEN_MPTCP_PRIO_ALIGN'])
        # ADD_ADDR with a port, without its HMAC, for IPv6.
        self.assertEqual(self.others('TCPOLEN_MPTCP_ADD_ADDR'), [
            'TCPOLEN_MPTCP_ADD_ADDR6', 'TCPOLEN_MPTCP_ADD_ADDR_BASE',
            'TCPOLEN_MPTCP_ADD_ADDR_PORT'])
        self.assertEqual(self.others('TCPOLEN_MPTCP_MPC_ACK_DATA'),
                         ['TCPOLEN_MPTCP_MPC_ACK'])

    def test_more_than_one_slip_apart_is_no_neighbour(self):
        self.assertEqual(self.others('TCPOLEN_MPTCP_ADD_ADDR6_BASE_PORT'), [])
        self.assertEqual(self.others('TCPOLEN_MPTCP_MPC_SYN'), [])
        self.assertEqual(self.others('TCPOLEN_MPTCP_PORT_LEN'), [])

    def test_a_length_in_code_gets_one_mutant_per_neighbour(self):
        got = operators.generate('f.c', MPTCP_WRITER,
                                 ['mptcp_write_options'], self.swaps)
        self.assertEqual(
            [m.describe().split('->')[1].strip() for m in got
             if m.kind == 'family'],
            ['len = TCPOLEN_MPTCP_DSS_ACK64 + TCPOLEN_MPTCP_PRIO;',
             'len = TCPOLEN_MPTCP_DSS_ACK32 + TCPOLEN_MPTCP_PRIO_ALIGN;'])


class ReturnTest(unittest.TestCase):

    def test_a_bare_return_is_deleted_a_valued_one_is_not(self):
        source = ('static void tcp_parse_options(int length)\n{\n'
                  '\tif (length > 2)\n\t\treturn;\n\treturn;\n}\n'
                  'static int tcp_syn_options(void)\n{\n\treturn 0;\n}\n')
        got = operators.generate('f.c', source, ['tcp_parse_options',
                                                 'tcp_syn_options'], {})
        deleted = [(m.function, m.line) for m in got if m.kind == 'delete']
        self.assertEqual(deleted, [('tcp_parse_options', 4),
                                   ('tcp_parse_options', 5)])


class SelectTest(unittest.TestCase):

    def test_ids_pick_mutants_and_an_unknown_one_is_a_usage_error(self):
        mutants = operators.generate('f.c', SOURCE, ['tcp_syn_options'], TWINS)
        pick = [mutants[3].ident, mutants[0].ident]
        self.assertEqual(targets.select(mutants, pick),
                         [mutants[3], mutants[0]])
        self.assertEqual(targets.select(mutants, None), mutants)
        with self.assertRaisesRegex(UsageError, 'no such mutant nope'):
            targets.select(mutants, ['nope'])


class ApplyTest(unittest.TestCase):

    def test_apply_writes_the_mutant_and_returns_the_original(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / 'f.c'
            path.write_text(SOURCE)
            [swap] = [m for m in operators.generate(
                'f.c', SOURCE, ['tcp_syn_options'], TWINS) if m.kind == 'swap']
            original = generated.apply(Path(tmp), swap)
            self.assertEqual(original, SOURCE)
            lines = path.read_text().split('\n')
            self.assertEqual(lines[14:17], ['\t*ptr++ = htonl(2 |',
                                            '\t\t       3);',
                                            '\t*ptr++ = htonl(1);'])

    def test_apply_refuses_text_that_moved(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'f.c').write_text(SOURCE)
            mutant = Mutant('f.c', 'x', 3, 1, 'delete', 'nothing like it', ';')
            with self.assertRaises(HarnessError):
                generated.apply(Path(tmp), mutant)


class SampleAndScoreTest(unittest.TestCase):

    def setUp(self):
        self.mutants = operators.generate('f.c', SOURCE, ['tcp_syn_options'],
                                          TWINS)

    def test_sample_is_fixed_by_the_seed_and_keeps_source_order(self):
        one = targets.sample(self.mutants, 5, 7)
        self.assertEqual(one, targets.sample(self.mutants, 5, 7))
        self.assertNotEqual(one, targets.sample(self.mutants, 5, 8))
        self.assertEqual(one, sorted(one, key=self.mutants.index))
        self.assertEqual(targets.sample(self.mutants, None, 7), self.mutants)

    def test_score_leaves_out_no_build_and_equivalent(self):
        a, b, c, d, e = self.mutants[:5]
        results = {a.ident: Result('killed', ['x']),
                   b.ident: Result('survived'),
                   c.ident: Result('no-build'),
                   d.ident: Result('survived'),
                   e.ident: Result('killed', ['y'])}
        equivalents = {d.ident: 'why', e.ident: 'wrong'}
        total = scorecard.score(self.mutants[:6], results, equivalents)
        self.assertEqual((total.killed, total.survived, total.no_build,
                          total.equivalent, total.not_run),
                         (1, 1, 1, 2, 1))
        self.assertEqual(total.denominator, 2)
        self.assertEqual(total.flagged, [e.ident])
        self.assertEqual(scorecard.survivors(self.mutants[:6], results,
                                             equivalents), [b])


class TestsChangedDuringARunTest(unittest.TestCase):
    """A run whose kunit/ changes stops before the next mutant: its
    kernel has the old cases, which the new sources would misname."""

    def test_the_run_stops_naming_what_was_measured(self):
        from unittest import mock
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / 'repo' / 'kunit').mkdir(parents=True)
            source = root / 'repo' / 'kunit' / 't.c'
            source.write_text(KUNIT_SOURCE)
            (root / 'repo' / '.kunitconfig').write_text('CONFIG_KUNIT=y\n')
            settings = Settings(tree='6.1', work_dir=root / 'work',
                                repo=root / 'repo')
            tree = mock.Mock(src=root / 'tree')
            mutants = [Mutant('f.c', 'f', 1, 1, 'delete', 'x;', ';'),
                       Mutant('f.c', 'f', 2, 1, 'delete', 'y;', ';')]

            def measure(*_args):
                source.write_text(KUNIT_SOURCE + '/* edited */\n')
                return Result('killed', ['case_a'])

            with mock.patch.object(generated, 'load_results',
                                   return_value={}), \
                    mock.patch.object(generated, 'save_results'), \
                    mock.patch.object(generated, 'reference_objects',
                                      return_value={}), \
                    mock.patch.object(generated, 'stages',
                                      return_value=[]), \
                    mock.patch.object(generated, 'run_one',
                                      side_effect=measure) as run_one:
                with self.assertRaisesRegex(HarnessError,
                                            'changed during the run: 1 of 2'):
                    generated.run_all(settings, tree, root / 'build',
                                      mutants)
            self.assertEqual(run_one.call_count, 1)


class RecheckTest(unittest.TestCase):
    """A survivor is compared once more with the original built again."""

    def recheck(self, original_now):
        from unittest import mock
        mutant = Mutant('f.c', 'f', 1, 1, 'delete', 'x;', ';')
        reference = {'f.c': 'stale'}
        with mock.patch.object(generated, 'reference_objects',
                               return_value={'f.c': original_now}):
            verdict = generated.recheck_survivor(
                None, None, Path('/build'), mutant, reference, 'mutant',
                Result('survived', compared=True))
        self.assertEqual(reference, {'f.c': original_now})
        return verdict.verdict

    def test_the_same_object_as_the_original_now_is_same_code(self):
        self.assertEqual(self.recheck('mutant'), results.SAME_CODE)

    def test_another_object_still_survives(self):
        self.assertEqual(self.recheck('original'), 'survived')


class EveryTargetTest(unittest.TestCase):
    """A sample draws from every function in turn; a full run's report
    and docs/mutation.md count per function."""

    def setUp(self):
        self.mutants = operators.generate(
            'f.c', SOURCE + MPTCP_WRITER, ['tcp_syn_options',
                                           'mptcp_write_options'], TWINS)

    def test_a_sample_of_two_has_one_of_each_function(self):
        for seed in range(20):
            picked = targets.sample(self.mutants, 2, seed)
            self.assertEqual(sorted(m.function for m in picked),
                             ['mptcp_write_options', 'tcp_syn_options'])

    def test_the_per_function_table_counts_each_verdict(self):
        syn = [m for m in self.mutants if m.function == 'tcp_syn_options']
        verdicts = {syn[0].ident: Result('killed', ['x']),
                    syn[1].ident: Result('survived'),
                    syn[2].ident: Result(results.SAME_CODE)}
        table = scorecard.function_table(self.mutants, verdicts,
                                         {syn[3].ident: 'why'})
        rows = table.split('\n')[2:]
        self.assertEqual(rows[0], f'| `tcp_syn_options()` | {len(syn)} | '
                         f'1 | 1 | 1 | 0 | {len(syn) - 3} |')
        self.assertTrue(rows[1].startswith('| `mptcp_write_options()` |'))

    def test_the_summary_block_is_replaced_not_repeated(self):
        block = scorecard.summary_block('6.1', scorecard.Score(generated=1),
                                        'table', '2026-12-06')
        once = scorecard.update_summary('# doc\n', '6.1', block)
        newer = block.replace('table', 'newer table')
        twice = scorecard.update_summary(once, '6.1', newer)
        self.assertEqual(twice.count('/mutate 6.1'), 1)
        self.assertIn('newer table', twice)
        self.assertTrue(twice.startswith('# doc\n'))
        other = scorecard.update_summary(twice, '7.3', block.replace(
            '6.1', '7.3'))
        self.assertIn('newer table', other)
        self.assertEqual(other.count('<!-- mutate '), 2)


class EquivalentsTest(unittest.TestCase):

    def test_every_line_needs_a_reason(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / 'x.equivalent'
            path.write_text('# comment\n\nf-1234abcd the branch is dead\n')
            self.assertEqual(results.read_equivalents(path),
                             {'f-1234abcd': 'the branch is dead'})
            path.write_text('f-1234abcd\n')
            with self.assertRaisesRegex(HarnessError, 'x.equivalent:1'):
                results.read_equivalents(path)


KUNIT_SOURCE = """static struct kunit_case cases[] = {
\tKUNIT_CASE(case_a),
\tKUNIT_CASE(case_b),
\t{}
};"""


class ResultsFileTest(unittest.TestCase):
    """Verdicts survive a resumed run, and a test change re-runs only what
    a test change can alter."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        root = Path(tmp.name)
        (root / 'repo' / 'kunit').mkdir(parents=True)
        self.test_source = root / 'repo' / 'kunit' / 't.c'
        self.test_source.write_text(KUNIT_SOURCE)
        (root / 'repo' / '.kunitconfig').write_text('CONFIG_KUNIT=y\n')
        self.settings = Settings(tree='6.1', work_dir=root / 'work',
                                 repo=root / 'repo')
        self.tree = root / 'tree'
        for file in targets.TARGETS:
            (self.tree / file).parent.mkdir(parents=True, exist_ok=True)
            (self.tree / file).write_text(f'/* {file} */\n')
        tests = results.tests_fingerprint(self.settings)
        self.results = {
            'killed-a': Result('killed', ['case_a'], 1.0, tests),
            'killed-gone': Result('killed', ['case_gone'], 1.0, tests),
            'crashed': Result('killed', ['(kernel crashed)'], 1.0, tests),
            'survived': Result('survived', [], 1.0, tests, True),
            'survived-unchecked': Result('survived', [], 1.0, tests),
            'same-code': Result(results.SAME_CODE, [], 1.0, tests, True),
            'no-build': Result('no-build', [], 1.0, tests)}

    def load(self):
        return results.load_results(self.settings, self.tree)

    def test_saved_results_load_back(self):
        results.save_results(self.settings, self.tree, self.results)
        expected = dict(self.results)
        # Measured before objects were compared: it runs again.
        del expected['survived-unchecked']
        self.assertEqual(self.load(), expected)

    def test_a_test_change_reruns_survivors_and_lost_kills(self):
        results.save_results(self.settings, self.tree, self.results)
        self.test_source.write_text(KUNIT_SOURCE.replace(
            'KUNIT_CASE(case_b)', 'KUNIT_CASE(case_b),\n\tKUNIT_CASE(case_c)'))
        self.assertEqual(sorted(self.load()),
                         ['killed-a', 'no-build', 'same-code'])

    def test_other_build_options_keep_only_kills_whose_cases_exist(self):
        (self.settings.repo / '.kunitconfig').write_text('CONFIG_KUNIT=y\n')
        results.save_results(self.settings, self.tree, self.results)
        (self.settings.repo / '.kunitconfig').write_text(
            'CONFIG_KUNIT=y\nCONFIG_MPTCP=y\n')
        self.assertEqual(sorted(self.load()), ['killed-a'])

    def test_results_without_build_options_count_as_other_options(self):
        import json
        results.save_results(self.settings, self.tree, self.results)
        path = results.results_file(self.settings)
        data = json.loads(path.read_text())
        del data['config']
        path.write_text(json.dumps(data))
        self.assertEqual(sorted(self.load()), ['killed-a'])

    def test_a_file_joining_the_targets_keeps_the_verdicts(self):
        import json
        results.save_results(self.settings, self.tree, self.results)
        path = results.results_file(self.settings)
        data = json.loads(path.read_text())
        data['code'] = results.digest([self.tree / f
                                       for f in results.LEGACY_FILES])
        path.write_text(json.dumps(data))
        self.assertEqual(sorted(self.load()), sorted(
            k for k in self.results if k != 'survived-unchecked'))
        (self.tree / 'net/ipv4/tcp_input.c').write_text('/* changed */\n')
        self.assertEqual(self.load(), {})

    def test_a_code_change_reruns_everything(self):
        results.save_results(self.settings, self.tree, self.results)
        (self.tree / 'net/ipv4/tcp_output.c').write_text('/* changed */\n')
        self.assertEqual(self.load(), {})

    def test_the_record_resumes_a_run_on_a_new_machine(self):
        results.save_results(self.settings, self.tree, self.results,
                             record=True)
        results.results_file(self.settings).unlink()    # a new machine
        expected = dict(self.results)
        del expected['survived-unchecked']
        self.assertEqual(results.load_results(self.settings, self.tree,
                                              record=True), expected)
        self.assertEqual(self.load(), {})   # the CI sample measures

    def test_the_record_keeps_a_kills_first_cases_and_their_count(self):
        many = [f'case_{n}' for n in range(results.RECORD_FAILING + 5)]
        self.results['killed-a'] = Result('killed', many, 1.0,
                                          self.results['killed-a'].tests)
        results.save_results(self.settings, self.tree, self.results,
                             record=True)
        kept = results.load_record(self.settings, self.tree)
        # Its cases no longer exist in t.c: only the unchanged tests keep it.
        self.assertEqual(kept['killed-a'].failing,
                         many[:results.RECORD_FAILING])
        self.assertEqual(kept['killed-a'].more_failing, 5)

    def test_the_record_is_a_mutant_a_line_in_id_order(self):
        results.save_results(self.settings, self.tree, self.results,
                             record=True)
        lines = results.record_file(self.settings).read_text().splitlines()
        self.assertIn('code', lines[0])
        import json
        self.assertEqual([json.loads(line)['id'] for line in lines[1:]],
                         sorted(self.results))

    def test_a_work_verdict_wins_over_the_record(self):
        results.save_results(self.settings, self.tree, self.results,
                             record=True)
        tests = self.results['survived'].tests
        results.save_results(self.settings, self.tree, {
            'survived': Result('killed', ['case_a'], 2.0, tests, True)})
        self.assertEqual(results.load_results(
            self.settings, self.tree, record=True)['survived'].verdict,
            'killed')

    def test_an_unreadable_record_is_no_record(self):
        path = results.record_file(self.settings)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{not json\n')
        self.assertEqual(results.load_record(self.settings, self.tree), {})

    def test_the_combined_format_is_carried_over_once(self):
        import json
        path = results.results_file(self.settings)
        path.parent.mkdir(parents=True)
        old = {k: {'verdict': r.verdict, 'failing': r.failing,
                   'seconds': r.seconds} for k, r in self.results.items()}
        path.write_text(json.dumps({
            'fingerprint': results.combined_fingerprint(self.settings,
                                                          self.tree),
            'results': old}))
        self.assertEqual(sorted(self.load()), sorted(self.results))
        self.assertIn('code', json.loads(path.read_text()))


class StagesTest(unittest.TestCase):
    """Each stage boots, on the same kernel, only for a mutant the stages
    before it did not kill. 6.1's series has the two layers: the upstream
    suites, then the harness's unit suites, then the live suite."""

    # Each stage's glob and seconds, and a case only it reports.
    GLOBS = [('tcp_opt_[lw][ar]*', 15), ('tcp_opt_[!blw]*', 30),
             ('tcp_opt_live', 30)]
    OWN_CASES = ['md5_drops_ts', 'syn_ts_sack_ws_mss1460_ws7',
                 'live_ts_sack_ws']

    def make_settings(self):
        return Settings(tree='6.1', work_dir=Path('/nonexistent'))

    def setUp(self):
        from tcpopt.log import ktap
        self.ktap = ktap
        self.settings = self.make_settings()
        self.calls = []
        self.cases = [list(stage.cases) for stage in
                      boot.stages(self.settings)]
        self.mutant = Mutant('f.c', 'f', 1, 1, 'delete', 'x;', ';')

    def fake_run(self, failing_stage):
        def run_suites(settings, src, build, output, timeout=None,
                       filter_glob=None, action='run'):
            number = len(self.calls)
            self.calls.append((filter_glob, action, timeout))
            names = self.cases[number]
            cases = [self.ktap.Case('s', name, 'fail' if (
                number == failing_stage and index == 0) else 'pass')
                for index, name in enumerate(names)]
            return self.ktap.Run(cases=cases, crash_lines=[], complete=True)
        return run_suites

    def stages(self, failing_stage, digest='mutated', builds=True):
        from unittest import mock
        self.calls = []
        with mock.patch('tcpopt.mutation.regressions.run_suites',
                        side_effect=self.fake_run(failing_stage)), \
                mock.patch('tcpopt.mutation.generated.build_only',
                           return_value=builds), \
                mock.patch('tcpopt.mutation.generated.object_digest',
                           return_value=digest):
            return generated.run_stages(self.settings, Path('/src'),
                                        Path('/build'), self.mutant,
                                        {'f.c': 'original'},
                                        boot.stages(self.settings))

    def test_the_stages_split_the_cases(self):
        self.assertEqual(len(self.cases), len(self.GLOBS))
        for number, (cases, own) in enumerate(zip(self.cases,
                                                  self.OWN_CASES)):
            with self.subTest(stage=self.GLOBS[number][0]):
                self.assertIn(own, cases)
                for other in self.cases[number + 1:]:
                    self.assertFalse(set(cases) & set(other))

    def test_the_original_object_is_never_booted(self):
        result = self.stages(0, digest='original')
        self.assertEqual(result.verdict, results.SAME_CODE)
        self.assertEqual(self.calls, [])

    def test_a_build_failure_is_no_build(self):
        self.assertEqual(self.stages(0, builds=False).verdict, 'no-build')
        self.assertEqual(self.calls, [])

    def test_killed_in_a_stage_never_boots_the_later_ones(self):
        for number, (glob, _) in enumerate(self.GLOBS):
            with self.subTest(stage=glob):
                result = self.stages(number)
                self.assertEqual((result.verdict, result.failing,
                                  result.stage),
                                 ('killed', [self.cases[number][0]], glob))
                self.assertEqual(self.calls,
                                 [(g, 'exec', seconds) for g, seconds
                                  in self.GLOBS[:number + 1]])

    def test_every_stage_execs_the_same_kernel(self):
        self.stages(None)
        self.assertEqual([call[:2] for call in self.calls],
                         [(glob, 'exec') for glob, _ in self.GLOBS])

    def stall_then(self, second_status):
        """The unit stage stops at its timeout with nothing failed, then
        boots again: @second_status for every case, or None for a second
        stall."""
        self.calls = []

        def run_suites(settings, src, build, output, timeout=None,
                       filter_glob=None, action='run'):
            number = len(self.calls)
            self.calls.append((filter_glob, action, timeout))
            # Calls: upstream, unit (stalls), unit again, live.
            names = self.cases[(0, 1, 1, 2)[number]]
            if number == 1 or (number == 2 and second_status is None):
                return self.ktap.Run(cases=[self.ktap.Case('s', names[0],
                                                           'pass')],
                                     crash_lines=[], complete=False)
            status = second_status if number == 2 else 'pass'
            return self.ktap.Run(cases=[self.ktap.Case('s', n, status)
                                        for n in names],
                                 crash_lines=[], complete=True)
        return self.boot_with(run_suites)

    def boot_with(self, run_suites):
        """run_stages() on a mutant that builds, with @run_suites."""
        from unittest import mock
        with mock.patch('tcpopt.mutation.regressions.run_suites',
                        side_effect=run_suites), \
                mock.patch('tcpopt.mutation.generated.build_only',
                           return_value=True), \
                mock.patch('tcpopt.mutation.generated.object_digest',
                           return_value='mutated'):
            return generated.run_stages(self.settings, Path('/src'),
                                        Path('/build'), self.mutant,
                                        {'f.c': 'original'},
                                        boot.stages(self.settings))

    def test_a_stage_stopped_by_a_busy_machine_is_booted_again(self):
        if len(self.GLOBS) != 3:
            self.skipTest('the two-layer stages')
        result = self.stall_then('pass')
        self.assertEqual(result.verdict, 'survived')
        glob, seconds = self.GLOBS[1]
        self.assertEqual(self.calls[1:3], [
            (glob, 'exec', seconds),
            (glob, 'exec', seconds * generated.STALL_RETRY_FACTOR)])

    def test_a_stage_that_stalls_twice_kills(self):
        if len(self.GLOBS) != 3:
            self.skipTest('the two-layer stages')
        result = self.stall_then(None)
        self.assertEqual((result.verdict, result.stage),
                         ('killed', self.GLOBS[1][0]))
        self.assertEqual(len(self.calls), 3)

    def test_a_crash_is_not_booted_again(self):
        self.calls = []

        def run_suites(settings, src, build, output, timeout=None,
                       filter_glob=None, action='run'):
            self.calls.append(timeout)
            return self.ktap.Run(cases=[], crash_lines=['Kernel panic'],
                                 complete=False)
        result = self.boot_with(run_suites)
        self.assertEqual(result.verdict, 'killed')
        self.assertEqual(self.calls, [self.GLOBS[0][1]])

    def test_survives_only_every_stage(self):
        result = self.stages(None)
        self.assertEqual((result.verdict, result.compared),
                         ('survived', True))
        self.assertEqual(len(self.calls), len(self.GLOBS))


class OneLayerStagesTest(StagesTest):
    """A series of one layer (no upstream/ folder, as 6.1's once was):
    the unit suites first, then the live suite."""

    GLOBS = [('tcp_opt_[!bl]*', 15), ('tcp_opt_live', 30)]
    OWN_CASES = ['syn_ts_sack_ws_mss1460_ws7', 'live_ts_sack_ws']

    def make_settings(self):
        from tcpopt.core.settings import REPO
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        repo = Path(tmp.name)
        (repo / 'kernel-patches' / '6.1').mkdir(parents=True)
        (repo / 'kunit').symlink_to(REPO / 'kunit')
        settings = Settings(tree='6.1', work_dir=Path('/nonexistent'),
                            repo=repo)
        self.assertFalse(settings.layered)
        return settings


class LayeredStagesTest(unittest.TestCase):
    """On a tree with the two layers the upstream suites boot first,
    alone, and each stage's glob picks exactly its own suites."""

    def setUp(self):
        self.stages = boot.stages(Settings(tree='7.3',
                                                work_dir=Path('/nonexistent')))

    def test_upstream_first_then_units_then_live(self):
        self.assertEqual([s.glob for s in self.stages],
                         [boot.UPSTREAM_STAGE[0],
                          boot.LAYERED_UNIT_STAGE[0],
                          boot.LIVE_STAGE[0]])
        upstream, units, live = (set(s.cases) for s in self.stages)
        self.assertIn('md5_drops_ts', upstream)
        self.assertIn('live_ts_sack_ws', live)
        self.assertNotIn('live_ts_sack_ws', units)

    def test_a_glob_that_picks_another_stage_suites_is_an_error(self):
        from unittest import mock
        with mock.patch.object(boot, 'LAYERED_UNIT_STAGE',
                               ('tcp_opt_[!bl]*', 15)):
            with self.assertRaisesRegex(HarnessError, 'tcp_opt_write'):
                boot.stages(Settings(tree='7.3',
                                          work_dir=Path('/nonexistent')))


class ObjectDigestTest(unittest.TestCase):
    """Two objects that differ only in debug info digest the same."""

    def compile(self, tmp, name, source, *flags):
        import subprocess
        src = Path(tmp) / f'{name}.c'
        src.write_text(source)
        subprocess.run(['gcc', '-c', '-O2', *flags, '-o',
                        str(Path(tmp) / f'{name}.o'), str(src)], check=True)
        return f'{name}.c'

    def test_debug_info_aside(self):
        import shutil
        if not shutil.which('gcc') or not shutil.which('objcopy'):
            self.skipTest('gcc and objcopy are needed')
        with tempfile.TemporaryDirectory() as tmp:
            one = self.compile(tmp, 'one', 'int f(int a) { return a + 1; }\n',
                               '-g')
            same = self.compile(tmp, 'same',
                                '\nint f(int a)\n{ return 1 + a; }\n', '-g')
            other = self.compile(tmp, 'other',
                                 'int f(int a) { return a - 1; }\n', '-g')
            digests = [generated.object_digest(Path(tmp), name)
                       for name in (one, same, other)]
        self.assertEqual(digests[0], digests[1])
        self.assertNotEqual(digests[0], digests[2])


class ScratchTreeTest(unittest.TestCase):

    def test_the_scratch_tree_rebuilds_every_file_a_mutant_changes(self):
        from tcpopt.mutation import regressions
        self.assertLessEqual(set(targets.TARGETS),
                             set(regressions.MUTATED_FILES))


class RealTreeTest(unittest.TestCase):
    """The generator on the shipped 6.1 tree, where one is extracted."""

    def test_unknown_function_is_a_usage_error(self):
        settings = Settings(tree='6.1', work_dir=Path('/nonexistent'))
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            for file in targets.TARGETS:
                (tree / file).parent.mkdir(parents=True, exist_ok=True)
                (tree / file).write_text(SOURCE)
            with self.assertRaisesRegex(UsageError, 'no such target'):
                targets.all_mutants(settings, tree, ['tcp_options_writ'])


if __name__ == '__main__':
    unittest.main()


class GroupTest(unittest.TestCase):
    """--functions layout names the upstream layout functions, and a run
    of exactly them has its own report."""

    def test_a_group_expands_to_its_functions(self):
        self.assertEqual(targets.expand(['layout', 'tcp_parse_options']),
                         list(targets.LAYOUT_FUNCTIONS) +
                         ['tcp_parse_options'])
        self.assertIsNone(targets.expand(None))

    def test_only_the_exact_group_is_a_group(self):
        self.assertEqual(targets.group_of(targets.LAYOUT_FUNCTIONS),
                         'layout')
        self.assertIsNone(targets.group_of(targets.LAYOUT_FUNCTIONS[:2]))
        self.assertIsNone(targets.group_of(None))

    def test_the_upstream_line_counts_the_kills_of_its_stage(self):
        mutants = [Mutant('f.c', 'f', i, 1, 'delete', f'x{i};', ';')
                   for i in range(3)]
        stages = (boot.UPSTREAM_STAGE[0], boot.LAYERED_UNIT_STAGE[0])
        results = {mutants[0].ident: Result('killed', ['a'],
                                            stage=stages[0]),
                   mutants[1].ident: Result('killed', ['b'],
                                            stage=stages[1]),
                   mutants[2].ident: Result('survived')}
        self.assertIn('killed 1 of the 2 killed',
                      scorecard.upstream_line(mutants, results))

    def test_a_kernel_style_definition_is_found(self):
        lines = ['static inline unsigned int', 'name(int a)', '{',
                 '\treturn a;', '}', 'int other(void)', '{', '\tname(1);',
                 '}']
        self.assertEqual(operators.function_span(lines, 'name'), (2, 4))


class TestSourcesTest(unittest.TestCase):
    """A change of the upstream tests is a change of the tests: the
    survivors run again."""

    def test_the_upstream_tests_are_test_sources(self):
        settings = Settings(tree='7.3', work_dir=Path('/nonexistent'))
        names = [p.relative_to(settings.kunit_dir).as_posix()
                 for p in results.test_paths(settings)]
        self.assertIn('tests/tcp_output_kunit.c', names)
        self.assertIn('tcp_options_test.c', names)


class RegressionSelectionTest(unittest.TestCase):
    """The CI's 2.6.27 pair is picked by name, and a name a tree lacks is
    an error, not an empty step that passes."""

    def test_the_2008_pair_on_every_tree(self) -> None:
        from tcpopt.core.settings import REGRESSIONS_2008, TEST_TREES
        from tcpopt.mutation import regressions
        for tree in TEST_TREES:
            with self.subTest(tree=tree):
                chosen = regressions.regressions(Settings(tree, Path('/w')),
                                                 REGRESSIONS_2008)
                self.assertEqual([p.name for p in chosen],
                                 list(REGRESSIONS_2008))

    def test_a_missing_name_is_an_error(self) -> None:
        from tcpopt.mutation import regressions
        with self.assertRaisesRegex(HarnessError, 'no 99-none.patch in'):
            regressions.regressions(Settings('6.1', Path('/w')),
                                    ('99-none.patch',))


class ReportTest(unittest.TestCase):
    """--report writes the report a whole run would, and nothing else."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.settings = Settings(tree='6.1', work_dir=Path(tmp.name),
                                 repo=Path(tmp.name) / 'repo')

    def test_every_target_or_a_group_has_a_report(self):
        from tcpopt import commands
        self.assertEqual(commands.report_name(self.settings, None), '6.1')
        self.assertEqual(commands.report_name(
            self.settings, generated.expand(['tcp'])), '6.1-tcp')
        self.assertIsNone(commands.report_name(self.settings,
                                               ['tcp_options_write']))

    def test_a_report_of_part_of_a_run_is_a_usage_error(self):
        from tcpopt import commands
        for size, ids, functions in ((3, None, None),
                                     (None, ['tcp_options_write-00000000'],
                                      None),
                                     (None, None, ['tcp_options_write'])):
            with self.assertRaises(UsageError):
                commands.report_mutants(self.settings, functions, size, ids)
