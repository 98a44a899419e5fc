"""Evaluation: the facts of values and how each statement changes them."""
