"""Reading what a KUnit kernel printed: verdicts, expected cases, reports."""
