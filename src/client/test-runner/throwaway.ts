/**
 * The throwaway profile of `fecr test`: a local profile (the service in this process, Hacienda the embedded emulator)
 * on a data dir of its own in the system's temp folder, made for the run and removed after it (kept with `--keep`).
 * Nothing of the user's profiles, config file or data dirs is read or written: its issuers, numbers and documents
 * start from nothing at every run, so bodies with fixed numeroReferencia never collide with an earlier run's.
 * `emulatorFaults` (a fault file, `--faults FILE`) is handed to it as the profile key of that name: its emulator
 * applies it.
 *
 * Nothing of a run outlives it (issue 37): its master key is held in memory only (never a file, never the OS
 * keychain; FECR_MASTER_KEY, when set, still wins), written into the data dir only when it is kept (`--keep`, so the
 * kept profile can be opened). The data dir is removed on SIGINT/SIGTERM when nothing else handles them
 * (adapters/temp-cleanup.ts; `fecr test` itself finishes the documents in flight first, then disposes of it). It is
 * named after the process (`fecr-test-run-PID-XXXXXX`): a run killed with SIGKILL cannot clean up, so each start
 * removes the throwaway dirs of this user whose process is gone (not those kept with --keep).
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { removeOnSignal } from '../../adapters/temp-cleanup.js';
import type { Backend } from '../backend.js';
import type { ClientContext } from '../context.js';
import type { LocalProfile } from '../local-backend.js';

export interface Throwaway {
  dataDir: string;
  backend: Backend;
  /** Closes the backend and removes the data dir unless kept. */
  dispose(keep: boolean): Promise<void>;
}

const PREFIX = 'fecr-test-run-';
/** The file a kept data dir holds (--keep): the sweep leaves it. */
const KEPT = '.kept';

export async function openThrowaway(ctx: ClientContext, opts: { faults?: string } = {}): Promise<Throwaway> {
  await sweepStale();
  const dataDir = await mkdtemp(path.join(tmpdir(), `${PREFIX}${process.pid}-`));
  const forget = removeOnSignal(dataDir);
  const masterKey = Buffer.from(randomBytes(32));
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
    backend = await openLocalBackend(ctx, profile, { bulk: true, masterKey });
  } catch (e) {
    await rm(dataDir, { recursive: true, force: true });
    forget();
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
        if (keep) {
          if (!ctx.io.env.FECR_MASTER_KEY) await writeFile(path.join(dataDir, 'master.key'), masterKey.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
          await writeFile(path.join(dataDir, KEPT), '', { mode: 0o600 });
        } else await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
        forget();
      }
    },
  };
}

/** Whether process `pid` is alive (EPERM: alive, another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes this user's throwaway dirs whose process is gone (killed with SIGKILL), except those kept with --keep. */
async function sweepStale(): Promise<void> {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of names) {
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    const dir = path.join(tmpdir(), name);
    const st = await lstat(dir).catch(() => undefined);
    if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
    if (await lstat(path.join(dir, KEPT)).then(() => true, () => false)) continue;
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
