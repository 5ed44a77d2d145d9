"""Reports: the summary table, comparison reports (HTML, Markdown, JSON, CSV) and trace exports."""
