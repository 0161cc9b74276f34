"""Optimization formulations (Pyomo), built only from validated tables."""
