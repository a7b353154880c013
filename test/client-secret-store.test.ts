// Session tokens per profile: the OS keychain (a real Secret Service, gnome-keyring, in a private D-Bus session),
// the 0600 file where no keychain answers (with one warning line), FECR_TOKEN over both.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deleteToken, readToken, saveToken, tokenFile } from '../src/client/secret-store.js';
import { tempDir } from './helpers/cli.js';

const hasTools = spawnSync('sh', ['-c', 'command -v dbus-run-session && command -v gnome-keyring-daemon']).status === 0;
const TSX = import.meta.resolve('tsx');
const MODULE = new URL('../src/client/secret-store.ts', import.meta.url).pathname;

/** Saves, reads, reads with FECR_TOKEN, deletes and reads again in a child process; prints JSON. */
function probeScript(configDir: string): string {
  return `
import { saveToken, readToken, deleteToken } from ${JSON.stringify(MODULE)};
import { existsSync } from 'node:fs';
const warnings = [];
const o = { env: {}, configDir: ${JSON.stringify(configDir)}, warn: (l) => warnings.push(l) };
const saved = await saveToken(o, 'hosted', 'tok-aaa');
const read = await readToken(o, 'hosted');
const fileAfterSave = existsSync(${JSON.stringify(join(configDir, 'tokens', 'hosted.token'))});
const overridden = await readToken({ ...o, env: { FECR_TOKEN: 'tok-env' } }, 'hosted');
const other = await readToken(o, 'other');
const deleted = await deleteToken(o, 'hosted');
const after = await readToken(o, 'hosted');
process.stdout.write(JSON.stringify({ saved, read, fileAfterSave, overridden, other, deleted, after, warnings }));
`;
}

function runProbe(configDir: string, env: Record<string, string | undefined>, inDbusSession: boolean): any {
  const node = [process.execPath, '--import', TSX, '--input-type=module', '-e', probeScript(configDir)];
  if (!inDbusSession) return JSON.parse(execFileSync(node[0]!, node.slice(1), { encoding: 'utf8', env }));
  const quoted = node.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = `printf 'test' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec ${quoted}`;
  return JSON.parse(execFileSync('dbus-run-session', ['--', 'sh', '-c', script], { encoding: 'utf8', env }));
}

describe('token storage', () => {
  it.skipIf(!hasTools)('keeps the token in the OS keychain when one answers (no file, no warning)', () => {
    const home = tempDir('fecr-kc-');
    const cfg = join(home, 'cfg');
    const r = runProbe(cfg, { ...process.env, HOME: home, FECR_NO_KEYCHAIN: undefined }, true);
    expect(r).toEqual({
      saved: 'keychain',
      read: { token: 'tok-aaa', source: 'keychain' },
      fileAfterSave: false,
      overridden: { token: 'tok-env', source: 'env' },
      other: null,
      deleted: true,
      after: null,
      warnings: [],
    });
  });

  it('falls back to a 0600 file with one warning line when no D-Bus session answers', () => {
    const home = tempDir('fecr-nokc-');
    const cfg = join(home, 'cfg');
    const r = runProbe(cfg, { ...process.env, HOME: home, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent', FECR_NO_KEYCHAIN: undefined }, false);
    expect(r).toMatchObject({
      saved: 'file',
      read: { token: 'tok-aaa', source: 'file' },
      fileAfterSave: true,
      overridden: { token: 'tok-env', source: 'env' },
      other: null,
      deleted: true,
      after: null,
    });
    expect(r.warnings).toEqual([`warning: no OS keychain available: the session token of profile "hosted" is in ${join(cfg, 'tokens', 'hosted.token')} (mode 0600)`]);
    expect(r.warnings[0]).not.toContain('tok-aaa');
  });

  it('in-process with FECR_NO_KEYCHAIN=1: file mode 0600 in a 0700 dir, FECR_TOKEN first, delete forgets', async () => {
    const cfg = join(tempDir('fecr-file-'), 'cfg');
    const warnings: string[] = [];
    const o = { env: { FECR_NO_KEYCHAIN: '1' }, configDir: cfg, warn: (l: string) => warnings.push(l) };
    expect(await readToken(o, 'p')).toBeNull();
    expect(await saveToken(o, 'p', 'first')).toBe('file');
    expect(await saveToken(o, 'p', 'second')).toBe('file');
    const file = tokenFile(cfg, 'p');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(cfg, 'tokens')).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toBe('second\n');
    expect(warnings).toHaveLength(2); // one line per save
    expect(await readToken(o, 'p')).toEqual({ token: 'second', source: 'file' });
    expect(await readToken({ ...o, env: { ...o.env, FECR_TOKEN: ' from-env ' } }, 'p')).toEqual({ token: 'from-env', source: 'env' });
    expect(await deleteToken(o, 'p')).toBe(true);
    expect(existsSync(file)).toBe(false);
    expect(await deleteToken(o, 'p')).toBe(false);
    expect(await readToken(o, 'p')).toBeNull();
  });
});
