"""The session database (sqlite-utils): workloads, runs, measurements, traces and tuning history."""
