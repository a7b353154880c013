/** Every migration, in order. The same list runs on SQLite and PostgreSQL. */
import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './0001-initial.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
