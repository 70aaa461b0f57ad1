# voxlite-server in a container: CPU only, runs as an unprivileged user, the default voice
# included and its split graph already cached, so a container is SERVING about a second after it
# starts. Build and smoke-test it with scripts/container (podman; Docker's BuildKit reads the same
# file, untried here).
#
#   podman run -p 50051:50051 -v ./models:/voices:ro localhost/voxlite:latest [voxlite-server flags]
#
# Settings are VOXLITE_* variables or flags after the image name (README.md, Configuration).

# Any Debian bookworm with apt. Where no image registry is reachable, scripts/container base
# makes localhost/debian:bookworm-slim from Debian's archive (mmdebstrap + podman import).
ARG BASE=debian:bookworm-slim

# -- builder: a virtual environment holding voxlite and its dependencies --------------------------
FROM ${BASE} AS builder
ENV DEBIAN_FRONTEND=noninteractive \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/voxlite
WORKDIR /src
COPY pyproject.toml README.md ./
COPY proto/ proto/
COPY service/ service/
COPY client/ client/
# Every dependency is a wheel or pure Python: no compiler here either. The optional secret
# `pip-cert` is a CA bundle for networks that intercept TLS (scripts/container passes the host's
# bundle); it is mounted for this step only and stored in no layer.
# Then: pip and setuptools are not needed to run, nor are the dependencies' own test suites.
RUN --mount=type=secret,id=pip-cert,required=false \
    if [ -s /run/secrets/pip-cert ]; then export PIP_CERT=/run/secrets/pip-cert; fi \
 && /opt/voxlite/bin/pip install --no-cache-dir . \
 && /opt/voxlite/bin/pip uninstall --yes --quiet setuptools pip \
 && site=$(/opt/voxlite/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
 && rm -rf "$site"/numpy/*/tests "$site"/numpy/tests "$site"/onnx/backend/test/data

# -- runtime: Python, libopus and the environment; no build tools ---------------------------------
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
# apt's package caches go too (77 MB). A fixed uid/gid, so volumes and runAsUser can name it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 libopus0 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
 && groupadd --gid 10001 voxlite \
 && useradd --uid 10001 --gid 10001 --no-log-init --create-home --home-dir /home/voxlite \
      --shell /usr/sbin/nologin voxlite \
 && mkdir /voices \
 && chown 10001:10001 /voices
COPY --from=builder /opt/voxlite /opt/voxlite
# The cache directory is named, not taken from $HOME: a runtime that starts the container with
# another HOME (or none) still finds the split made below. onnxruntime (1.32) otherwise keeps a
# telemetry device id and event database in ~/.cache/Microsoft and tries to upload them: voxlite
# needs no network besides its callers, and the build would bake one device id into the image.
ENV PATH=/opt/voxlite/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    ORT_DISABLE_TELEMETRY=1 \
    VOXLITE_VOICES_DIR=/voices \
    VOXLITE_HOST="[::]" \
    VOXLITE_PORT=50051 \
    VOXLITE_CACHE_DIR=/home/voxlite/.cache/voxlite
USER 10001:10001
WORKDIR /home/voxlite
# Split the default voice's graph once now, as the user that runs the server: each start then
# reads the split instead of making it, which saves 0.3 s and, above all, ~190 MB of peak memory
# (280 MB resident at SERVING instead of 465), also on a read-only root filesystem.
RUN python -c "import os; from pathlib import Path; \
from voxlite.service.graph import SplitCache; \
from voxlite.service.registry import embedded_voice_files; \
SplitCache(Path(os.environ['VOXLITE_CACHE_DIR'])).load(embedded_voice_files()[0])" \
 && ls "$VOXLITE_CACHE_DIR"/*.json >/dev/null
# Extra Piper voices: mount a folder here (each NAME.onnx with its NAME.onnx.json).
VOLUME /voices
EXPOSE 50051
# voxlite-server is PID 1 (exec form, no shell) and handles SIGTERM itself: health goes
# NOT_SERVING, new calls get UNAVAILABLE, running streams finish within VOXLITE_GRACE_SECONDS
# (default 10; give `podman stop`/`docker stop` a --time above it), then it exits 0.
STOPSIGNAL SIGTERM
# The project's own check: exit 0 only when grpc.health.v1 answers SERVING. The port is the
# image's default; a container started with another VOXLITE_PORT needs its own check.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["voxlite", "health", "--server", "localhost:50051", "--timeout", "3"]
ENTRYPOINT ["voxlite-server"]
