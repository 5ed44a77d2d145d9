"""A trace written in another form: Perfetto / Chrome trace-event JSON (of a trace held whole, or
streamed from a file a window at a time) and the DAG models of its traced graphs."""
