/** Default data files of the emulator, shipped in the repository's fixtures/. */
import { fileURLToPath } from 'node:url';
import { packageUrl } from '../core/package-root.js';

export const DEFAULT_REGISTRY_FILE = fileURLToPath(packageUrl('fixtures/hacienda-registry.json'));
export { DEFAULT_CABYS_FILE } from '../adapters/cabys-file.js';
