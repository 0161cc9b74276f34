"""Solve: modes and model data, HiGHS runs, extraction of the Solution, diagnosis of infeasibility."""
