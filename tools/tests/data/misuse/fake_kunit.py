#!/usr/bin/env python3
"""A stand-in for tools/testing/kunit/kunit.py, for tests/test_misuse.py.

It takes the arguments kernel.kunit_command() passes, checks that the tree
was prepared (series applied, kunit/ copied in), "builds" into --build_dir
and "boots" a fake QEMU: a child process printing a console log that this
script tees into <build_dir>/test.log, as kunit_kernel.run_kernel() does,
with the same --timeout backstop and the same SIGINT handler.

FAKE_KUNIT_MODE (default pass):
  pass   QEMU prints $FAKE_KUNIT_CONSOLE and exits
  slow   the build ("make", a child) waits for the file $FAKE_KUNIT_RELEASE
         (at most 30 s) before the pass behaviour
  hang   QEMU prints $FAKE_KUNIT_CONSOLE and never exits
  panic  QEMU prints $FAKE_KUNIT_CONSOLE, which ends in a panic, and exits
         only with panic=-1 on the kernel command line, as a kernel would
$FAKE_KUNIT_JOURNAL, when set, gets a line per event ('start slow 123',
'make 124', 'qemu 125', 'end slow 0') for checks on order and leftovers.

The "kernel" is build/arch/x86/boot/bzImage, a text file naming the tree
version it was built from. Like make trusting objects newer than their
sources, an existing one is reused as it is: a stale build dir shows.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading

KERNEL = 'arch/x86/boot/bzImage'

MAKE = '''
import os, signal, sys, time
def interrupted(signum, frame):
    print('make: *** [Makefile:2012: vmlinux] Interrupt', flush=True)
    sys.exit(2)
signal.signal(signal.SIGINT, interrupted)
print('ready', flush=True)
release, seconds = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + seconds
while time.monotonic() < end and not (release and os.path.exists(release)):
    time.sleep(0.05)
'''

QEMU = '''
import signal, sys, time
def interrupted(signum, frame):
    print('qemu-system-x86_64: terminating on signal 2', flush=True)
    sys.exit(1)
signal.signal(signal.SIGINT, interrupted)
mode, console, cmdline, version = sys.argv[1:5]
print(f'Linux version {version} (fake QEMU)', flush=True)
print(f'Command line: {cmdline}', flush=True)
with open(console) as text:
    sys.stdout.write(text.read())
sys.stdout.flush()
if mode == 'hang' or (mode == 'panic' and 'panic=-1' not in cmdline.split()):
    time.sleep(3600)
'''


def journal(event: str) -> None:
    path = os.environ.get('FAKE_KUNIT_JOURNAL')
    if path:
        with open(path, 'a') as out:
            out.write(event + '\n')


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog='kunit.py')
    sub = parser.add_subparsers(dest='command', required=True)
    for name in ('run', 'exec'):      # exec: boot the last build
        run = sub.add_parser(name)
        run.add_argument('--arch', required=True)
        run.add_argument('--kunitconfig', action='append',
                         required=name == 'run')
        run.add_argument('--build_dir', required=True)
        if name == 'run':
            run.add_argument('--jobs', type=int)
        run.add_argument('--timeout', type=int, default=300)
        run.add_argument('--kernel_args', action='append', default=[])
        run.add_argument('--make_options', action='append', default=[])
        run.add_argument('--kconfig_add', action='append', default=[])
        run.add_argument('--qemu_args', action='append', default=[])
        run.add_argument('filter_glob', nargs='?', default='')
    return parser.parse_args()


def tree_version() -> str:
    fields = {}
    with open('Makefile') as makefile:
        for line in makefile:
            key, _, value = line.partition('=')
            fields[key.strip()] = value.strip()
    return '{VERSION}.{PATCHLEVEL}.{SUBLEVEL}'.format(**fields)


def unprepared() -> str:
    """What is missing from the tree the harness should have prepared."""
    checks = [('net/ipv4/Kconfig', 'config TCP_OPTIONS_KUNIT_TEST'),
              ('net/ipv4/tcp_output.c', 'tcp_options_test.c'),
              ('net/ipv4/tcp_options_test.c', '')]
    for name, text in checks:
        if not os.path.isfile(name):
            return f'{name} is missing'
        with open(name) as source:
            if text not in source.read():
                return f'{name} lacks {text!r}'
    return ''


def build(args: argparse.Namespace, mode: str) -> int:
    print('[00:00:00] Configuring KUnit Kernel ...', flush=True)
    with open(os.path.join(args.build_dir, '.config'), 'w') as config:
        for path in args.kunitconfig:
            with open(path) as fragment:
                config.write(fragment.read())
        config.write(''.join(f'{line}\n' for line in args.kconfig_add))
    kernel = os.path.join(args.build_dir, KERNEL)
    if os.path.exists(kernel):
        return 0                # make: nothing to be done
    print('[00:00:00] Building KUnit Kernel ...', flush=True)
    seconds = '30' if mode == 'slow' else '0'
    make = subprocess.Popen([sys.executable, '-S', '-c', MAKE,
                             os.environ.get('FAKE_KUNIT_RELEASE', ''),
                             seconds], stdout=subprocess.PIPE, text=True)
    make.stdout.readline()      # its SIGINT handler is in place
    journal(f'make {make.pid}')
    status = make.wait()
    sys.stdout.write(make.stdout.read())
    if status:
        print('ERROR:root:make failed: Interrupt', flush=True)
        return 1
    os.makedirs(os.path.dirname(kernel), exist_ok=True)
    with open(kernel + '.tmp', 'w') as image:
        image.write(tree_version() + '\n')
    os.rename(kernel + '.tmp', kernel)
    return 0


def boot(args: argparse.Namespace, mode: str) -> int:
    """run_kernel(): tee the console into test.log, with the timeout."""
    print('[00:00:00] Starting KUnit Kernel (1/1)...', flush=True)
    with open(os.path.join(args.build_dir, KERNEL)) as image:
        version = image.read().strip()
    cmdline = ' '.join(args.kernel_args + ['kunit.enable=1',
                                           'console=ttyS0',
                                           'kunit_shutdown=reboot'])
    qemu = subprocess.Popen([sys.executable, '-S', '-c', QEMU, mode,
                             os.environ['FAKE_KUNIT_CONSOLE'], cmdline,
                             version],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    journal(f'qemu {qemu.pid}')

    def wait_qemu() -> None:
        try:
            qemu.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired as error:
            print(error, flush=True)
            qemu.terminate()
            qemu.wait()
    waiter = threading.Thread(target=wait_qemu)
    waiter.start()
    output = open(os.path.join(args.build_dir, 'test.log'), 'w')
    try:
        for line in qemu.stdout:
            output.write(line)
    finally:
        output.write(qemu.stdout.read())
        output.close()
        waiter.join()
    ok = qemu.returncode == 0 and mode in ('pass', 'slow')
    print(f'[00:00:01] {"Testing complete." if ok else "CRASHED"}',
          flush=True)
    return 0 if ok else 1


def main() -> int:
    args = parse_args()
    mode = os.environ.get('FAKE_KUNIT_MODE', 'pass')
    journal(f'start {mode} {os.getpid()}')
    # kunit.py's own handler: log and carry on, make and QEMU stop.
    signal.signal(signal.SIGINT, lambda signum, frame: print(
        'ERROR:root:Build interruption occurred. Cleaning console.',
        file=sys.stderr, flush=True))
    problem = unprepared()
    if problem:
        print(f'ERROR: the tree is not prepared: {problem}', flush=True)
        status = 1
    else:
        status = (0 if args.command == 'exec' else build(args, mode)) or \
            boot(args, mode)
    journal(f'end {mode} {status}')
    return status


if __name__ == '__main__':
    sys.exit(main())
