/**
 * The 'fast-xml-parser' package, imported everywhere as '#fast-xml-parser' (package.json "imports"): `npm run build` bundles it
 * into one file, dist/vendor/fast-xml-parser.js (scripts/bundle.mjs says why). Types come from here.
 */
export * from 'fast-xml-parser';
