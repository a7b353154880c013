/**
 * The suppliers' mailbox (issue 30): one pass over a mailbox's waiting mails. Each mail is read (message.ts: size
 * limits, XML attachments only), its comprobantes go through the import of `fecr recibidos import` (the sink: the
 * RecibidosApi of the profile, local or remote, so the same checks and the same one-row-per-clave store), and the
 * account's rules (rules.ts) answer those still unanswered through the aceptar use case. Only then is the mail moved
 * out of the inbox: to the imported folder when it held at least one valid comprobante, aside with its reasons when
 * it held none.
 *
 * Exactly once per clave, whatever happens to the process: a mail is moved only after its import and answer were
 * committed, so a process killed half way leaves it in the inbox and the next pass reads it again; the import then
 * answers "already imported" (the store is keyed by clave and sha256, service/recibidos/import.ts), the answer is not
 * given twice (an imported row already answered is not `pendiente` any more, and decide.ts refuses a second answer),
 * and moving a mail that was moved is harmless (maildir.ts, imap.ts). A comprobante that a rule would accept while
 * Hacienda has no record of it yet (decide.ts refuses that answer) keeps its mail in the inbox: the next pass tries
 * again.
 */
import type { ImportFile, ImportResult } from '../recibidos/import.js';
import { MAIL_MAX_BYTES, readMail, type ReadMail } from './message.js';
import type { MailRules } from './rules.js';

export interface MailRef {
  /** The source's name for the mail (a Maildir file name, an IMAP UID). */
  id: string;
}

export type MailRead = { bytes: Buffer } | { tooLarge: number } | { unreadable: string };

/** A mailbox: its waiting mails, and where a mail goes once dealt with. Moving a mail already moved is harmless. */
export interface MailSource {
  readonly label: string;
  pending(): Promise<MailRef[]>;
  read(ref: MailRef, maxBytes: number): Promise<MailRead>;
  /** Out of the inbox into the imported folder. */
  imported(ref: MailRef): Promise<void>;
  /** Out of the inbox into the set-aside folder, with the reasons (a header of the mail, or beside it). */
  setAside(ref: MailRef, raw: Buffer | null, reasons: string[]): Promise<void>;
  close(): Promise<void>;
}

export type AnswerOutcome = { ok: true } | { retry: string } | { failed: string };

/** What the watcher needs of the buyer's side: the import, and the aceptar answer (its failures already sorted). */
export interface MailSink {
  import(files: ImportFile[]): Promise<ImportResult[]>;
  accept(clave: string, condicionImpuesto?: string): Promise<AnswerOutcome>;
}

export interface MailDocument {
  archivo: string;
  clave: string | null;
  estado: string;
  creado: boolean;
  emisor: string | null;
  /**
   * What the rules did (the mail's fields are English, the import's are the API's Spanish ones): accepted now, held
   * for a person, answered before, deferred (Hacienda has no record of it yet: the mail stays), or the answer failed.
   */
  rule: 'accepted' | 'held' | 'answered before' | 'deferred' | 'failed' | null;
}

export interface MailOutcome {
  id: string;
  from: string | null;
  subject: string | null;
  /** imported: moved to the imported folder; set-aside: moved aside with `reasons`; retry: left in the inbox. */
  outcome: 'imported' | 'set-aside' | 'retry';
  documents: MailDocument[];
  reasons: string[];
  notes: string[];
}

export interface PassOptions {
  /** The size limit of one comprobante (core/received/limits.ts). */
  attachmentMaxBytes: number;
  mailMaxBytes?: number;
  /** Aborted: the pass ends after the mail in hand. */
  signal?: AbortSignal;
  onMail?: (m: MailOutcome) => void;
}

const firstFinding = (r: ImportResult) => r.hallazgos[0] ? `${r.hallazgos[0].path}: ${r.hallazgos[0].message}` : 'refused';

/** One pass over the waiting mails, oldest name first; an import that fails (the service is down) ends it, thrown. */
export async function mailboxPass(src: MailSource, sink: MailSink, rules: MailRules, opts: PassOptions): Promise<MailOutcome[]> {
  const out: MailOutcome[] = [];
  for (const ref of await src.pending()) {
    if (opts.signal?.aborted) break;
    const m = await processMail(src, sink, rules, ref, opts);
    out.push(m);
    opts.onMail?.(m);
  }
  return out;
}

