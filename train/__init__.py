"""Tools that use the environments: demo, (later) controllers, training, benchmarks."""
