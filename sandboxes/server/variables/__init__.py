"""The variable inspector: a context's user variables and a table's first rows, read by a silent cell."""
