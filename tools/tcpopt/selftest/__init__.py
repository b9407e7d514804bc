"""The TCP-AO selftests, built static and run in QEMU under busybox."""
