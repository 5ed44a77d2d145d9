"""Shared vocabulary: columnar tables, the symbol table, units, errors, progress and settings."""
