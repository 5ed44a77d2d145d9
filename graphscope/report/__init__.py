"""Comparison reports: sources, sides, the comparison and its formats (HTML, Markdown, JSON, CSV) with charts."""
