/** Moved to service/delivery/webhooks.ts; this re-export stays only until src/commands/webhooks/ (being edited elsewhere) imports the new path. */
export * from './delivery/webhooks.js';
