// Two verdicts on one document body, for the one-verdict tests: `fecr validate` (run in-process, on a clock of the
// test's) and the embedded emulator (the body built, signed and POSTed to a running emulator on the same clock, as
// `fecr send` does: a body fecr's own checks refuse is never sent, and counts as rejected).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from '../../src/core/document.js';
import { signCanonical } from '../../src/core/sign/xades.js';
import { buildComprobanteXml } from '../../src/core/xml/build.js';
import { ReceptionClient, resolveEndpoints, type ReceptionStatus, type SubmitRequest } from '../../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runCli, tempDir } from './cli.js';
import { crDay, crIso, FAST_RETRY } from './hacienda.js';
import { makeTestIssuer, type TestIssuer } from './issuer.js';

export { crDay, crIso };

export interface EmulatorVerdict {
  /** 'refused' when fecr's own checks refuse the body (it is never sent). */
  estado: 'aceptado' | 'rechazado' | 'refused' | string;
  status?: ReceptionStatus;
  findings?: { path: string; message: string }[];
}

export interface ValidateVerdict {
  code: number;
  valid: boolean;
  findings: { path: string; message: string }[];
  warnings: { path: string; message: string }[];
  stderr: string;
}

export interface VerdictBench {
  emu: RunningEmulator;
  issuer: TestIssuer;
  now: Date;
  validate(body: unknown, extra?: string[]): Promise<ValidateVerdict>;
  send(body: Record<string, unknown>, alter?: (xml: string) => string): Promise<EmulatorVerdict>;
  close(): Promise<void>;
}

/** An emulator on a fixed clock (today 06:00 in Costa Rica), a test issuer, and the two verdicts. */
export async function verdictBench(now = crDay(6)): Promise<VerdictBench> {
  const issuer = makeTestIssuer();
  const emu = await startEmulator({ processingDelayMs: 1, now: () => now.getTime() });
  const local = resolveEndpoints('local', { baseUrl: emu.url });
  const rc = new ReceptionClient({ endpoints: local, credentials: { username: issuer.issuer.usuarioHacienda, password: 'secreto' }, retry: FAST_RETRY });
  const dir = tempDir('fecr-verdicts-');
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify(issuer.issuer));
  let n = 0;
  const newId = () => randomBytes(8).toString('hex');
  return {
    emu,
    issuer,
    now,
    async validate(body, extra = []) {
      const file = join(dir, `body-${n++}.json`);
      writeFileSync(file, JSON.stringify(body));
      const r = await runCli(['validate', file, '--json', '--issuer', join(dir, 'issuer.json'), ...extra], { cwd: dir, env: { HOME: dir }, now: () => now });
      const j = r.stdout ? (JSON.parse(r.stdout) as { valid: boolean; findings: ValidateVerdict['findings']; warnings?: ValidateVerdict['warnings'] }) : { valid: false, findings: [], warnings: [] };
      return { code: r.code, valid: j.valid, findings: j.findings, warnings: j.warnings ?? [], stderr: r.stderr };
    },
    async send(body, alter) {
      const p = parseDocument(body, issuer.issuer, { securityCode: String(10_000_000 + n++) });
      if (!p.ok) return { estado: 'refused', findings: p.findings };
      const unsigned = buildComprobanteXml(p.doc, p.totals);
      const xml = signCanonical(alter ? alter(unsigned) : unsigned, issuer.creds, { signingTime: new Date(), newId });
      const req: SubmitRequest = {
        clave: p.doc.clave,
        fecha: p.doc.fechaEmision,
        emisor: { tipoIdentificacion: p.doc.emisor.identificacion.tipo, numeroIdentificacion: p.doc.emisor.identificacion.numero },
        comprobanteXml: xml,
      };
      const r = p.doc.receptor?.identificacion;
      if (r && r.numero.length <= 12) req.receptor = { tipoIdentificacion: r.tipo, numeroIdentificacion: r.numero };
      const sub = await rc.submit(req);
      if (sub.status !== 'received') throw new Error(`the emulator did not receive the document: ${JSON.stringify(sub)}`);
      await emu.state.whenIdle();
      const status = await rc.getStatus(p.doc.clave);
      return { estado: status.estado, status };
    },
    async close() {
      await rc.close();
      await emu.close();
    },
  };
}
