"""Running user workloads in eager and graph mode in a child process, timing them, and nsys integration."""
