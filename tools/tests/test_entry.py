"""python3 -m tcpopt stops on SIGINT even when started as a background job,
which a shell starts with SIGINT ignored."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]
# The entry point, with a main that only waits: what a long run looks like.
WAITING_ENTRY = ('import time, runpy, tcpopt.cli as cli\n'
                 'cli.main = lambda: time.sleep(30)\n'
                 'runpy.run_module("tcpopt", run_name="__main__")\n')


class BackgroundInterruptTest(unittest.TestCase):

    def test_sigint_stops_a_run_started_with_sigint_ignored(self) -> None:
        proc = subprocess.Popen(
            [sys.executable, '-c', WAITING_ENTRY], cwd=TOOLS,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        self.addCleanup(proc.kill)
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.fail('SIGINT did not stop python3 -m tcpopt')
        self.assertNotEqual(proc.returncode, 0)


if __name__ == '__main__':
    unittest.main()
