"""Running a suite: the engines, the runs as jobs in the store, the programs built and patched, the
event log read."""