async function processMail(src: MailSource, sink: MailSink, rules: MailRules, ref: MailRef, opts: PassOptions): Promise<MailOutcome> {
  const base = { id: ref.id, from: null, subject: null, documents: [], notes: [] };
  const aside = async (raw: Buffer | null, reasons: string[], mail?: ReadMail, documents: MailDocument[] = []): Promise<MailOutcome> => {
    await src.setAside(ref, raw, reasons);
    return { ...base, ...(mail ? { from: mail.from, subject: mail.subject, notes: mail.notes } : {}), outcome: 'set-aside', documents, reasons };
  };
  const limit = opts.mailMaxBytes ?? MAIL_MAX_BYTES;
  const got = await src.read(ref, limit);
  if ('tooLarge' in got) return aside(null, [`the mail is ${got.tooLarge} bytes, over the limit of ${limit} bytes: not read`]);
  if ('unreadable' in got) return aside(null, [`the mail cannot be read: ${got.unreadable}`]);
  let mail: ReadMail;
  try {
    mail = await readMail(got.bytes, opts.attachmentMaxBytes);
  } catch (e) {
    return aside(got.bytes, [`the mail cannot be parsed: ${e instanceof Error ? e.message : String(e)}`]);
  }
  if (mail.comprobantes.length === 0) {
    const why = mail.answers.length > 0 ? "only Hacienda's answer (MensajeHacienda) is attached, not the comprobante" : 'no comprobante attached (no XML attachment)';
    return aside(got.bytes, [why], mail);
  }
  const results = await sink.import(mail.comprobantes.map((a): ImportFile => ({ name: a.name, bytes: a.bytes, ...(a.size !== undefined ? { size: a.size } : {}) })));
  const documents: MailDocument[] = results.map((r) => ({ archivo: r.archivo, clave: r.clave, estado: r.estado, creado: r.creado, emisor: r.emisor, rule: null }));
  const valid = results.filter((r) => r.estado !== 'invalido');
  if (valid.length === 0) return aside(got.bytes, results.map((r) => `${r.archivo}: ${firstFinding(r)}`), mail, documents);

  const notes = [...mail.notes];
  for (const r of results) if (r.estado === 'invalido') notes.push(`${r.archivo} refused: ${firstFinding(r)}`);
  for (const a of mail.answers) {
    const doc = results.find((r) => r.clave === a.clave);
    if (!doc) notes.push(`${a.name}: Hacienda's answer about ${a.clave}, which this mail does not hold: ignored`);
    else if ((a.mensaje === 3) !== (doc.haciendaEstado === 'rechazado') && doc.haciendaEstado) {
      notes.push(`${a.name}: the attached MensajeHacienda says ${a.mensaje === 3 ? 'rechazado' : 'aceptado'}, Hacienda says ${doc.haciendaEstado}: Hacienda's word is kept`);
    }
  }
  let retry = false;
  for (const [i, r] of results.entries()) {
    const d = documents[i]!;
    if (r.estado === 'invalido' || !r.clave) continue;
    if (r.estado !== 'pendiente') {
      d.rule = 'answered before';
      continue;
    }
    const rule = rules.ruleFor(r.emisor);
    if (rule.action === 'hold') {
      d.rule = 'held';
      continue;
    }
    const answer = await sink.accept(r.clave, rule.condicionImpuesto);
    if ('ok' in answer) d.rule = 'accepted';
    else if ('retry' in answer) {
      d.rule = 'deferred';
      retry = true;
      notes.push(`${r.clave}: not accepted yet (${answer.retry}); the mail stays in the inbox and is read again`);
    } else {
      d.rule = 'failed';
      notes.push(`${r.clave}: the rule's answer failed: ${answer.failed}; answer it by hand (fecr recibidos aceptar)`);
    }
  }
  if (retry) return { ...base, from: mail.from, subject: mail.subject, outcome: 'retry', documents, reasons: [], notes };
  await src.imported(ref);
  return { ...base, from: mail.from, subject: mail.subject, outcome: 'imported', documents, reasons: [], notes };
}
