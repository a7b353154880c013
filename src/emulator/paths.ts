/** Default data files of the emulator, shipped in the repository's fixtures/. */
import { fileURLToPath } from 'node:url';
import { packageUrl } from '../core/package-root.js';

export const DEFAULT_REGISTRY_FILE = fileURLToPath(packageUrl('fixtures/hacienda-registry.json'));
export const DEFAULT_CABYS_FILE = fileURLToPath(packageUrl('fixtures/cabys.json.gz'));
