/** The file beside the bundled CLI naming its build: the SHA-256 of the bundle's files (bundle-cli.ts writes it). */
export const BUILD_ID_FILE = 'build-id.txt';
