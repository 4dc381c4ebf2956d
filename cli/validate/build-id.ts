/**
 * The file beside the bundled CLI naming its build: the SHA-256 of the bundle's files. The build
 * (devenv/build/bundle-cli.ts) writes it; `staticsite validate` reads it (crd-cache.ts).
 */
export const BUILD_ID_FILE = 'build-id.txt';
