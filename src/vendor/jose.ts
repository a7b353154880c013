/**
 * The 'jose' package, imported everywhere as '#jose' (package.json "imports"): `npm run build` bundles it
 * into one file, dist/vendor/jose.js (scripts/bundle.mjs says why). Types come from here.
 */
export * from 'jose';
