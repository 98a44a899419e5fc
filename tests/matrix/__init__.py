"""The conformance matrix: hazards x code shapes (issue 18, point 5).

Each hazard (hazards.py) is a value that bears a fact, a safe twin of that value, and a sink
that fails on the fact; each shape (shapes_*.py) carries the value from its source to the sink
through one form of the language, in one file or across the modules of a small project. A
cell is one hazard written in one shape: a bad program that fails under torch as the rule says,
and its twin built from the safe value that runs clean. cells.py writes them, lint.py asks the
engine about them, known.py records what the engine misses today, render.py writes
docs/coverage.md.
"""
