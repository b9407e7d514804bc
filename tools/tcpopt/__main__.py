"""python3 -m tcpopt: run.sh's entry point, the command line in cli.py."""
import signal
import sys

from tcpopt.cli import main

# A shell starts a background job ('./run.sh mutate &') with SIGINT
# ignored, and Python then leaves it so: 'kill -INT' would not stop the
# run, which must stop cleanly (a mutant written into a scratch tree is
# taken out again on KeyboardInterrupt).
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(main())
