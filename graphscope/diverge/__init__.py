"""Where a captured graph's answer departs from eager, and which launch arguments a capture froze.

Pure logic (imports core only; the GPU side runs in the workload child, workload/child/diverge_gpu.py):
`bisect.py` finds the first differing node from prefix trials and the inputs among buffers by group
tests, `launches.py` decodes, names and compares two launches of one node, `audit.py` diffs two captures
of a step; text/diverge.py writes the answers as text.
"""
