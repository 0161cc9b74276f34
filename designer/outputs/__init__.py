"""Outputs over a Solution: design.json, bom.csv, design.xlsx, statistics, figures, report, cabling, summary."""
