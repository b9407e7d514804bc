"""python3 -m tcpopt: run.sh's entry point, the command line in cli.py."""
import sys

from tcpopt.cli import main

sys.exit(main())
