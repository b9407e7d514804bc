"""docs/modules.md is the one tcpopt.core.moduletable makes,
and every module's docstring opens with a line that says its job."""

from __future__ import annotations

import ast
import tempfile
import unittest
from pathlib import Path

from tcpopt.core import moduletable


class DocTableTest(unittest.TestCase):

    def test_the_doc_is_the_generated_one(self) -> None:
        self.assertEqual(moduletable.DOC.read_text(), moduletable.document(),
                         'docs/modules.md is stale; run cd tools && '
                         'python3 -m tcpopt.core.moduletable --write')

    def test_every_module_has_a_row(self) -> None:
        rows = moduletable.table().splitlines()[2:]
        files = list(moduletable.PACKAGE.rglob('*.py'))
        self.assertEqual(len(rows), len(files))
        self.assertIn('| `mutation/generated.py` | Generated mutants',
                      moduletable.table())

    def test_every_docstring_opens_with_a_line_of_its_own(self) -> None:
        """A summary line, then a blank line or nothing: the table shows
        the first line alone, so it must not stop mid-sentence."""
        for path in sorted(moduletable.PACKAGE.rglob('*.py')):
            doc = ast.get_docstring(ast.parse(path.read_text()),
                                    clean=False)
            with self.subTest(module=str(path.relative_to(
                    moduletable.PACKAGE))):
                self.assertTrue(doc and doc.strip())
                lines = doc.strip().splitlines()
                self.assertTrue(len(lines) == 1 or not lines[1].strip(),
                                f'first line runs on: {lines[0]!r}')


class GeneratorTest(unittest.TestCase):
    """The generator and the check on a package and a doc of their own."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name) / 'tcpopt'
        for name, doc in (('__init__.py', 'The package.'),
                          ('cli.py', 'The command line.'),
                          ('log/__init__.py', 'Reading logs.'),
                          ('log/ktap.py', 'Read <tree>.log | KTAP.'),
                          ('core/__init__.py', 'The base.'),
                          ('core/settings.py', 'Where things live.\n\nMore.'),
                          ('extra/__init__.py', 'Not in ORDER.')):
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'"""{doc}"""\n')

    def test_grouped_by_subpackage_the_top_level_first(self) -> None:
        self.assertEqual(moduletable.table(self.root).splitlines(), [
            '| module | job |',
            '| --- | --- |',
            '| `__init__.py` | The package. |',
            '| `cli.py` | The command line. |',
            '| **`core/`** | The base. |',
            '| `core/settings.py` | Where things live. |',
            '| **`log/`** | Reading logs. |',
            '| `log/ktap.py` | Read \\<tree>.log \\| KTAP. |',
            '| **`extra/`** | Not in ORDER. |'])

    def test_a_module_without_a_docstring_is_an_error(self) -> None:
        (self.root / 'log' / 'bare.py').write_text('X = 1\n')
        with self.assertRaisesRegex(ValueError, 'bare.py: no docstring'):
            moduletable.table(self.root)

    def test_the_document_says_how_it_is_made(self) -> None:
        text = moduletable.document(self.root)
        self.assertTrue(text.startswith('# The modules of tools/tcpopt\n'))
        self.assertIn('python3 -m tcpopt.core.moduletable --write', text)
        self.assertTrue(text.endswith(moduletable.table(self.root)))


if __name__ == '__main__':
    unittest.main()
