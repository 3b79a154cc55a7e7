# puppet-xpp as a container image: a Debian-slim Python, the wheel built from this checkout (with the
# optional C reader), `puppet-xpp` as the entry point, run as an unprivileged user.
#
#   scripts/docker/build.sh                      # builds puppet-xpp:<version> and checks it runs
#   docker run --rm -v "$PWD:/work" puppet-xpp:<version> validate manifests
#   docker run --rm -v "$PWD:/work" puppet-xpp:<version> lint --fix site-modules
#
# The build context is what .dockerignore lets through: the files the wheel is built from.
# tests/test_docker.py checks this file, and builds the image where a Docker engine runs.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: the wheels of puppet-xpp and of everything it depends on
FROM ${PYTHON_IMAGE} AS build
# gcc for the optional C reader (xpp/_fastload.c); the Python headers come with the image
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN python -m pip install --no-cache-dir --disable-pip-version-check "build>=1.2,<2" \
    && python -m build --wheel --outdir /dist . \
    && python -m pip wheel --no-cache-dir --disable-pip-version-check --wheel-dir /wheels /dist/*.whl

# --- the image: the wheels installed, nothing of the build kept
FROM ${PYTHON_IMAGE}
ARG VERSION=unknown
LABEL org.opencontainers.image.title="puppet-xpp" \
      org.opencontainers.image.description="Parser, validator, .xpp compiler, linter and language server for the Puppet language" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /wheels /tmp/wheels
RUN python -m pip install --no-cache-dir --disable-pip-version-check --no-index --find-links /tmp/wheels puppet-xpp \
    && rm -rf /tmp/wheels \
    && useradd --create-home --uid 10001 --user-group puppet-xpp
USER 10001:10001
# the directory to mount the code at (`-v "$PWD:/work"`): paths in the output are relative to it
WORKDIR /work
ENTRYPOINT ["puppet-xpp"]
CMD ["--help"]
