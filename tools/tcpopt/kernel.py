"""Drive the kernel's own tools: kunit.py, make, bloat-o-meter, checkpatch."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from .settings import Settings

ARCH = 'x86_64'


def jobs() -> int:
    return os.cpu_count() or 1


def build_env(settings: Settings) -> dict:
    """ccache keeps its cache in the work dir, outside the checkout."""
    env = dict(os.environ)
    env['CCACHE_DIR'] = str(settings.ccache_dir)
    env.setdefault('CCACHE_MAXSIZE', '5G')
    # Paths relative to the work dir let the scratch trees (mutants,
    # bisectability, bloat) hit the cache the main tree filled.
    env.setdefault('CCACHE_BASEDIR', str(settings.work_dir))
    # kunit.py's Python must not pick up a user's PYTHONPATH additions.
    env.pop('PYTHONPATH', None)
    return env


def compiler() -> str:
    return 'ccache gcc' if shutil.which('ccache') else 'gcc'


def kunit_command(settings: Settings, timeout: int = 300) -> List[str]:
    return [sys.executable, 'tools/testing/kunit/kunit.py', 'run',
            f'--arch={ARCH}', f'--kunitconfig={settings.kunitconfig}',
            f'--build_dir={settings.build_dir}', f'--jobs={jobs()}',
            f'--timeout={timeout}', '--make_options', f'CC={compiler()}'] + \
        [f'--kconfig_add={option}' for option in settings.kconfig_add]


def run_kunit(settings: Settings, source: Path) -> tuple[int, Path]:
    """Build and boot the suite; returns kunit.py's status and the raw log."""
    log = settings.build_dir / 'test.log'
    if log.exists():
        log.unlink()        # never read a previous run's verdicts
    settings.build_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(kunit_command(settings), cwd=source,
                          env=build_env(settings), check=False)
    return proc.returncode, log


def make(settings: Settings, source: Path, out: Path, *targets: str,
         quiet: bool = True) -> subprocess.CompletedProcess:
    cmd = ['make', '-C', str(source), f'O={out}', f'ARCH={ARCH}',
           f'CC={compiler()}', f'-j{jobs()}', *targets]
    if quiet:
        cmd.insert(1, '-s')
    return subprocess.run(cmd, env=build_env(settings), capture_output=True,
                          text=True, check=False)


def set_kconfig(source: Path, config: Path, symbol: str,
                value: Optional[bool]) -> None:
    flag = '--enable' if value else '--disable'
    subprocess.run([str(source / 'scripts/config'), '--file', str(config),
                    flag, symbol], check=True)
