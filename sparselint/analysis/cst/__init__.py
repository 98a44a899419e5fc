"""Small LibCST helpers: cheap traversal, syntactic queries, import-alias resolution."""
