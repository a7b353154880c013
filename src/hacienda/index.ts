/**
 * The tax authority's client: the real Hacienda client only. The local emulator is its own room (src/emulator/);
 * importing this module never loads it (nor Fastify).
 */
export * from './client/index.js';
