"""What the series costs tcp_output.o, measured with bloat-o-meter.

The zero-delta check: tcp_output.o with the test Kconfig off, before and after.

Builds net/ipv4/tcp_output.o from the pristine tree and from the patched
tree with the same .config and CONFIG_TCP_OPTIONS_KUNIT_TEST off, then
compares them with scripts/bloat-o-meter (must report a total delta of 0)
and byte for byte on .text. Where the series carries bug fixes (tagged
'# fix' in its series file), they change production code on purpose:
the baseline is then a copy of the pristine tree with the fixes applied,
so that the check still covers every other patch. On a tree with two
layers the baseline is the upstream layer: the harness on top of it must
add nothing.

The production cost (production_cost()): on a tree with two layers, the
upstream layer changes tcp_output.c on purpose. Its tcp_output.o is
compared with the pristine tree's plus the fixes, built from the KUnit
step's .config with CONFIG_KUNIT off and on (on, the layout functions
are VISIBLE_IF_KUNIT: global and exported): bloat-o-meter and the size
of .text, a measurement rather than a verdict.
"""

from __future__ import annotations

import filecmp
import lzma
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from tcpopt.core.errors import HarnessError
from tcpopt.core.settings import TEST_KCONFIG, UPSTREAM_LAYER, Settings
from tcpopt.series.seriesfile import fix_patches, read_series
from tcpopt.tree.kernel import make, set_kconfig
from tcpopt.tree.scratch import ScratchTree

OBJECT = 'net/ipv4/tcp_output.o'
TOTAL = re.compile(r'^add/remove: (\d+)/(\d+) grow/shrink: (\d+)/(\d+) '
                   r'up/down: (-?\d+)/(-?\d+) \((-?\d+)\)', re.M)


@dataclass
class BloatResult:
    config_name: str
    delta: Optional[int]
    text_identical: bool
    report: str
    error: str = ''

    @property
    def ok(self) -> bool:
        return not self.error and self.delta == 0


def parse_delta(report: str) -> Optional[int]:
    """The total byte delta from bloat-o-meter's summary line."""
    match = TOTAL.search(report)
    return int(match.group(7)) if match else None


def config_sources(settings: Settings) -> List[tuple[str, Path]]:
    """The suite's own .config, and Debian's amd64 config when installed."""
    sources = [('kunit', settings.build_dir / '.config')]
    debian = settings.usr_src / f'linux-config-{settings.tree}' / \
        'config.amd64_none_amd64.xz'
    if debian.is_file():
        sources.append(('debian-amd64', debian))
    return sources


def read_config(path: Path) -> bytes:
    return lzma.decompress(path.read_bytes()) if path.suffix == '.xz' \
        else path.read_bytes()


def build_object(settings: Settings, source: Path, out: Path,
                 config: bytes, kunit: Optional[bool] = None) -> Path:
    """tcp_output.o from @source with @config, the test symbol off (and
    CONFIG_KUNIT as @kunit says, when it says)."""
    out.mkdir(parents=True, exist_ok=True)
    seed = out / '.config.seed'
    stamp = config + f'\nkunit={kunit}'.encode()
    if not seed.is_file() or seed.read_bytes() != stamp:
        seed.write_bytes(stamp)
        (out / '.config').write_bytes(config)
        set_kconfig(source, out / '.config', TEST_KCONFIG, False)
        if kunit is not None:
            set_kconfig(source, out / '.config', 'KUNIT', kunit)
        # Debian's config signs modules with keys it does not ship.
        for symbol in ('MODULE_SIG_ALL', 'DEBUG_INFO_BTF'):
            set_kconfig(source, out / '.config', symbol, False)
        result = make(settings, source, out, 'olddefconfig')
        if result.returncode:
            seed.unlink()
            raise HarnessError(f'make olddefconfig failed in {out}: '
                               f'{result.stderr.strip()[-300:]}')
    result = make(settings, source, out, OBJECT)
    if result.returncode:
        raise HarnessError(f'building {OBJECT} in {out} failed: '
                           f'{result.stderr.strip()[-300:]}')
    return out / OBJECT


