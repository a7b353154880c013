/** Default data files of the emulator, shipped in the repository's fixtures/ (works from src/ and dist/). */
import { fileURLToPath } from 'node:url';

const fixtures = new URL('../../fixtures/', import.meta.url);

export const DEFAULT_REGISTRY_FILE = fileURLToPath(new URL('hacienda-registry.json', fixtures));
export const DEFAULT_CABYS_FILE = fileURLToPath(new URL('cabys.json.gz', fixtures));
