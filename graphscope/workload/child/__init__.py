"""The workload child process: everything that runs beside the user's code (started as
`python -m graphscope.workload.child`, main.py). The parent side (runner, session, record, nsys, ...)
never imports it: the two speak only the protocol of `graphscope.workload.protocol`."""
