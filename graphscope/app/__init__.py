"""Everything Qt: the main window, timeline items, panels, the DAG view and background workers."""
