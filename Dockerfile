# One small image for the webhook, the controller and the cert bootstrapper.
# With a registry:     docker build -t staticsite-operator:0.2.0 --build-arg STATICSITE_COMMIT=$(git rev-parse HEAD) .
# Without a registry:  npm run image   (makes the two bases here and passes them as build args)
ARG BUILD_BASE=node:24-bookworm-slim
ARG RUNTIME_BASE=gcr.io/distroless/nodejs24-debian12:nonroot

# Build stage: compile TypeScript to dist/ (the CLI as one bundle in dist/bin/) and keep only
# production dependencies.
FROM ${BUILD_BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the image's own Node 24 runs everything, so the `node` devDependency's
# install script (which fetches a Node binary for npm scripts on older hosts) is not needed.
RUN npm ci --ignore-scripts --no-audit --no-fund
# The sources: everything .dockerignore lets through; tsconfig.build.json names the folders that build.
COPY . .
# The commit `staticsite --version` names (npm run image passes it; the context has no .git): unset, `unknown`.
ARG STATICSITE_COMMIT=
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && mkdir -p /owned/pki /owned/webhook-certs /owned/records /owned/dns

# Runtime: Node 24 with no shell and no package manager, as the nonroot user (65532).
FROM ${RUNTIME_BASE}
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# Mount points owned by the runtime user, so named volumes start writable for it.
COPY --from=build --chown=65532:65532 /owned/ /
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/bin/staticsite.js"]
CMD ["--help"]
