"""Code that runs inside sandboxes. Our processes never import it: they send its source text to a
kernel (describe.py and the modules it imports, behind loader.py: see analyst.files.reading), so
it may use only what the sandbox's template provides."""
