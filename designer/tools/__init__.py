"""Tools over the whole pipeline: scenario sweeps and the benchmark."""
