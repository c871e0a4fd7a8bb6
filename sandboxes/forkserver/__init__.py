"""Kernels forked from a zygote per template, confined as bubblewrap confines them."""
