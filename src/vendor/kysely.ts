/**
 * The 'kysely' package, imported everywhere as '#kysely' (package.json "imports"): `npm run build` bundles it
 * into one file, dist/vendor/kysely.js (scripts/bundle.mjs says why). Types come from here.
 */
export * from 'kysely';
