// `fecr send --wait --strict` against the emulator's warnings (issue 19): an answer that is "aceptado" with a
// warning listed (-407, an activity of the catalogue the issuer has not registered) exits 0 and prints the warning
// without --strict, and exits 3 (the README's exit-code table) with --strict.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureBody } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-strict-');
const env = { HOME: dir, FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: join(dir, 'data'), FECR_MASTER_KEY: Buffer.alloc(32, 5).toString('base64') };
const fecr = (args: string[]) => runCli(args, { cwd: dir, env });
const WARNING = '-407, ""El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico no se encuentra Registrado ante el Ministerio de Hacienda para este contribuyente, favor verificar"", 0, 0';

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  expect((await fecr(['emisor', 'register', 'issuer.json'])).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('aceptado with warnings', () => {
  const body = (n: number) => ({ ...fixtureBody('01-fe-servicios-13'), numeroReferencia: n, codigoActividad: '6492.0' });

  it('without --strict: exit 0, the warning printed', async () => {
    writeFileSync(join(dir, 'w1.json'), JSON.stringify(body(401)));
    const r = await fecr(['send', 'w1.json', '--wait']);
    expect(r.code, r.stderr).toBe(0);
    const [, estado, ...detalle] = r.stdout.trim().split('\n');
    expect(estado).toBe('aceptado');
    expect(detalle.join('\n')).toContain(WARNING);
  });

  it('with --strict: exit 3, saying why', async () => {
    writeFileSync(join(dir, 'w2.json'), JSON.stringify(body(402)));
    const r = await fecr(['send', 'w2.json', '--wait', '--strict']);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(WARNING);
    expect(r.stderr).toMatch(/aceptado, but DetalleMensaje lists 1 error \(--strict\)/);
  });
});
