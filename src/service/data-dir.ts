/**
 * The data dir's own permissions. It holds the database (every document, the sealed secrets), the master key and
 * the outbox's mails: only its owner may enter it, 0700. A new one is made so; an existing one that is more open
 * (0755 from an older fecr, from `mkdir`, from a restored backup) is closed to 0700 when the user running fecr owns
 * it, else a warning says what is exposed and how to fix it. POSIX only (Windows has no such modes).
 */
import { chmodSync, mkdirSync, statSync } from 'node:fs';

export function secureDataDir(dir: string, warn?: (message: string) => void): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') return;
  const st = statSync(dir);
  if ((st.mode & 0o077) === 0) return;
  const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
  const mine = typeof process.getuid === 'function' && st.uid === process.getuid();
  if (mine) {
    try {
      chmodSync(dir, 0o700);
      return;
    } catch (e) {
      warn?.(`data dir ${dir} is mode ${mode} and could not be made 0700 (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): other users may read its database and keys; chmod 700 ${dir}`);
      return;
    }
  }
  warn?.(`data dir ${dir} is mode ${mode} and owned by another user: other users may read its database and keys; its owner should chmod 700 ${dir}`);
}
