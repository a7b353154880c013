// End to end: a comprobante with a schema error, sent to the emulator through the real reception client, comes
// back rechazado with exactly one -1 line, in Hacienda's words (Java's Xerces, NOTES §6.3) and at Xerces' line and
// column; with a JDK on the machine, the line is also checked against Java's validator itself.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { crParts } from '../src/core/dates.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import type { Comprobante } from '../src/core/model.js';
import { parseDetalleMensaje, ReceptionClient, resolveEndpoints, type ReceptionStatus } from '../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { FAST_RETRY } from './helpers/hacienda.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { hasJava, javaFirstErrors } from './helpers/java-xsd.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const NS = 'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica';

let emu: RunningEmulator;
let rc: ReceptionClient;
let t: TestIssuer;
let n = 0;

beforeAll(async () => {
  t = makeTestIssuer();
  emu = await startEmulator({ processingDelayMs: 5 });
  rc = new ReceptionClient({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }), credentials: { username: t.issuer.usuarioHacienda, password: 'secreto' }, retry: FAST_RETRY });
});
afterAll(async () => {
  await rc.close();
  await emu.close();
});

/** The fixture dated now, altered, then signed with the issuer's key. */
function build(name: string, alter: (x: string) => string): { doc: Comprobante; xml: string } {
  const b = JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<string, any>;
  const p0 = crParts(new Date(Date.now() - 60_000));
  const two = (v: number) => String(v).padStart(2, '0');
  b.fechaEmision = `${p0.year}-${two(p0.month)}-${two(p0.day)}T${two(p0.hour)}:${two(p0.minute)}:${two(p0.second)}-06:00`;
  b.numeroReferencia = 7000 + n++;
  const p = parseDocument(b, t.issuer, { securityCode: String(20_000_000 + n) });
  if (!p.ok) throw new Error(JSON.stringify(p.findings));
  const unsigned = buildComprobanteXml(p.doc, p.totals);
  const altered = alter(unsigned);
  expect(altered, 'the alteration changed nothing').not.toBe(unsigned);
  return { doc: p.doc, xml: signCanonical(altered, t.creds, { signingTime: new Date(), newId: () => randomBytes(8).toString('hex') }) };
}

async function send(d: { doc: Comprobante; xml: string }): Promise<ReceptionStatus> {
  const { doc } = d;
  const receptor = doc.receptor?.identificacion;
  expect(
    (
      await rc.submit({
        clave: doc.clave,
        fecha: doc.fechaEmision,
        emisor: { tipoIdentificacion: doc.emisor.identificacion.tipo, numeroIdentificacion: doc.emisor.identificacion.numero },
        ...(receptor ? { receptor: { tipoIdentificacion: receptor.tipo, numeroIdentificacion: receptor.numero } } : {}),
        comprobanteXml: d.xml,
      })
    ).status,
  ).toBe('received');
  await emu.state.whenIdle();
  return rc.getStatus(doc.clave);
}

/** 1-based column just after the first `tag` in a one-line document: where Xerces reports a start-tag error. */
const after = (xml: string, tag: string) => xml.indexOf(tag) + tag.length + 1;

describe('the -1 answer in Xerces\' words', () => {
  it('a v4.3 CodigoActividad where v4.4 wants ProveedorSistemas: Hacienda\'s own message (NOTES §6.3), at the end of its start tag', async () => {
    const d = build('01-fe-servicios-13', (x) => x.replace(/<ProveedorSistemas>.*?<\/CodigoActividadEmisor>/, '<CodigoActividad>620100</CodigoActividad>'));
    const st = await send(d);
    expect(st.estado).toBe('rechazado');
    const mensaje = `cvc-complex-type.2.4.a: Invalid content was found starting with element '{"${NS}":CodigoActividad}'. One of '{"${NS}":ProveedorSistemas}' is expected.`;
    expect(st.mensaje!.errores).toEqual([{ codigo: -1, mensaje, fila: 1, columna: after(d.xml, '<CodigoActividad>'), aviso: false }]);
    // As Hacienda writes it: the quotes of the message escaped; fecr's reader reads it back.
    expect(st.mensaje!.detalleMensaje).toContain(`-1, ""cvc-complex-type.2.4.a: Invalid content was found starting with element '{\\"${NS}\\":CodigoActividad}'.`);
    expect(parseDetalleMensaje(st.mensaje!.detalleMensaje!)).toEqual(st.mensaje!.errores);
    if (hasJava()) {
      const [j] = javaFirstErrors([{ schema: 'FE', xml: d.xml }]);
      expect({ mensaje: j!.message, fila: j!.line, columna: j!.column }).toEqual({ mensaje, fila: 1, columna: after(d.xml, '<CodigoActividad>') });
    }
  });

  it('an element of simple type with a child: cvc-type.3.1.2 (NOTES §6.3), at the end of its end tag', async () => {
    const d = build('01-fe-servicios-13', (x) => x.replace(/<ProveedorSistemas>([^<]*)<\/ProveedorSistemas>/, '<ProveedorSistemas><CodigoActividad>$1</CodigoActividad></ProveedorSistemas>'));
    const st = await send(d);
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores).toEqual([
      {
        codigo: -1,
        mensaje: "cvc-type.3.1.2: Element 'ProveedorSistemas' is a simple type, so it must have no element information item [children].",
        fila: 1,
        columna: after(d.xml, '</ProveedorSistemas>'),
        aviso: false,
      },
    ]);
  });

  it('a value not in the enumeration, in a multi-line document: Java\'s line and column', async () => {
    const d = build('02-fe-bienes-servicios-descuentos', (x) => x.replace(/></g, '>\n  <').replace('<CondicionVenta>01<', '<CondicionVenta>09<'));
    const st = await send(d);
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores).toHaveLength(1);
    const e = st.mensaje!.errores[0]!;
    expect(e.codigo).toBe(-1);
    expect(e.mensaje).toMatch(/^cvc-enumeration-valid: Value '09' is not facet-valid with respect to enumeration '\[01, 02, .*\]'\. It must be a value from the enumeration\.$/);
    const lines = d.xml.split('\n');
    const row = lines.findIndex((l) => l.includes('<CondicionVenta>09</CondicionVenta>'));
    expect({ fila: e.fila, columna: e.columna }).toEqual({ fila: row + 1, columna: lines[row]!.indexOf('</CondicionVenta>') + '</CondicionVenta>'.length + 1 });
    if (hasJava()) {
      const [j] = javaFirstErrors([{ schema: 'FE', xml: d.xml }]);
      expect({ mensaje: e.mensaje, fila: e.fila, columna: e.columna }).toEqual({ mensaje: j!.message, fila: j!.line, columna: j!.column });
    }
  });
});
