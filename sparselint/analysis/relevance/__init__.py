"""Relevance and outline: what in a file can matter, decided before parsing it with LibCST."""
