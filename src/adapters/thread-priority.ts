/**
 * Lowers the priority of the calling thread (Linux: its nice value; threads are scheduled one by one there), so that
 * CPU-bound work on a worker thread yields the CPU to the event loop when the machine is short of it. Elsewhere, or
 * when it cannot, nothing happens: the work only competes as an equal.
 */
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** `nice` from 1 (a little lower) to 19 (lowest). Returns whether the priority was lowered. */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // The kernel's id of this thread (not the process's): setpriority(PRIO_PROCESS, tid) applies to that thread alone.
    const tid = Number(readFileSync('/proc/thread-self/stat', 'latin1').split(' ', 1)[0]);
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
