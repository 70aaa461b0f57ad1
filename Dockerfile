# voxlite-server in a container: CPU only, runs as an unprivileged user, the default English voice
# and the Kokoro-82M voices (Mandarin, Japanese and four more) included, the split graphs of the
# voices loaded before SERVING already cached, so a container start does not split a model. Build
# and smoke-test it with scripts/container (podman; Docker's BuildKit reads the same file,
# untried here).
#
#   podman run -p 50051:50051 -v ./models:/voices:ro localhost/voxlite:latest [voxlite-server flags]
#
# Settings are VOXLITE_* variables or flags after the image name (README.md, Configuration).
# --build-arg LANGUAGES=en builds an English-only image (Piper only), as scripts/setup's
# VOXLITE_LANGUAGES=en installs: no Kokoro packages or voice tables, and the server lists no
# Kokoro voice (its family finds none; the default --engines piper,kokoro needs no change).

# Any Debian bookworm with apt. Where no image registry is reachable, scripts/container base
# makes localhost/debian:bookworm-slim from Debian's archive (mmdebstrap + podman import).
ARG BASE=debian:bookworm-slim
# all: English, Mandarin, Japanese, Spanish, French, Italian and Portuguese; en: English only.
# Anything else fails the build, so that a mistyped value (zh, "en ") does not quietly give one.
ARG LANGUAGES=all

