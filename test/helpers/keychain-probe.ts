// Loads the master key twice for a data dir and prints where it came from (run inside a D-Bus session).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadMasterKey } from '../../src/service/secrets.js';

const dataDir = process.argv[2]!;
const a = await loadMasterKey({ dataDir, env: {} });
const b = await loadMasterKey({ dataDir, env: {} });
process.stdout.write(JSON.stringify({ first: a.source, second: b.source, same: a.key.equals(b.key), file: existsSync(join(dataDir, 'master.key')) }));
