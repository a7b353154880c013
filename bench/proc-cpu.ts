/**
 * CPU of another process and of its descendants, from /proc (Linux; issue 31's `cpuMsPerDocument`): the process's
 * utime + stime + cutime + cstime (its reaped children), plus, recursively, the same of each child still alive (a
 * persistent xmllint shell, say). Sampled at a phase's start and end, the difference is the CPU the phase cost that
 * process tree: a child that exits in between is counted alive at the start and reaped at the end.
 */
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = 100; // USER_HZ on Linux

function statOf(pid: number): number[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ').map(Number);
  } catch {
    return undefined;
  }
}

/** Children of every thread of `pid` (a worker thread's spawn is listed under that thread). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      try {
        return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** CPU ms of `pid` and its descendants (alive ones read live, reaped ones through cutime/cstime). */
export function pidTreeCpuMs(pid: number): number {
  const f = statOf(pid);
  if (!f) return NaN;
  // After the command's closing parenthesis, state is index 0: utime 11, stime 12, cutime 13, cstime 14.
  const own = [11, 12, 13, 14].reduce((a, i) => a + (f[i] ?? 0), 0);
  return (own * 1000) / CLK_TCK + childrenOf(pid).reduce((a, c) => a + (pidTreeCpuMs(c) || 0), 0);
}