# -- voices: Kokoro's voice tables, from npm, checked against the hashes in the source tree ------
# A stage of its own: npm and Node.js (about 300 Debian packages) stay here, and this step is
# rebuilt only when the list of hashes changes. Its /out/ is laid over the environment below.
FROM ${BASE} AS voices
ARG LANGUAGES
ENV DEBIAN_FRONTEND=noninteractive
COPY service/engines/kokoro/voices.sha256 /src/voices.sha256
# kokoro-js@1.2.1 is the npm package that carries Kokoro v1.0's voice tables (voices/*.bin); its
# own npm dependencies are not needed (npm pack fetches the one tarball). Exactly the files
# voices.sha256 lists are taken out of it (tar fails on a missing one) and each must match, or
# the build fails. They go where the server looks for them: $(sys.prefix)/share/voxlite/kokoro/
# voices (service/engines/kokoro/family.py, default_voices_dir, as scripts/setup puts them; no flag
# or variable names the folder). pip-cert, as in the builder: npm trusts it as an extra CA.
RUN --mount=type=secret,id=pip-cert,required=false \
    case "$LANGUAGES" in \
      all) ;; \
      en) mkdir /out && exit 0 ;; \
      *) echo "LANGUAGES must be all or en, got '$LANGUAGES'" >&2 && exit 1 ;; \
    esac \
 && if [ -s /run/secrets/pip-cert ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/pip-cert; fi \
 && apt-get update \
 && apt-get install -y --no-install-recommends npm ca-certificates \
 && mkdir /tmp/npm /out \
 && npm pack --silent --pack-destination /tmp/npm kokoro-js@1.2.1 >/dev/null \
 && names=$(grep -v '^#' /src/voices.sha256 | awk '{print "package/voices/" $2}') \
 && tar -xzf /tmp/npm/kokoro-js-*.tgz -C /tmp/npm $names \
 && (cd /tmp/npm/package/voices && grep -v '^#' /src/voices.sha256 | sha256sum -c --quiet) \
 && mkdir -p /out/share/voxlite/kokoro \
 && mv /tmp/npm/package/voices /out/share/voxlite/kokoro/voices

# -- builder: a virtual environment holding voxlite and its dependencies --------------------------
FROM ${BASE} AS builder
ENV DEBIAN_FRONTEND=noninteractive \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
# gcc builds voxlite's one native library, Kokoro's fused decoder operators
# (service/engines/kokoro/fused_ops.c); it stays in this stage.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/voxlite
WORKDIR /src
COPY pyproject.toml README.md ./
COPY proto/ proto/
COPY service/ service/
COPY client/ client/
# Every dependency is a wheel or pure Python; gcc builds voxlite's own library. The optional
# secret `pip-cert` is a CA bundle for networks that intercept TLS (scripts/container passes the
# host's bundle); it is mounted for this step only and stored in no layer.
# Mandarin and Japanese, as scripts/setup installs them: the kokoro extra, then pyopenjtalk-plus
# (Japanese readings) and sudachipy without their dependencies: pyopenjtalk-plus bundles its
# dictionary but declares sudachidict-core (77 MB, for an optional reading model Kokoro does not
# use), and sudachipy is only imported, never used. On a base with Python 3.13, misaki too
# (it declares Python < 3.13, for an English extra voxlite does not use).
# Then: pip and setuptools are not needed to run, nor are the dependencies' own test suites.
# (Each stage names LANGUAGES where it is first used: the steps above it are the same layers
# for both images.)
ARG LANGUAGES
RUN --mount=type=secret,id=pip-cert,required=false \
    if [ -s /run/secrets/pip-cert ]; then export PIP_CERT=/run/secrets/pip-cert; fi \
 && if [ "$LANGUAGES" = en ]; then extras=; else extras='[kokoro]'; fi \
 && /opt/voxlite/bin/pip install --no-cache-dir ".$extras" \
 && if [ "$LANGUAGES" != en ]; then \
      /opt/voxlite/bin/pip install --no-cache-dir --no-deps \
        pyopenjtalk-plus==0.4.1.post10 sudachipy==0.7.0 \
      && if ! /opt/voxlite/bin/python -c 'import sys; sys.exit(sys.version_info >= (3, 13))'; then \
        /opt/voxlite/bin/pip install --no-cache-dir --no-deps --ignore-requires-python \
          misaki==0.9.4 \
        && /opt/voxlite/bin/pip install --no-cache-dir addict regex; \
      fi; \
    fi \
 && /opt/voxlite/bin/pip uninstall --yes --quiet setuptools pip \
 && site=$(/opt/voxlite/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
 && rm -rf "$site"/numpy/*/tests "$site"/numpy/tests "$site"/onnx/backend/test/data
COPY --from=voices /out/ /opt/voxlite/

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
# another HOME (or none) still finds the splits made below. onnxruntime (1.32) otherwise keeps a
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
# Load the voices the server loads before SERVING (the default voice, then each language's:
# zf_xiaoxiao, jf_alpha, ef_dora, ff_siwis, if_sara and pf_dora), the way it loads them, once now as
# the user that runs it: their graphs are split into $VOXLITE_CACHE_DIR (Piper's as <sha256>-v<N>.*,
# Kokoro's one model as kokoro-<sha256>-v<N>.*), and each start reads the splits instead of making
# them, also on a read-only root filesystem. Piper's split saves the most peak memory at start,
# Kokoro's the time to split its 88 MB model (the figures: deploy/README.md, docs/kokoro.md). The
# load is also the image's own check: an image with every language must load Kokoro voices. Kokoro's
# decoder is cached in its three forms (as exported; with its convolutions as matrix products,
# kokoro-<sha256>-v<N>-matmul.*; and with the fused operators too, -matmul-fused): which one a start
# uses depends on the CPU it runs on, not the one that built the image. jieba's dictionary cache,
# written to /tmp on the way, is not kept: /tmp is often a tmpfs or an emptyDir at run time, and the
# server writes it again there.
ARG LANGUAGES
RUN python -c "import os; \
from voxlite.service.engines import runtime; \
from voxlite.service.settings.config import config_from_args; \
from voxlite.service.families import families; \
from voxlite.service.engines.registry import VoiceRegistry; \
c = config_from_args([]); \
c.ort.cpu_arena and runtime.register_shared_arena(); \
r = VoiceRegistry(families(c), voices_dir=c.voices_dir, default_voice=c.default_voice, \
    language_voices=dict(c.language_voices)); \
r.load(); \
kokoro = [v.info.name for v in r.voices() if v.info.family == 'kokoro']; \
print('voices loaded before SERVING:', ', '.join(v.info.name for v in r.voices())); \
from voxlite.service.engines.kokoro.graph import SplitCache; \
[SplitCache(c.cache_dir).load(matmul_convs=m, fused=f) \
    for m, f in ((False, False), (True, False), (True, True)) if kokoro]; \
assert bool(kokoro) == (os.environ['LANGUAGES'] != 'en'), 'LANGUAGES=all, no Kokoro voice'" \
 && ls "$VOXLITE_CACHE_DIR" \
 && ls "$VOXLITE_CACHE_DIR"/[0-9a-f]*-v*.json >/dev/null \
 && { [ "$LANGUAGES" = en ] || ls "$VOXLITE_CACHE_DIR"/kokoro-*.json >/dev/null; } \
 && rm -f /tmp/jieba.cache
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
