/**
 * The throwaway profile of `fecr test`: a local profile (the service in this process, Hacienda the embedded emulator)
 * on a data dir of its own in the system's temp folder, made for the run and removed after it (kept with `--keep`).
 * Nothing of the user's profiles, config file or data dirs is read or written: its issuers, numbers and documents
 * start from nothing at every run, so bodies with fixed numeroReferencia never collide with an earlier run's.
 * `emulatorFaults` (a fault file, `--faults FILE`) is handed to it as the profile key of that name: its emulator
 * applies it. Its master key is a file in its data dir (never the OS keychain); FECR_MASTER_KEY, when set, still wins.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Backend } from '../backend.js';
import type { ClientContext } from '../context.js';
import type { LocalProfile } from '../local-backend.js';

export interface Throwaway {
  dataDir: string;
  backend: Backend;
  /** Closes the backend and removes the data dir unless kept. */
  dispose(keep: boolean): Promise<void>;
}

export async function openThrowaway(ctx: ClientContext, opts: { faults?: string } = {}): Promise<Throwaway> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'fecr-test-run-'));
  // Its own master key in its data dir (read before the OS keychain is tried: nothing of a run lands in the keychain).
  await writeFile(path.join(dataDir, 'master.key'), randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  const profile: LocalProfile = {
    dataDir,
    env: 'local',
    // Test documents: the receptors' mails stay in the data dir's outbox, whatever SMTP server the environment names.
    outboxOnly: true,
    ...(opts.faults ? { emulatorFaults: path.resolve(ctx.io.cwd, opts.faults) } : {}),
  };
  let backend: Backend;
  try {
    const { openLocalBackend } = await import('../local-backend.js');
    backend = await openLocalBackend(ctx, profile, { bulk: true });
  } catch (e) {
    await rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  let disposed = false;
  return {
    dataDir,
    backend,
    async dispose(keep) {
      if (disposed) return;
      disposed = true;
      try {
        await backend.close();
      } finally {
        if (!keep) await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  };
}
