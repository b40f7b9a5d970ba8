"""Host modules: I/O and real libraries, outside the pure core."""
