/**
 * `fecr batch --dry-run`: validates every document as the service would (schema, rules and totals with the core's
 * `parseDocument`, then the official XSD of its kind with a placeholder signature) and sends nothing. The issuer is
 * a stand-in built from each body (`placeholderIssuer`), so issuer-specific checks (is the emisor registered, its
 * branch) are not made; Hacienda's catalogue and date checks are (core/rules/document-checks.ts). XSD runs batched: up to `chunk` documents per xmllint run.
 */
import { echoQuoted } from '../../core/echo.js';
import { isUnnumbered } from './journal.js';
import type { BatchItem } from './reader.js';
import type { BatchResult, BatchSummary } from './runner.js';

export async function validateBatch(
  items: AsyncIterable<BatchItem>,
  o: { onResult: (r: BatchResult) => void; onProgress?: (s: BatchSummary) => void; isStopped: () => boolean; chunk?: number; now?: () => Date },
): Promise<BatchSummary> {
  const [{ parseDocument }, { buildComprobanteXml, KINDS }, { createXsdValidator, withPlaceholderSignature }, { placeholderIssuer }, { findingForRows }, { haciendaChecks }, { readCabysCodes }, { orderFindings }] =
    await Promise.all([
      import('../../core/document.js'),
      import('../../core/xml/build.js'),
      import('../../adapters/xsd/index.js'),
      import('../../core/placeholder-issuer.js'),
      import('./csv-findings.js'),
      import('../../core/rules/document-checks.js'),
      import('../../adapters/cabys-file.js'),
      import('../../core/input/projection.js'),
    ]);
  let cabys: import('../../adapters/cabys-file.js').CabysCodes | undefined;
  const summary: BatchSummary = { total: 0, sent: 0, invalid: 0, errors: 0, skipped: 0, interrupted: false };
  const validator = createXsdValidator();
  const chunkSize = o.chunk ?? 100;
  type Ok = { item: BatchItem; xml: string; schema: import('../../adapters/xsd/index.js').SchemaName };
  let pending: Ok[] = [];

  const emit = (r: BatchResult) => {
    if (r.state === 'valido') summary.sent++;
    else if (r.state === 'invalido') summary.invalid++;
    else summary.errors++;
    o.onResult(r);
    o.onProgress?.(summary);
  };
  const base = (item: BatchItem) => ({ row: item.row, ...(item.numeroReferencia !== undefined ? { numeroReferencia: item.numeroReferencia } : {}) });
  const rowsOf = (item: BatchItem, fs: { path: string; message: string }[]) => (item.csvRows ? fs.map((f) => findingForRows(f, item.csvRows!)) : fs);

  const flush = async () => {
    const batch = pending;
    pending = [];
    const bySchema = new Map<string, Ok[]>();
    for (const p of batch) bySchema.set(p.schema, [...(bySchema.get(p.schema) ?? []), p]);
    const verdicts = new Map<Ok, BatchResult>();
    for (const [schema, group] of bySchema) {
      try {
        const results = await validator.validate(
          group.map((g) => g.xml),
          schema as Ok['schema'],
        );
        group.forEach((g, i) => {
          const errs = results[i]?.errors ?? [];
          verdicts.set(g, errs.length ? { ...base(g.item), state: 'invalido', errors: errs.map((e) => ({ path: 'xml', message: echoQuoted(e.message) })) } : { ...base(g.item), state: 'valido' });
        });
      } catch (e) {
        for (const g of group) verdicts.set(g, { ...base(g.item), state: 'error', errors: [{ path: 'xml', message: `XSD validation could not run: ${(e as Error).message}` }] });
      }
    }
    for (const p of batch) emit(verdicts.get(p)!);
  };

  for await (const item of items) {
    if (o.isStopped()) {
      summary.interrupted = true;
      break;
    }
    summary.total++;
    if (item.errors) {
      emit({ ...base(item), state: 'invalido', errors: item.errors });
      continue;
    }
    try {
      // A body without numeroReferencia is judged as the local service judges it: numbered (its number is taken when sent).
      const body = isUnnumbered(item.body) ? { ...(item.body as Record<string, unknown>), numeroReferencia: 1 } : item.body;
      const parsed = parseDocument(body, placeholderIssuer(body));
      // What Hacienda rejects by its catalogues and clock (-408, -400, -53), as `fecr validate` reports it: with the
      // body's other findings, at the paths that parsed (every finding in one run).
      const codes = (cabys ??= readCabysCodes());
      const checked = parsed.doc ? haciendaChecks(parsed.doc, { now: o.now?.() ?? new Date(), hasCabys: (c) => codes.has(c), held: parsed.ok ? [] : parsed.held }).findings : [];
      if (!parsed.ok || checked.length) {
        emit({ ...base(item), state: 'invalido', errors: rowsOf(item, orderFindings([...parsed.findings, ...checked])) });
        continue;
      }
      const xml = withPlaceholderSignature(buildComprobanteXml(parsed.doc, parsed.totals));
      pending.push({ item, xml, schema: KINDS[parsed.doc.kind].schema });
    } catch (e) {
      emit({ ...base(item), state: 'error', errors: [{ path: '', message: `internal error: ${(e as Error).message}` }] });
    }
    if (pending.length >= chunkSize) await flush();
  }
  if (pending.length) await flush();
  return summary;
}
