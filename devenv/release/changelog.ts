/**
 * CHANGELOG.md, in the form of Keep a Changelog: `## [Unreleased]`, then one `## [X.Y.Z] - DATE`
 * per release, newest first, each with the line `Commit: \`<40 hex digits>\`` under its heading
 * (bench/baseline.ts finds the newest release's commit by it).
 *
 * The commit a release names is the one it was cut from: the last commit before `npm run release`
 * made the release commit, which holds the same code plus the version bump and this file's new
 * heading (a commit cannot name its own hash). The tag vX.Y.Z names the release commit itself.
 */

export interface Release {
  version: string;
  date: string;
  commit: string | undefined;
}

const UNRELEASED = /^## \[Unreleased\][^\n]*\n/m;
const RELEASE_HEADING = /^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})[^\n]*\n/gm;

/** The releases listed, newest first, each with the commit on the line under its heading (one blank line between). */
export function releases(changelog: string): Release[] {
  return [...changelog.matchAll(RELEASE_HEADING)].map((heading) => {
    const after = changelog.slice((heading.index ?? 0) + heading[0].length);
    const commit = /^\nCommit: `([0-9a-f]{40})`\n/.exec(after)?.[1];
    return { version: heading[1] ?? '', date: heading[2] ?? '', commit };
  });
}

/**
 * The changelog with the entries of `## [Unreleased]` moved under `## [version] - date` and its
 * Commit line; `## [Unreleased]` stays, empty. Throws when there is no `## [Unreleased]` or it has
 * no entries.
 */
export function cutRelease(changelog: string, version: string, date: string, commit: string): string {
  const unreleased = UNRELEASED.exec(changelog);
  if (!unreleased) throw new Error('CHANGELOG.md has no "## [Unreleased]" heading');
  const bodyStart = unreleased.index + unreleased[0].length;
  const next = /^## \[/m.exec(changelog.slice(bodyStart));
  const bodyEnd = next ? bodyStart + next.index : changelog.length;
  const entries = changelog.slice(bodyStart, bodyEnd).trim();
  if (entries === '') throw new Error('nothing to release: "## [Unreleased]" in CHANGELOG.md has no entries');
  const rest = changelog.slice(bodyEnd);
  return (
    `${changelog.slice(0, bodyStart)}\n` +
    `## [${version}] - ${date}\n\nCommit: \`${commit}\`\n\n${entries}\n` +
    (rest === '' ? '' : `\n${rest}`)
  );
}
