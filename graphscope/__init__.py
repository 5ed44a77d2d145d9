"""graphscope: is this GPU pipeline launch-bound, how much does a CUDA graph save, and how should
each node be launched?

Importing the package loads no Qt, pyqtgraph, CuPy or CUDA bindings; those load lazily where used.
"""

__version__ = "0.1.0"
