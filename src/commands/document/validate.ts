import type { Ctx } from '../../cli/context.js';
import { SilentExit } from '../../cli/errors.js';
import { readJson, writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import type { Finding } from '../../core/model.js';
import { placeholderIssuer, readIssuer } from './issuer-input.js';

export async function run(ctx: Ctx, file: string, opts: { issuer?: string; json?: boolean; xsd: boolean }): Promise<void> {
  const body = await readJson(ctx.io, file);
  const issuer = opts.issuer ? await readIssuer(ctx, opts.issuer) : placeholderIssuer(body);
  const { parseDocument } = await import('../../core/document.js');
  const parsed = parseDocument(body, issuer);
  const findings: Finding[] = [...parsed.findings];
  if (parsed.ok && opts.xsd) {
    const { buildComprobanteXml, KINDS } = await import('../../core/xml/build.js');
    const { createXsdValidator, withPlaceholderSignature } = await import('../../core/xsd/index.js');
    const xml = withPlaceholderSignature(buildComprobanteXml(parsed.doc, parsed.totals));
    const [result] = await createXsdValidator().validate(xml, KINDS[parsed.doc.kind].schema);
    for (const e of result?.errors ?? []) findings.push({ path: 'xml', message: e.message });
  }
  const valid = findings.length === 0;
  if (opts.json) {
    printJson(ctx, {
      valid,
      kind: parsed.doc?.kind,
      clave: valid ? parsed.doc?.clave : undefined,
      totalComprobante: parsed.totals?.resumen.totalComprobante.toFixed(5),
      findings,
    });
  } else if (valid) {
    const d = parsed.doc!;
    writeLine(ctx.io.stdout, `valid ${d.kind} ${d.numeroConsecutivo} totalComprobante ${parsed.totals!.resumen.totalComprobante.toFixed(5)} ${d.moneda.codigoMoneda}`);
  } else {
    for (const f of findings) writeLine(ctx.io.stdout, `${f.path}: ${f.message}`);
    writeLine(ctx.io.stderr, `invalid: ${findings.length} finding${findings.length === 1 ? '' : 's'}`);
  }
  if (!valid) throw new SilentExit(1);
}
