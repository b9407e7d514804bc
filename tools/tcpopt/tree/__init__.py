"""The kernel tree: extracted, patched, built and booted under KUnit."""
