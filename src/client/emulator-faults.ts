/** A local profile's fault file (`emulatorFaults`, docs/faults.md), read when its embedded emulator is about to start. */
import path from 'node:path';
import { BackendError } from './backend.js';
import { FaultFileError, readFaultFile, type FaultFile } from '../emulator/faults.js';

/**
 * Env local with the embedded emulator: the profile's fault file, read (relative to `cwd`). A file that cannot be
 * read or used is a BackendError `invalid` with its findings (`reject[0].codigo: …`), before anything is sent.
 * Nothing with env sandbox|production or an external emulator (`haciendaUrl`): no emulator of this process to tell.
 */
export async function emulatorFaultsOf(cwd: string, profile: { emulatorFaults?: string | undefined; env?: string | undefined; haciendaUrl?: string | undefined }): Promise<FaultFile | undefined> {
  if (!profile.emulatorFaults || (profile.env ?? 'local') !== 'local' || profile.haciendaUrl) return undefined;
  try {
    return readFaultFile(path.resolve(cwd, profile.emulatorFaults));
  } catch (e) {
    if (e instanceof FaultFileError) throw new BackendError('invalid', `emulatorFaults: ${e.message}`, e.findings);
    throw e;
  }
}
