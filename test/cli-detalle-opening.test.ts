// Issue 36, item 8: `fecr send --wait` printed a lone `.` under the verdict. A sandbox issuer (a stag user, as
// `fecr init` writes) is answered as the real sandbox answers (its opening sentence, NOTES §6.3); a production issuer
// gets production's DetalleMensaje, `.` alone (mensaje.ts), which says nothing and is not printed.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const SANDBOX_OPENING = 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function sendWait(issuer: Record<string, unknown>): Promise<{ stdout: string[]; json: { detalleMensaje: string } }> {
  const home = tempDir('fecr-detalle-');
  dirs.push(home);
  const work = join(home, 'work');
  mkdirSync(work, { recursive: true });
  const env = { HOME: home, FECR_NO_KEYCHAIN: '1' };
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(issuer));
  const body = JSON.parse(readFileSync(new URL('../fixtures/documents/10-te-sin-receptor.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(work, 'te.json'), JSON.stringify(body));
  expect((await runCli(['emisor', 'register', 'issuer.json'], { env, cwd: work })).code).toBe(0);
  const r = await runCli(['send', 'te.json', '--wait'], { env, cwd: work });
  expect(r.code, r.stderr).toBe(0);
  const s = await runCli(['status', r.stdout.split('\n')[0]!, '--json'], { env, cwd: work });
  return { stdout: r.stdout.trimEnd().split('\n'), json: JSON.parse(s.stdout) as { detalleMensaje: string } };
}

describe('send --wait: the DetalleMensaje under the verdict', () => {
  it('a sandbox issuer (ambiente 2, a stag user): the sandbox\'s opening sentence, no lone "."', async () => {
    const { stdout, json } = await sendWait(makeTestIssuer().issuer);
    expect(stdout.slice(1)).toEqual(['aceptado', SANDBOX_OPENING]);
    expect(json.detalleMensaje).toBe(SANDBOX_OPENING);
  }, 60_000);

  it('a production issuer (ambiente 1, a production user): production\'s "." is kept as data, not printed', async () => {
    const { stdout, json } = await sendWait({ ...makeTestIssuer().issuer, ambiente: 1, usuarioHacienda: 'cpj-3-101-123456@comprobanteselectronicos.go.cr' });
    expect(stdout.slice(1)).toEqual(['aceptado']);
    expect(json.detalleMensaje).toBe('.');
  }, 60_000);
});
