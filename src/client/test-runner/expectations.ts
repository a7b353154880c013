/**
 * What `fecr test` expects of a document, and the judgement of a verdict against it (docs/ci.md, "Expectations").
 *
 * An expectation comes from `NAME.expect.json` beside the body file `NAME.json|.jsonl|.csv` (for every document of
 * that file), or from the `expect` member of a JSONL line or of a JSON array's element (for that document; it wins
 * over the file's). None: the document must be `aceptado`. Its members, all optional:
 *
 *   estado    aceptado (default) | rechazado | error: Hacienda's verdict; invalido: fecr's own checks refused the
 *             body before anything was sent (schema, rules, figures), so no clave exists.
 *   codigos   Hacienda's codes ("-52", or -52) that must be among the verdict's rejection items (DocumentStatus
 *             errores that are not warnings).
 *   avisos    codes that must be among its warnings (an accepted document's items; a rejection's -37, -407, …).
 *   findings  with estado invalido: field paths (`detalleServicio[0].montoTotalLinea`, a CSV's `row 7.cantidad`) that
 *             must be among fecr's findings.
 *   nombre    a name for the case in the report (default: the file, and the line or element when it holds several).
 *
 * The lists are "at least": a code or finding not listed does not fail the document (an emulator or a sandbox may add
 * warnings over time); the estado must be the one expected.
 */
import { z } from 'zod';
import type { Finding } from '../../core/model.js';
import type { ErrorHacienda } from '../../core/xml/detalle-mensaje.js';

export const EXPECTED_STATES = ['aceptado', 'rechazado', 'error', 'invalido'] as const;
export type ExpectedState = (typeof EXPECTED_STATES)[number];

/** Hacienda's code as it writes it: `-52` (a string or a number; `52` is read as `-52`, as Hacienda's codes are negative). */
const Codigo = z
  .union([z.string().trim().regex(/^-?\d{1,9}$/, 'must be a code like "-52"'), z.number().int().min(-999_999_999).max(999_999_999)])
  .transform((c) => -Math.abs(Number(c)));

export const ExpectationSchema = z.strictObject({
  estado: z.enum(EXPECTED_STATES, { error: `must be one of ${EXPECTED_STATES.join(', ')}` }).optional(),
  codigos: z.array(Codigo).max(100).optional(),
  avisos: z.array(Codigo).max(100).optional(),
  findings: z.array(z.string().trim().min(1, 'must not be empty').max(500)).max(100).optional(),
  nombre: z.string().trim().min(1, 'must not be empty').max(200).optional(),
});

export interface Expectation {
  estado: ExpectedState;
  codigos: number[];
  avisos: number[];
  findings: string[];
  nombre?: string;
}

export const DEFAULT_EXPECTATION: Expectation = { estado: 'aceptado', codigos: [], avisos: [], findings: [] };

/** An expectation as read, or its findings (paths inside the expectation: `estado`, `codigos[1]`). */
export function parseExpectation(value: unknown): { expectation: Expectation } | { errors: Finding[] } {
  const r = ExpectationSchema.safeParse(value);
  if (!r.success) {
    const errors = r.error.issues.map((i) => ({ path: i.path.map((p, n) => (typeof p === 'number' ? `[${p}]` : n === 0 ? String(p) : `.${String(p)}`)).join(''), message: i.message }));
    return { errors };
  }
  const e = r.data;
  if (e.findings?.length && e.estado !== 'invalido') return { errors: [{ path: 'findings', message: 'is for estado "invalido" (fecr refused the body before sending it)' }] };
  if ((e.codigos?.length || e.avisos?.length) && e.estado === 'invalido') {
    return { errors: [{ path: e.codigos?.length ? 'codigos' : 'avisos', message: 'are Hacienda\'s codes: estado "invalido" means nothing was sent (use findings)' }] };
  }
  return {
    expectation: {
      estado: e.estado ?? 'aceptado',
      codigos: e.codigos ?? [],
      avisos: e.avisos ?? [],
      findings: e.findings ?? [],
      ...(e.nombre ? { nombre: e.nombre } : {}),
    },
  };
}

/**
 * What happened to a document: Hacienda's verdict (`clave`, `errores`), fecr's refusal (`invalido`, `findings`), or
 * none (`pendiente` at the timeout, or a failure to send: `failure`).
 */
export interface Outcome {
  estado: string;
  clave?: string;
  errores: ErrorHacienda[];
  findings: Finding[];
  /** The document could not be sent or its verdict not read (fecr's or the network's failure, not Hacienda's verdict). */
  failure?: string;
}

/** The codes of an outcome, by kind: Hacienda's rejection items and its warnings. */
export function codesOf(o: Pick<Outcome, 'errores'>): { codigos: number[]; avisos: number[] } {
  const codigos: number[] = [];
  const avisos: number[] = [];
  for (const e of o.errores) if (e.codigo !== null) (e.aviso ? avisos : codigos).push(e.codigo);
  return { codigos, avisos };
}

/** Why the outcome does not meet the expectation, one reason a line (none: it holds). */
export function judge(expect: Expectation, o: Outcome): string[] {
  if (o.failure) return [o.failure];
  const problems: string[] = [];
  if (o.estado !== expect.estado) {
    // What fecr found, when it refused the body: its first finding that names a field (else its headline).
    const f = o.estado === 'invalido' ? (o.findings.find((x) => x.path !== '') ?? o.findings[0]) : undefined;
    problems.push(`expected ${describeExpectation(expect)}, got ${describeOutcome(o)}${f ? ` (${f.path ? `${f.path}: ` : ''}${f.message})` : ''}`);
    return problems;
  }
  const { codigos, avisos } = codesOf(o);
  const missing = expect.codigos.filter((c) => !codigos.includes(c));
  if (missing.length) problems.push(`expected code${missing.length > 1 ? 's' : ''} ${missing.join(' ')} among the rejection's (${codigos.join(' ') || 'none'})`);
  const missingAvisos = expect.avisos.filter((c) => !avisos.includes(c));
  if (missingAvisos.length) problems.push(`expected aviso${missingAvisos.length > 1 ? 's' : ''} ${missingAvisos.join(' ')} among the warnings (${avisos.join(' ') || 'none'})`);
  const paths = o.findings.map((f) => f.path);
  const missingFindings = expect.findings.filter((p) => !paths.includes(p));
  if (missingFindings.length) problems.push(`expected a finding at ${missingFindings.join(', ')} (found: ${paths.filter((p) => p !== '').join(', ') || 'none'})`);
  return problems;
}

/** `rechazado -54 aviso -37`: what is expected, in the words of the result lines. */
export function describeExpectation(e: Expectation): string {
  return [e.estado, ...e.codigos.map(String), ...e.avisos.map((a) => `aviso ${a}`), ...e.findings].join(' ');
}

/** `rechazado -53 aviso -407`, `invalido detalleServicio[0].montoTotalLinea`: what happened, in one line. */
export function describeOutcome(o: Outcome): string {
  if (o.failure && o.estado === 'pendiente') return 'pendiente';
  const { codigos, avisos } = codesOf(o);
  const paths = o.findings.map((f) => f.path).filter((p) => p !== '');
  return [o.estado, ...codigos.map(String), ...avisos.map((a) => `aviso ${a}`), ...(o.estado === 'invalido' ? paths.slice(0, 5) : []), ...(paths.length > 5 && o.estado === 'invalido' ? ['…'] : [])].join(' ');
}
