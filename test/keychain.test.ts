// The master key in the OS keychain: a real Secret Service (gnome-keyring) inside a private D-Bus session.
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/cli.js';

const hasTools = spawnSync('sh', ['-c', 'command -v dbus-run-session && command -v gnome-keyring-daemon']).status === 0;
const probe = new URL('./helpers/keychain-probe.ts', import.meta.url).pathname;

describe.skipIf(!hasTools)('master key in the OS keychain', () => {
  it('is created in and read back from the Secret Service, with no key file', () => {
    const dir = tempDir();
    const script = `printf 'test' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec "${process.execPath}" --import tsx "${probe}" "${dir}"`;
    const out = execFileSync('dbus-run-session', ['--', 'sh', '-c', script], { encoding: 'utf8', env: { ...process.env, HOME: dir } });
    expect(JSON.parse(out)).toEqual({ first: 'keychain', second: 'keychain', same: true, file: false });
  });

  it('falls back to the 0600 file when no D-Bus session answers', () => {
    const dir = tempDir();
    const out = execFileSync(process.execPath, ['--import', 'tsx', probe, dir], {
      encoding: 'utf8',
      env: { ...process.env, HOME: dir, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' },
    });
    expect(JSON.parse(out)).toEqual({ first: 'file', second: 'file', same: true, file: true });
  });
});
