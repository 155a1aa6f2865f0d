# syntax=docker/dockerfile:1
# One image for every component of the gateway; the command picks the component:
#   docker run IMAGE account api            (account | content-publishing | content-watcher) (api | worker)
#   docker run IMAGE devchain --host 0.0.0.0   the development chain, for dev clusters only
# `make image` builds it. The code also runs on Node 20.19+, so NODE_MAJOR can be lowered.
ARG NODE_MAJOR=26

FROM node:${NODE_MAJOR}-trixie-slim AS base
WORKDIR /app

# Only the package manifests, so that the dependency layers below are rebuilt when a manifest or the lock
# changes, not on every source edit (COPY --from is cached by content).
FROM base AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && cp --parents package.json package-lock.json shared/*/package.json services/*/package.json \
      dev/devchain/package.json dev/devstack/package.json dev/runtime/package.json e2e/package.json tools/package.json /manifests/ \
 && cp -r /manifests /install-manifests \
 && find /install-manifests -name package.json -exec node -e ' \
      const fs = require("node:fs"); \
      const kept = ["name", "version", "private", "workspaces", "dependencies", "devDependencies", "optionalDependencies", \
        "peerDependencies", "peerDependenciesMeta", "bundleDependencies", "overrides", "bin", "engines", "os", "cpu"]; \
      for (const file of process.argv.slice(1)) { \
        const manifest = JSON.parse(fs.readFileSync(file, "utf8")); \
        fs.writeFileSync(file, JSON.stringify(Object.fromEntries(kept.filter((k) => k in manifest).map((k) => [k, manifest[k]])))); \
      }' {} +

# Every dependency, production and development, installed from the manifests' install fields only (a description or
# a script edited does not install again; the build and dev stages copy the whole manifests over them). Install
# scripts stay off, as in the repository (package.json "allowScripts"): nothing the gateway runs needs one.
FROM base AS dependencies
COPY --from=manifests /install-manifests ./
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund

# The TypeScript sources, compiled: each package to its dist/.
FROM dependencies AS build
COPY . .
# Incremental across builds on one machine (skaffold dev's loop): tools/build-with-cache keeps the compiler's output
# in a BuildKit cache and recompiles by content what changed; the output is a clean build's. Locked: two builds at
# once take turns on it.
RUN --mount=type=cache,id=frequency-gateway-tsc,target=/tsc-cache,sharing=locked tools/build-with-cache /tsc-cache \
 && mkdir /out \
 && cp --parents -r bin shared/*/dist services/*/dist dev/devchain/dist dev/devchain/runtime /out/ \
 && find /out -name '*.d.ts' -delete -o -name '*.d.ts.map' -delete

# Production dependencies only. The workspace packages are still linked into node_modules (they are the root's
# workspaces, not devDependencies); tools/test/runtimeDependencies.test.ts checks that whatever their code imports
# is in their "dependencies". --omit=peer drops what only peer dependencies reach: Expo and React Native (~400 MB),
# which siwf's isomorphic-webcrypto names for React Native and never loads in Node (the same test keeps it so).
FROM base AS production-dependencies
COPY --from=manifests /manifests ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --omit=peer --ignore-scripts --no-audit --no-fund

# For development only (skaffold dev): every dependency, the TypeScript sources and their compiled dist/. Each api
# and worker runs from dist/ under dev/images/dev-runner.mjs, which compiles a source file skaffold's file sync copies
# into the container and restarts the components that import it. Sources and dist/ belong to the user the
# components run as, so that the sync and the runner can write them (skaffold's dev profile turns the read-only root
# filesystem off). The production image below is built without this stage.
FROM dependencies AS dev
COPY --chown=1000:1000 . .
COPY --from=build --chown=1000:1000 /out/ ./
# Each service's packages in one module, which a component restarted by a synced edit loads in a fraction of the
# time node_modules takes (dev/images/dev-vendor.mjs).
RUN node dev/images/dev-vendor.mjs
ENV HOME=/tmp \
    npm_config_cache=/tmp/.npm
EXPOSE 3010 3011 3013 3020 3021 3023 9944
USER 1000:1000
ENTRYPOINT ["/app/dev/images/dev-entrypoint"]
CMD ["--help"]

FROM base AS production
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="frequency-gateway" \
      org.opencontainers.image.description="Frequency Developer Gateway: account, content-publishing and content-watcher (api and worker each), and the devchain" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

# NODE_ENV is set here only: in the build stages it would make `npm ci` leave out the devDependencies.
# HOME and the npm cache point at /tmp so that nothing tries to write elsewhere under a read-only root
# filesystem (mount an emptyDir at /tmp). In a cluster the components use Kubo, not the embedded IPFS store.
ENV NODE_ENV=production \
    HOME=/tmp \
    npm_config_cache=/tmp/.npm

# Owned by root and not writable by the user the components run as.
COPY --from=production-dependencies /app ./
COPY --from=build /out ./

# api ports 3013 (account), 3010 (content-publishing), 3011 (content-watcher); workers serve health and metrics
# on the api port + 10; the devchain listens on 9944.
EXPOSE 3010 3011 3013 3020 3021 3023 9944

# The image's `node` user, by number so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000

# Node runs as PID 1 without tini: every component, and the devchain, handles SIGTERM and SIGINT itself (an
# ordered, bounded shutdown), and none starts child processes, so there are no zombies to reap.
# `docker run --init` adds an init process for anyone who wants one.
# No HEALTHCHECK: Kubernetes ignores it; the chart probes /livez and /readyz instead.
ENTRYPOINT ["node", "/app/bin/gateway.js"]
CMD ["--help"]
