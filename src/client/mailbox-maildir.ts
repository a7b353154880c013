/**
 * A Maildir as a MailSource (issue 30, `fecr recibidos watch --maildir DIR`): the waiting mails are the files of
 * DIR/new and DIR/cur; a mail dealt with is renamed (atomic, same file system) into the Maildir++ subfolder
 * DIR/.fecr-imported/cur, or set aside into DIR/.fecr-set-aside/cur as a copy with its reasons prepended as headers
 * (service/mailbox/headers.ts), written in the subfolder's tmp/ and renamed into cur/ before the original is removed.
 * The copy keeps the original's name: a process killed between the two steps writes the same copy again on the next
 * pass. A mail that was not read (over the size limit, not a regular file) moves as it is, with its reasons in a
 * sidecar DIR/.fecr-set-aside/reasons/NAME.txt.
 *
 * The files are read as `fecr recibidos import` reads a folder's (client/recibidos-files.ts): regular files only, a
 * symlink only to one inside the Maildir, never more than the limit + 1 bytes. Names come from the directory listing
 * (no separator can be in one); those starting with a dot are skipped, as Maildir readers do.
 *
 * fecr's own subfolders are its own (issue 37): made 0700, and a `.fecr-set-aside` or `.fecr-imported` (or one of
 * their tmp/, cur/, reasons/) that is a symlink or not a folder is refused, at open and again before each write, so a
 * copy of a supplier's mail is never written through a link to elsewhere. The copies and sidecars are created
 * exclusively without following a symlink (O_EXCL | O_NOFOLLOW), 0600.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, readdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setAsideHeaders, withHeaders } from '../service/mailbox/headers.js';
import type { MailRead, MailRef, MailSource } from '../service/mailbox/watch.js';
import { readImportFile } from './recibidos-files.js';

export const MAILDIR_IMPORTED = '.fecr-imported';
export const MAILDIR_SET_ASIDE = '.fecr-set-aside';

/** A Maildir name moved to cur/ carries the info part `:2,FLAGS`; a name from new/ gets an empty one. */
const curName = (name: string) => (name.includes(':2,') ? name : `${name}:2,`);

export class MaildirSource implements MailSource {
  readonly label: string;

  private constructor(private readonly dir: string) {
    this.label = dir;
  }

  /** Throws an Error saying why when DIR is not a Maildir (no new/ and cur/ folders). */
  static async open(dir: string): Promise<MaildirSource> {
    const real = await realpath(dir).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`${dir}: ${e.code === 'ENOENT' ? 'no such folder' : (e.code ?? e.message)}`);
    });
    for (const sub of ['new', 'cur']) {
      const st = await stat(path.join(real, sub)).catch(() => null);
      if (!st?.isDirectory()) throw new Error(`${dir}: not a Maildir (it has no ${sub}/ folder)`);
    }
    for (const folder of [MAILDIR_IMPORTED, MAILDIR_SET_ASIDE]) {
      for (const sub of [...['tmp', 'new', 'cur'], ...(folder === MAILDIR_SET_ASIDE ? ['reasons'] : [])]) await ownFolder(real, folder, sub);
    }
    return new MaildirSource(real);
  }

  async pending(): Promise<MailRef[]> {
    const refs: MailRef[] = [];
    for (const sub of ['new', 'cur']) {
      const names = (await readdir(path.join(this.dir, sub))).filter((n) => !n.startsWith('.')).sort();
      for (const n of names) refs.push({ id: `${sub}/${n}` });
    }
    return refs;
  }

  private file(ref: MailRef): { full: string; name: string } {
    const [sub, name] = [ref.id.slice(0, 3), ref.id.slice(4)];
    // Only what pending() listed: new/NAME or cur/NAME, NAME one path segment.
    if ((sub !== 'new' && sub !== 'cur') || !name || name.includes('/') || name.includes('\\') || name.startsWith('.')) throw new Error(`not a mail of this Maildir: ${ref.id}`);
    return { full: path.join(this.dir, sub, name), name };
  }

  async read(ref: MailRef, maxBytes: number): Promise<MailRead> {
    const { full, name } = this.file(ref);
    const r = await readImportFile(full, name, { maxBytes, folder: this.dir });
    if ('finding' in r) return { unreadable: r.finding.message };
    if (r.size !== undefined) return { tooLarge: r.size };
    return { bytes: Buffer.from(r.bytes) };
  }

  async imported(ref: MailRef): Promise<void> {
    const { full, name } = this.file(ref);
    await ownFolder(this.dir, MAILDIR_IMPORTED, 'cur');
    await moveOnce(full, path.join(this.dir, MAILDIR_IMPORTED, 'cur', curName(name)));
  }

  async setAside(ref: MailRef, raw: Buffer | null, reasons: string[]): Promise<void> {
    const { full, name } = this.file(ref);
    const target = path.join(this.dir, MAILDIR_SET_ASIDE, 'cur', curName(name));
    await ownFolder(this.dir, MAILDIR_SET_ASIDE, 'cur');
    if (raw === null) {
      await ownFolder(this.dir, MAILDIR_SET_ASIDE, 'reasons');
      await writeOwn(path.join(this.dir, MAILDIR_SET_ASIDE, 'reasons', `${name}.txt`), `${reasons.join('\n')}\n`);
      await moveOnce(full, target);
      return;
    }
    await ownFolder(this.dir, MAILDIR_SET_ASIDE, 'tmp');
    const tmp = path.join(this.dir, MAILDIR_SET_ASIDE, 'tmp', name);
    await writeOwn(tmp, withHeaders(raw, setAsideHeaders(reasons)));
    await rename(tmp, target);
    await rm(full, { force: true });
  }

  async close(): Promise<void> {}
}

/** Renames `from` to `to`; a `from` already gone (moved by an earlier pass) is not an error. */
async function moveOnce(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/**
 * DIR/FOLDER/SUB made (0700) if absent; FOLDER and SUB must be folders of their own, not symlinks (a link would send
 * the copies of suppliers' mails elsewhere). Throws an Error naming the path.
 */
async function ownFolder(dir: string, folder: string, sub: string): Promise<void> {
  for (const p of [path.join(dir, folder), path.join(dir, folder, sub)]) {
    await mkdir(p, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    const st = await lstat(p);
    if (st.isSymbolicLink()) throw new Error(`${p}: a symlink where fecr keeps its own folder: refused (remove it; fecr makes the folder)`);
    if (!st.isDirectory()) throw new Error(`${p}: not a folder: refused (remove it; fecr makes the folder)`);
  }
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** Created here and only here: never through a symlink, never over a file (O_EXCL). */
const OWN_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;

/**
 * Writes a file of fecr's subfolder, 0600, exclusively. One left by a pass killed before its rename (or a link put
 * there) is removed first (rm removes a link, never its target): the next pass writes the same file again.
 */
async function writeOwn(file: string, data: string | Buffer): Promise<void> {
  try {
    await writeFile(file, data, { mode: 0o600, flag: OWN_FILE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST' && (e as NodeJS.ErrnoException).code !== 'ELOOP') throw e;
    await rm(file, { force: true });
    await writeFile(file, data, { mode: 0o600, flag: OWN_FILE });
  }
}
