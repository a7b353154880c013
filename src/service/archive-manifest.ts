/**
 * manifest.jsonl in `fecr archive verify` (issues 29, 37.3, 37.4): split into lines in linear time (each byte looked at
 * once; a line longer than MANIFEST_LINE_MAX_BYTES stops the check), and each line checked against the file it names:
 * its sha256 and size, and every field against the signed XML (the file's own facts, or those of the comprobante and
 * Hacienda's answer in its folder), so a manifest cannot say aceptado for a rejection, another total or another kind.
 */
import { Decimal } from 'decimal.js';
import type { SignedFacts } from '../core/sign/expected-signer.js';
import type { ScratchFileIndex } from '../store/scratch-index.js';
import type { ManifestLine } from './archive.js';
import { clip, MANIFEST_LINE_MAX_BYTES } from './archive-limits.js';

/** Stops the whole check (the rest of the archive is not read): a file and why. */
export class StopArchive extends Error {
  override name = 'StopArchive';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

/** Lines of a stream of bytes: each chunk scanned once from where the last scan stopped. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private partLength = 0;
  lines = 0;

  constructor(
    private readonly onLine: (text: string, n: number) => void,
    private readonly file: string,
    private readonly max = MANIFEST_LINE_MAX_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a, from); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      this.take(chunk.subarray(from, nl));
      const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
      this.parts = [];
      this.partLength = 0;
      this.lines++;
      this.onLine(line.toString('utf8'), this.lines);
      from = nl + 1;
    }
    if (from < chunk.length) this.take(chunk.subarray(from));
  }

  end(): void {
    if (this.partLength > 0) {
      this.lines++;
      this.onLine(Buffer.concat(this.parts).toString('utf8'), this.lines);
    }
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.partLength += piece.length;
    if (this.partLength > this.max) throw new StopArchive(this.file, `line ${this.lines + 1} is longer than ${this.max} bytes (fecr writes about 400): not read further`);
    this.parts.push(Buffer.from(piece)); // a copy: the chunk is not held past this line
  }
}

/** Where an archive of fecr puts each role (service/archive.ts). */
const FILE_OF_ROLE: Record<string, string> = {
  comprobante: 'comprobante.xml',
  respuesta_hacienda: 'respuesta-hacienda.xml',
  pdf: 'comprobante.pdf',
  mensaje_receptor: 'mensaje-receptor.xml',
  mensaje_receptor_respuesta_hacienda: 'mensaje-receptor-respuesta-hacienda.xml',
};
const ENVS = new Set(['local', 'sandbox', 'production']);
const VERDICTS = new Set(['aceptado', 'parcial', 'rechazado']);

/** The facts noted of an XML file (JSON in the index). */
export type NotedFacts = SignedFacts & { testRoot?: boolean; sandboxSeal?: boolean };

function factsAt(index: ScratchFileIndex, name: string): NotedFacts | undefined {
  const f = index.factsOf(name);
  return f ? (JSON.parse(f) as NotedFacts) : undefined;
}

function sameAmount(a: unknown, b: string | null): boolean {
  if (a === null || a === undefined) return b === null;
  if (typeof a !== 'string' || b === null) return false;
  try {
    return new Decimal(a).eq(new Decimal(b));
  } catch {
    return false;
  }
}

/** The estado each verdict file's Mensaje means (ANEXOS: 1 aceptado, 2 aceptado parcialmente, 3 rechazado). */
function estadosOf(verdict: Extract<NotedFacts, { mensaje: 1 | 2 | 3 }>): readonly string[] {
  if (verdict.type === 'MensajeReceptor') return [['aceptado'], ['parcial'], ['rechazado']][verdict.mensaje - 1]!;
  // Hacienda answers 1 or 3; ind-estado `error` also comes with a rejection's answer (NOTES §4, the status query: ind-estado RECIBIDO, PROCESANDO, ACEPTADO, RECHAZADO, ERROR).
  return verdict.mensaje === 1 ? ['aceptado'] : verdict.mensaje === 3 ? ['rechazado', 'error'] : ['parcial'];
}

export interface LineVerdict {
  problems: Array<{ file: string; message: string }>;
  env?: string;
}

/** One manifest line against the index (the file marked listed). */
export function checkManifestLine(index: ScratchFileIndex, text: string, n: number, manifestName: string): LineVerdict {
  const out: LineVerdict = { problems: [] };
  if (text.trim() === '') return out;
  let line: ManifestLine;
  try {
    line = JSON.parse(text) as ManifestLine;
  } catch {
    out.problems.push({ file: manifestName, message: `line ${n} is not JSON` });
    return out;
  }
  if (typeof line !== 'object' || line === null || typeof line.file !== 'string') {
    out.problems.push({ file: manifestName, message: `line ${n} names no file` });
    return out;
  }
  const file = line.file;
  const bad = (message: string) => out.problems.push({ file, message });
  if (line.env !== undefined) {
    if (typeof line.env !== 'string' || !ENVS.has(line.env)) bad(`the manifest's env ${clip(line.env)} is not local, sandbox or production`);
    else out.env = line.env;
  }
  const nameProblem = entryNameProblem(file);
  if (nameProblem) {
    bad(`manifest line ${n}: ${nameProblem}`);
    return out;
  }
  const got = index.takeListed(file);
  if (!got) {
    bad('listed in the manifest, missing from the archive');
    return out;
  }
  if (got.sha256 !== line.sha256 || got.size !== line.size) bad(`sha256 ${got.sha256} (${got.size} bytes) differs from the manifest's ${clip(line.sha256)} (${clip(line.size)} bytes)`);
  // The place: <side>/<clave>/<the role's file name>.
  const parts = file.split('/');
  if (parts.length !== 3 || parts[0] !== line.side || parts[1] !== line.clave || FILE_OF_ROLE[line.role] !== parts[2]) {
    bad(`the manifest says side ${clip(line.side)}, clave ${clip(line.clave)}, role ${clip(line.role)}: not the file's place (${FILE_OF_ROLE[line.role] ? `${clip(line.side)}/${clip(line.clave)}/${FILE_OF_ROLE[line.role]}` : 'an unknown role'})`);
    return out;
  }
  const dir = `${parts[0]}/${parts[1]}/`;
  const own = factsAt(index, file);
  if (own && own.clave !== line.clave) bad(`the manifest's clave ${clip(line.clave)} is not the document's ${own.clave}`);
  const expectType = line.role === 'comprobante' ? 'comprobante' : line.role === 'mensaje_receptor' ? 'MensajeReceptor' : line.role === 'pdf' ? undefined : 'MensajeHacienda';
  if (expectType && own && own.type !== expectType) bad(`the manifest's role ${line.role} is not what the file is (a ${own.type})`);
  // The comprobante's figures: on every line of its folder.
  const doc = factsAt(index, `${dir}comprobante.xml`);
  if (doc?.type === 'comprobante') {
    const diffs: string[] = [];
    const isMr = line.role === 'mensaje_receptor' || line.role === 'mensaje_receptor_respuesta_hacienda';
    if (!isMr && line.kind !== doc.kind) diffs.push(`kind ${clip(line.kind)} (the comprobante is ${doc.kind})`);
    if (line.fechaEmision !== doc.fechaEmision) diffs.push(`fechaEmision ${clip(line.fechaEmision)} (the comprobante's is ${doc.fechaEmision})`);
    if (!sameAmount(line.totalComprobante, doc.totalComprobante)) diffs.push(`totalComprobante ${clip(line.totalComprobante)} (the comprobante's is ${doc.totalComprobante})`);
    if (line.totalImpuesto !== undefined && !sameAmount(line.totalImpuesto, doc.totalImpuesto ?? '0') && !(line.totalImpuesto === null && doc.totalImpuesto === null)) {
      diffs.push(`totalImpuesto ${clip(line.totalImpuesto)} (the comprobante's is ${doc.totalImpuesto ?? 'none'})`);
    }
    if (line.moneda !== null && line.moneda !== doc.moneda) diffs.push(`moneda ${clip(line.moneda)} (the comprobante's is ${doc.moneda})`);
    if (diffs.length) bad(`the manifest differs from the signed comprobante: ${diffs.join('; ')}`);
  }
  // The estado: what the verdict in the folder says (Hacienda's answer; for a purchase, our MensajeReceptor).
  const verdictFile =
    line.side === 'ventas'
      ? `${dir}respuesta-hacienda.xml`
      : line.role === 'mensaje_receptor' || line.role === 'mensaje_receptor_respuesta_hacienda'
        ? `${dir}mensaje-receptor-respuesta-hacienda.xml`
        : `${dir}mensaje-receptor.xml`;
  const verdict = factsAt(index, verdictFile);
  if (verdict && (verdict.type === 'MensajeHacienda' || verdict.type === 'MensajeReceptor')) {
    const allowed = estadosOf(verdict);
    if (!allowed.includes(String(line.estado))) bad(`the manifest's estado ${clip(line.estado)} is not what ${verdictFile} says (Mensaje ${verdict.mensaje}: ${allowed.join(' or ')})`);
    if (line.role === 'mensaje_receptor' && verdict.type === 'MensajeHacienda') {
      const mr = factsAt(index, `${dir}mensaje-receptor.xml`);
      if (mr?.type === 'MensajeReceptor' && line.kind !== `MR0${mr.mensaje + 4}`) bad(`the manifest's kind ${clip(line.kind)} is not the MensajeReceptor's (Mensaje ${mr.mensaje}: MR0${mr.mensaje + 4})`);
    }
  } else if (VERDICTS.has(String(line.estado))) {
    bad(`the manifest says ${clip(line.estado)}, but the archive holds no signed answer (${verdictFile}) that says so`);
  }
  // Hacienda's answer signed under fecr's test root (the local emulator) is Hacienda's only in an archive of env local.
  if (own?.testRoot && line.env !== 'local') {
    bad(`signed by fecr's local emulator (trust anchor: fecr's test root), in an archive whose manifest says env ${clip(line.env ?? '(none)')}: not Hacienda's answer`);
  }
  // The sandbox's seal, not chained (its CAs are not shipped: a warning, archive-verify.ts) is an answer only in an
  // archive of env sandbox.
  if (own?.sandboxSeal && line.env !== 'sandbox') {
    bad(`signed by Hacienda's sandbox seal (PRUEBAS), in an archive whose manifest says env ${clip(line.env ?? '(none)')}: not a verdict of that environment`);
  }
  return out;
}

/** Why an entry's name may not be used: absolute, climbing out (`..`), a Windows drive or backslash, a NUL. */
export function entryNameProblem(name: string): string | undefined {
  if (name === '') return 'an empty name';
  if (name.includes('\0')) return `the name ${clip(name)} holds a NUL`;
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return `the name ${clip(name)} is absolute`;
  if (name.includes('\\')) return `the name ${clip(name)} holds a backslash`;
  if (name.split('/').some((s) => s === '..')) return `the name ${clip(name)} climbs out of the archive (..)`;
  return undefined;
}
