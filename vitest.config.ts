import { defineConfig } from 'vitest/config';

// The service's tests run twice: on SQLite (every test file) and on PostgreSQL (the store-backed service,
// server and end-to-end files, FECR_TEST_STORE=postgres; see test/helpers/stores.ts).
const ON_BOTH_STORES = [
  'test/service-accounts.test.ts',
  'test/service-documents.test.ts',
  'test/service-worker.test.ts',
  'test/server-api.test.ts',
  'test/server-auth.test.ts',
  'test/e2e-service.test.ts',
  'test/email-delivery.test.ts',
  'test/recibidos-service.test.ts',
  'test/recibidos-answer-again.test.ts',
  'test/server-api-correo.test.ts',
  'test/server-api-correo-relay.test.ts',
  'test/queue-deferred.test.ts',
  'test/service-credentials-hold.test.ts',
  'test/service-numbering.test.ts',
  'test/service-corrections.test.ts',
  'test/hosted-mailbox.test.ts',
  'test/server-api-idempotency.test.ts',
  'test/service-issuer-one-account.test.ts',
  'test/payment-balance.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time even on 2 cores (vitest's default is cores - 1): most files wait on child processes,
    // HTTP servers and the emulator rather than compute, and CI runs on 2 cores with a 20-minute budget.
    maxWorkers: 2,
    // The tests import the sources; the few that spawn bin/fecr.js get dist/ built once per run.
    globalSetup: ['test/helpers/global-build.ts'],
    // Every worker drops the developer's XDG_* and FECR_* variables before a test file loads (the tests and the
    // processes they spawn never read the developer's fecr config, data dir, profile or token).
    setupFiles: ['test/helpers/hermetic-env.ts'],
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'postgres', include: ON_BOTH_STORES, env: { FECR_TEST_STORE: 'postgres' } } },
    ],
  },
});
