import type { Ctx } from '../../cli/context.js';
import { SilentExit } from '../../cli/errors.js';
import { findingText, invalidHeadline } from '../../cli/findings.js';
import { readJson, writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { Finding } from '../../core/model.js';
import { placeholderIssuer } from '../../core/placeholder-issuer.js';
import { readIssuer } from './issuer-input.js';

export async function run(ctx: Ctx, file: string, opts: { issuer?: string; json?: boolean; xsd: boolean; strict?: boolean }): Promise<void> {
  const body = await readJson(ctx.io, file);
  const issuer = opts.issuer ? await readIssuer(ctx, opts.issuer) : placeholderIssuer(body);
  const { parseDocument } = await import('../../core/document.js');
  const parsed = parseDocument(body, issuer);
  const findings: Finding[] = [...parsed.findings];
  let warnings: Finding[] = [];
  // Hacienda's catalogue and clock checks, the emulator's own rules (core/rules): -408/-407 activity, -400 CABYS, -53.
  const checks = async () => {
    if (!parsed.ok) return;
    const [{ haciendaChecks }, { readCabysCodes }] = await Promise.all([import('../../core/rules/document-checks.js'), import('../../adapters/cabys-file.js')]);
    const codes = readCabysCodes();
    const r = haciendaChecks(parsed.doc, { now: ctx.now(), hasCabys: (c) => codes.has(c) });
    findings.push(...r.findings);
    warnings = r.warnings;
  };
  if (parsed.ok && opts.xsd) {
    const { buildComprobanteXml, KINDS } = await import('../../core/xml/build.js');
    const { XmlCharError } = await import('../../core/xml/canonical.js');
    const { createXsdValidator, withPlaceholderSignature } = await import('../../adapters/xsd/index.js');
    let unsigned: string | undefined;
    try {
      unsigned = buildComprobanteXml(parsed.doc, parsed.totals);
    } catch (e) {
      // The schema refuses characters XML cannot carry; should one get this far, it is a finding all the same.
      if (!(e instanceof XmlCharError)) throw e;
      findings.push({ path: 'xml', message: e.message });
    }
    if (unsigned !== undefined) {
      const xml = withPlaceholderSignature(unsigned);
      const xsd = createXsdValidator().validate(xml, KINDS[parsed.doc.kind].schema);
      await checks();
      const [result] = await xsd;
      const first = result && !result.valid ? result.errors[0] : undefined;
      if (first) {
        // Hacienda's -1: the first schema error only, in the words of its validator (Java's Xerces).
        const { xercesError } = await import('../../adapters/xsd/xerces/index.js');
        const x = xercesError(xml, KINDS[parsed.doc.kind].schema, first);
        findings.push({ path: 'xml', message: `-1 ${x.message}` });
      }
    } else await checks();
  } else await checks();
  const valid = findings.length === 0 && !(opts.strict && warnings.length > 0);
  if (opts.json) {
    printJson(ctx, {
      valid,
      kind: parsed.doc?.kind,
      clave: valid ? parsed.doc?.clave : undefined,
      totalComprobante: parsed.totals?.resumen.totalComprobante.toFixed(5),
      findings,
      warnings,
    });
  } else if (valid) {
    for (const w of warnings) writeLine(ctx.io.stderr, `warning: ${findingText(w)}`);
    const d = parsed.doc!;
    writeLine(ctx.io.stdout, `valid ${d.kind} ${safeText(d.numeroConsecutivo)} totalComprobante ${parsed.totals!.resumen.totalComprobante.toFixed(5)} ${d.moneda.codigoMoneda}`);
  } else {
    // The findings are the result (stdout, one `path: message` a line); the headline says what failed (stderr).
    writeLine(ctx.io.stderr, `error: ${invalidHeadline('document', findings.length || warnings.length)}${findings.length ? '' : ' (warnings, with --strict)'}`);
    for (const f of findings) writeLine(ctx.io.stdout, findingText(f));
    for (const w of warnings) writeLine(findings.length ? ctx.io.stderr : ctx.io.stdout, `${findings.length ? 'warning: ' : ''}${findingText(w)}`);
  }
  if (!valid) throw new SilentExit(1);
}
