"""`python -m graphscope.workload.child`: the workload child process (main.py)."""

import sys

from graphscope.workload.child.main import main

sys.exit(main())
