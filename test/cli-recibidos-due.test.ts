// Issue 29, answers due: `fecr recibidos list --due` lists the received documents not answered yet, oldest first, with
// their age in days, and warns (a `warning:` line on stderr) from recibidosAvisoDias days before the term
// recibidosPlazoDias (profile keys; defaults 8 and 3); `recibidos import` warns the same. In process (runCli), its own
// HOME, the clock moved forward with `now`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const home = tempDir('fecr-due-');
const work = join(home, 'work');
const t = makeTestIssuer();
const DAY = 86_400_000;
const fecr = (args: string[], days = 0) => runCli(args, { env: { HOME: home, FECR_NO_KEYCHAIN: '1' }, cwd: work, now: () => new Date(Date.now() + days * DAY) });
let claves: string[] = [];

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(t.issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
  const issued = await fecr(['hacienda', 'suppliers', 'issue', '--to', t.issuer.identificacion, '--count', '2', '--out', 'entrada', '--json']);
  expect(issued.code, issued.stderr).toBe(0);
  claves = (JSON.parse(issued.stdout) as { clave: string }[]).map((d) => d.clave);
  const imp = await fecr(['recibidos', 'import', 'entrada']);
  expect(imp.code, imp.stderr).toBe(0);
  // Just received: 8 days left, more than the 3 of the warning.
  expect(imp.stderr).not.toContain('warning:');
  const a = await fecr(['recibidos', 'aceptar', claves[0]!, '--timeout', '0']);
  expect(a.code, a.stderr).toBe(0);
}, 60_000);

describe('fecr recibidos list --due', () => {
  it('lists only the documents not answered yet, with their age; no warning while the term is far', async () => {
    const r = await fecr(['recibidos', 'list', '--due', '--json'], 4);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as { clave: string; edadDias: number; diasRestantes: number; estado: string }[];
    expect(rows.map((x) => [x.clave, x.estado, x.edadDias, x.diasRestantes])).toEqual([[claves[1], 'pendiente', 4, 4]]);
    expect(r.stderr).toBe('');
    const table = await fecr(['recibidos', 'list', '--due']);
    expect(table.stdout.split('\n')[0]).toMatch(/^clave\ttipo\temisor\tfechaEmision\tedadDias\tdiasRestantes\t/);
    expect(table.stdout).toContain(`${claves[1]}\tFE\t`);
    expect(table.stdout).not.toContain(claves[0]);
  });

  it('warns from 3 days before the default 8, and after it; the profile keys move both', async () => {
    const near = await fecr(['recibidos', 'list', '--due'], 6);
    expect(near.code).toBe(0);
    expect(near.stderr).toMatch(new RegExp(`^warning: ${claves[1]} from \\d+ .* is 6 days old and not answered: 2 days left of the 8 days after which Hacienda is taken to presume acceptance \\(recibidosPlazoDias`));
    const past = await fecr(['recibidos', 'list', '--due'], 10);
    expect(past.stderr).toContain('is 10 days old and not answered: passed 2 days ago of the 8 days');
    // The import warns the same for a file already imported and still not answered.
    const again = await fecr(['recibidos', 'import', 'entrada'], 7);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`warning: ${claves[1]} from`);
    expect(again.stderr).toContain('1 day left of the 8 days');
    expect(again.stderr).not.toContain(`warning: ${claves[0]}`);

    expect((await fecr(['config', 'set', 'recibidosPlazoDias', '30'])).code).toBe(0);
    const later = await fecr(['recibidos', 'list', '--due', '--json'], 10);
    expect(later.stderr).toBe('');
    expect((JSON.parse(later.stdout) as { diasRestantes: number }[])[0]!.diasRestantes).toBe(20);
    expect((await fecr(['config', 'set', 'recibidosAvisoDias', '25'])).code).toBe(0);
    expect((await fecr(['recibidos', 'list', '--due'], 10)).stderr).toContain('20 days left of the 30 days');
  });

  it('bad values and flags: usage errors', async () => {
    const bad = await fecr(['config', 'set', 'recibidosPlazoDias', 'ocho']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('recibidosPlazoDias: must be a whole number of days');
    const both = await fecr(['recibidos', 'list', '--due', '--state', 'aceptado']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--due lists the documents not answered yet');
  });
});
