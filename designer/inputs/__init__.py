"""Inputs: the workbook schema, reading and validating planner workbooks, the default catalog, the template."""
