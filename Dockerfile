# One image for web, worker and sandboxd; the sandbox template is built into it.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/app/.venv/bin:$PATH
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap nodejs npm \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY . .
RUN python -m venv /app/.venv \
    && pip install -q -e . \
    && scripts/vendor-js \
    && python -m sandboxes.templates build --dir /app/var/templates

EXPOSE 8000 8787
CMD ["scripts/web", "0.0.0.0", "8000"]
