# switchboard — runs the TypeScript sources through tsx; no build step.
FROM node:22-slim

# Build tools for better-sqlite3 (when no prebuilt binary matches), ripgrep for `search`,
# man-db for `man`.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ripgrep man-db ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY plugins ./plugins
COPY migrations ./migrations
COPY config ./config

# Data and workspace live in volumes owned by the unprivileged `node` user.
RUN mkdir -p /data /workspace && chown -R node:node /data /workspace
USER node
ENV NODE_ENV=production \
    DATABASE_URL=sqlite:/data/switchboard.db \
    SWITCHBOARD_WORKSPACE=/workspace \
    SWITCHBOARD_HTTP_PORT=8080
VOLUME ["/data", "/workspace"]
EXPOSE 8080
CMD ["npm", "start"]
