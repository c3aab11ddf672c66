# switchboard — compiled JavaScript (dist/) on node under tini.
#
# Two stages: the first installs every dependency (with the toolchain better-sqlite3 may need
# when no prebuilt binary matches), compiles the TypeScript with `tsc` into dist/ and bundles it
# into dist/bundle/ (esbuild: a start loads a few files, not a thousand modules), then drops the
# devDependencies; the final image gets one build output, dist/bundle/ (with the web chat's
# client in dist/web/), and the production node_modules only.
#
# The base image is pinned by digest, so a rebuild gets the same image. To update it (see
# docs/docker.md): `docker buildx imagetools inspect node:22-slim`, copy the "Digest:" line
# here, rebuild, run the tests. `--build-arg NODE_IMAGE=node:22-slim` builds on the newest tag.
ARG NODE_IMAGE=node:22-slim@sha256:83f487e0a63425e5b4d146fb5e5be574bcbe1b7b843d3ebafdd95eaf7767a7e5

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY plugins ./plugins
COPY migrations ./migrations
COPY web ./web
RUN node scripts/build.mjs \
 && npm prune --omit=dev \
 && npm cache clean --force

FROM ${NODE_IMAGE}
# Debian's slim images drop manual pages and groff's files; keep them so the `man` tool works.
# tini is PID 1: it forwards SIGTERM to node and reaps the processes shell tools leave behind.
# ripgrep backs `search`; bubblewrap is the shell tool's sandbox (docs/docker.md: it needs a
# container allowed to make namespaces, else the shell runs unsandboxed as doctor reports), and
# slirp4netns with iproute2 its network (tools.bash.network = "egress"; it needs /dev/net/tun,
# else commands get loopback only).
RUN for f in /etc/dpkg/dpkg.cfg.d/*; do [ -f "$f" ] && sed -i -e '\|/usr/share/man|d' -e '\|/usr/share/groff|d' "$f"; done; \
    apt-get update \
 && apt-get install -y --no-install-recommends tini ripgrep bubblewrap slirp4netns iproute2 man-db manpages ca-certificates \
 && apt-get install -y --no-install-recommends --reinstall coreutils findutils grep sed tar gzip \
 && rm -rf /var/lib/apt/lists/* \
 && mandb -q

WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
# One build output: the bundle the command runs, and the web chat's client it serves.
COPY --from=build /app/dist/bundle ./dist/bundle
COPY --from=build /app/dist/web ./dist/web
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts/build.mjs ./scripts/build.mjs
COPY config ./config
# `docker exec <container> switchboard pair approve CODE` and friends.
RUN ln -s /app/bin/switchboard.js /usr/local/bin/switchboard && chmod +x /app/bin/switchboard.js

# Data and workspace live in volumes owned by the unprivileged `node` user (uid 1000). A bind
# mount keeps its host owner: make it writable by uid 1000 (docs/docker.md).
RUN mkdir -p /data /workspace && chown -R node:node /data /workspace
USER node
# NODE_COMPILE_CACHE: node keeps the compiled JavaScript between starts (less start-up CPU).
# http.host defaults to loopback; in a container the published port needs every interface.
ENV NODE_ENV=production \
    NODE_COMPILE_CACHE=/tmp/switchboard-compile-cache \
    DATABASE_URL=sqlite:/data/switchboard.db \
    SWITCHBOARD_WORKSPACE=/workspace \
    SWITCHBOARD_HTTP_PORT=8080 \
    SWITCHBOARD__HTTP__HOST=0.0.0.0
VOLUME ["/data", "/workspace"]
EXPOSE 8080
# The port as start reads it: SWITCHBOARD_HTTP_PORT, else http.port in the config file, else 8080.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "/app/dist/bundle/src/cli.js", "healthcheck"]
# node runs directly under tini (never under npm, which does not pass SIGTERM on to it).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/bundle/src/cli.js"]
CMD ["start"]
