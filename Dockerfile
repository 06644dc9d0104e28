# onemodeld in a container: built with the project's own scripts, run as a non-root user.
#
#   docker build -t onemodeld .
#   docker run --rm -p 50051:50051 -p 9464:9464 -e ONEMODEL_MAX_SESSIONS=64 onemodeld
#   onemodel --server 127.0.0.1:50051 health           # SERVING
#
# Every build step is a command CI runs outside Docker too (scripts/install-deps, the release
# preset, the same targets as scripts/start); tests/deploy/test_dockerfile.py keeps them equal.
# Configuration is by environment variables: every flag --foo-bar is ONEMODEL_FOO_BAR
# (docs/operations.md). docs/deploy.md covers compose and Kubernetes.

FROM debian:bookworm AS build
WORKDIR /src
# The packages first (a layer that survives source changes), then the sources.
COPY scripts/ scripts/
COPY tests/conformance/cast/package.json tests/conformance/cast/package-lock.json tests/conformance/cast/
RUN scripts/install-deps
COPY . .
RUN cmake --preset release && cmake --build --preset release --target onemodeld onemodel

FROM debian:bookworm-slim AS runtime
# Exactly the shared libraries the two binaries link (tests/deploy/test_dockerfile.py checks).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libc6 libgcc-s1 libstdc++6 zlib1g libssl3 \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libc-ares2 libre2-9 \
      libspdlog1.10 libfmt9 libprometheus-cpp-core1.0 \
      libhwy1 libopenblas0-pthread libgfortran5 libquadmath0 libdnnl2 libgomp1 ocl-icd-libopencl1 \
      libmicrohttpd12 libgnutls30 libp11-kit0 libidn2-0 libunistring2 libtasn1-6 libnettle8 \
      libhogweed6 libgmp10 libffi8 \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 onemodel \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin onemodel
COPY --from=build /src/build/release/server/onemodeld /src/build/release/client/onemodel /usr/local/bin/
USER 10001:10001
# The metrics port is reachable from the network here: /metrics serves Prometheus, and the
# status page (session statistics for whoever reaches the port) stays off unless asked for.
ENV ONEMODEL_LISTEN=0.0.0.0:50051 \
    ONEMODEL_METRICS_LISTEN=0.0.0.0:9464 \
    ONEMODEL_STATUS_PAGE=off \
    ONEMODEL_DRAIN_SECONDS=30 \
    ONEMODEL_LOG_FORMAT=json
EXPOSE 50051 9464
# grpc.health.v1 through the CLI: exit 0 only when SERVING (NOT_SERVING while draining).
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["onemodel", "--server", "127.0.0.1:50051", "health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["onemodeld"]
