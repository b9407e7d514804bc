"""The patch series and its checks: checkpatch, builds, bloat, bisectable."""
