/**
 * Temporary folders removed when the process is stopped by SIGINT or SIGTERM (issue 37): `fecr archive verify`'s
 * scratch index ($TMPDIR/fecr-index-*), `fecr test`'s throwaway data dir ($TMPDIR/fecr-test-run-*). A folder is
 * registered while it exists and unregistered when its owner removes it.
 *
 * The hook changes nothing else about the signal: when no other listener handles it (the command has no graceful
 * stop of its own), the folders are removed and the signal is raised again with the default action, so the process
 * ends as it would have (killed by that signal). When a command handles the signal itself (`fecr test` finishes the
 * documents in flight, then disposes of its data dir), the hook leaves the folders to it. SIGKILL cannot be caught:
 * `fecr test` removes the throwaway dirs of dead processes at its next start (client/test-runner/throwaway.ts).
 */
import { rmSync } from 'node:fs';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const dirs = new Set<string>();

function onSignal(signal: NodeJS.Signals): void {
  // Another listener stops the command gracefully: it owns the folders' removal.
  if (process.listenerCount(signal) > 1) return;
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
  for (const s of SIGNALS) process.off(s, onSignal);
  process.kill(process.pid, signal);
}

/** Removes `dir` if the process is stopped by SIGINT/SIGTERM; call the returned function once it is removed. */
export function removeOnSignal(dir: string): () => void {
  if (dirs.size === 0) for (const s of SIGNALS) process.on(s, onSignal);
  dirs.add(dir);
  return () => {
    dirs.delete(dir);
    if (dirs.size === 0) for (const s of SIGNALS) process.off(s, onSignal);
  };
}
