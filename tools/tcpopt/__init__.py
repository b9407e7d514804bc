"""Host side of the TCP option layout harness: tree, build, run, report."""
