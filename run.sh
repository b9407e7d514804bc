#!/bin/bash
# The one entry point of the TCP option layout harness; see README.md.
#   ./run.sh           build the KUnit kernel, run the suites in QEMU,
#                      print the per-case layout table
#   ./run.sh test      the test command (what .ci/run calls)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! command -v python3 >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "run.sh: installing python3" >&2
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends python3 >&2 || {
			echo "run.sh: error: apt-get could not install python3" >&2
			exit 2
		}
	else
		echo "run.sh: error: python3 is missing: install the Debian package python3" >&2
		exit 2
	fi
fi

export PYTHONPATH="$repo/tools${PYTHONPATH:+:$PYTHONPATH}"
exec python3 -m tcpopt "$@"
