/**
 * Where the files fecr ships beside its code are (package.json, fixtures/, schemas/xsd/): the package root, found
 * from this module's own URL. From the sources (tsx, vitest) this module is src/core/package-root.ts, two levels
 * below the root; in the build every module is part of a file directly in dist/ (scripts/bundle.mjs, which
 * defines FECR_BUNDLE), one level below. Every other module names these files through here: no module counts
 * its own depth (test/build.test.ts checks it).
 */
declare const FECR_BUNDLE: boolean | undefined;

const BUNDLED = typeof FECR_BUNDLE !== 'undefined' && FECR_BUNDLE;

/** file: URL of the package root, with a trailing slash. */
export const PACKAGE_ROOT_URL = new URL(BUNDLED ? '../' : '../../', import.meta.url);

/** file: URL of a file or folder of the package (`'package.json'`, `'fixtures/documents/'`). */
export function packageUrl(relative: string): URL {
  return new URL(relative, PACKAGE_ROOT_URL);
}
