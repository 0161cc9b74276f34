"""The independent audit: concrete fabric graphs from design.json, paths and flows, every check, resilience."""
