/** Moved to service/delivery/worker.ts; this re-export stays only until test/hosted-postgres.test.ts (being edited elsewhere) imports the new path. */
export * from './delivery/worker.js';
