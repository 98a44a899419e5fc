"""The project around a file: module resolution, imported definitions, model summaries."""
