"""Code that runs inside sandboxes. Our processes never import it: they send its source text to a
kernel (see describe.py), so it may use only what the sandbox's template provides."""