def scratch_tree(settings: Settings, name: str,
                 patches: List[Path]) -> Path:
    """<bloat>/<name>-src: the pristine tree with @patches applied."""
    src = settings.bloat_dir / f'{name}-src'
    builds = [path for path in settings.bloat_dir.glob(f'*/{name}')]
    return ScratchTree(settings, src, base=settings.pristine,
                       patches=patches, builds=builds).ensure()


def upstream_layer(settings: Settings) -> List[Path]:
    return [p for p in read_series(settings.patch_dir)
            if p.parent.name == UPSTREAM_LAYER]


def baseline(settings: Settings) -> tuple[str, Path]:
    """The tree the patched one is compared with, and its name."""
    if settings.layered:
        return 'upstream', scratch_tree(settings, 'upstream',
                                        upstream_layer(settings))
    fixes = fix_patches(settings.patch_dir)
    if not fixes:
        return 'pristine', settings.pristine
    return 'baseline', scratch_tree(settings, 'baseline', fixes)


def text_section(obj: Path) -> Path:
    text = obj.with_suffix('.text.bin')
    subprocess.run(['objcopy', '-O', 'binary', '--only-section=.text',
                    str(obj), str(text)], check=True)
    return text


def check(settings: Settings) -> List[BloatResult]:
    results = []
    for name, config_path in config_sources(settings):
        if not config_path.is_file():
            results.append(BloatResult(name, None, False, '',
                                       f'{config_path} is missing: run the '
                                       'KUnit step first'))
            continue
        config = read_config(config_path)
        try:
            base_name, base_src = baseline(settings)
            old = build_object(settings, base_src,
                               settings.bloat_dir / name / base_name, config)
            new = build_object(settings, settings.source,
                               settings.bloat_dir / name / 'patched', config)
        except HarnessError as error:
            results.append(BloatResult(name, None, False, '', str(error)))
            continue
        report = subprocess.run(
            [str(settings.source / 'scripts/bloat-o-meter'), str(old),
             str(new)], capture_output=True, text=True, check=False).stdout
        same_text = filecmp.cmp(text_section(old), text_section(new),
                                shallow=False)
        results.append(BloatResult(name, parse_delta(report), same_text,
                                   report.strip()))
    return results


@dataclass
class CostRow:
    kunit: bool
    base_text: int
    new_text: int
    report: str

    @property
    def delta(self) -> Optional[int]:
        return parse_delta(self.report)

    def line(self) -> str:
        change = self.new_text - self.base_text
        return (f'CONFIG_KUNIT={"y" if self.kunit else "n"}: .text '
                f'{self.base_text} -> {self.new_text} bytes ({change:+d}), '
                f'bloat-o-meter total {self.delta:+d} bytes'
                if self.delta is not None else 'no bloat-o-meter total')


def text_size(obj: Path) -> int:
    """The size of .text, as size -A prints it."""
    out = subprocess.run(['size', '-A', str(obj)], capture_output=True,
                         text=True, check=True).stdout
    match = re.search(r'^\.text\s+(\d+)', out, re.M)
    if not match:
        raise HarnessError(f'size -A {obj}: no .text')
    return int(match.group(1))


def production_cost(settings: Settings) -> List[CostRow]:
    """The upstream layer's tcp_output.o against the pristine tree's plus
    the fixes, with CONFIG_KUNIT off and on."""
    config_path = settings.build_dir / '.config'
    if not config_path.is_file():
        raise HarnessError(f'{config_path} is missing: run the KUnit step '
                           'first')
    config = read_config(config_path)
    fixed = scratch_tree(settings, 'baseline', fix_patches(settings.patch_dir))
    upstream = scratch_tree(settings, 'upstream', upstream_layer(settings))
    rows = []
    for kunit in (False, True):
        name = f'cost-kunit-{"on" if kunit else "off"}'
        old = build_object(settings, fixed, settings.bloat_dir / name /
                           'baseline', config, kunit)
        new = build_object(settings, upstream, settings.bloat_dir / name /
                           'upstream', config, kunit)
        report = subprocess.run(
            [str(settings.source / 'scripts/bloat-o-meter'), str(old),
             str(new)], capture_output=True, text=True, check=False).stdout
        rows.append(CostRow(kunit, text_size(old), text_size(new),
                            report.strip()))
    return rows
