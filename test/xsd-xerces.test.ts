// A schema error in Hacienda's words: Hacienda validates with Java's validator (Xerces) and answers only its first
// error, with its message, line and column (NOTES §6.3). For each common kind of error, a real fecr document is
// broken in one way, Java's validator (test/java/XsdValidate.java) judges it, and the translation of xmllint's
// first error (both backends) must give Java's message word for word, and Java's line and column.
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { hasXmllintBinary, withPlaceholderSignature, XmllintBinaryValidator, XmllintWasmValidator, type XsdValidator } from '../src/adapters/xsd/index.js';
import { schemaModel } from '../src/adapters/xsd/xerces/model.js';
import { walkDocument } from '../src/adapters/xsd/xerces/walk.js';
import { xercesError, xercesFirstError } from '../src/adapters/xsd/xerces/index.js';
import type { SchemaName } from '../src/core/xml/kinds.js';
import { buildMensajeReceptorXml } from '../src/core/xml/mensaje.js';
import { formatDetalleMensaje, parseDetalleMensaje } from '../src/hacienda/client/mensaje.js';
import { issueSigned } from './helpers/issue.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { hasJava, javaFirstErrors, type JavaResult } from './helpers/java-xsd.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const FIXTURE_NAMES = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && !f.endsWith('.expected.json')).map((f) => f.slice(0, -5));
const NS_FE = 'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica';

const t = makeTestIssuer();
const signed = new Map<string, { xml: string; schema: SchemaName }>();
function fixture(name: string): { xml: string; schema: SchemaName } {
  let s = signed.get(name);
  if (!s) {
    const r = issueSigned(JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')), t);
    s = { xml: r.xml, schema: r.doc.kind };
    signed.set(name, s);
  }
  return s;
}

const MR = withPlaceholderSignature(
  buildMensajeReceptorXml({
    clave: '50602032600310112345600100001010000000101197365794',
    numeroCedulaEmisor: '3101123456',
    fechaEmisionDoc: '2026-03-02T09:15:00-06:00',
    mensaje: 1,
    totalFactura: '1000',
    numeroCedulaReceptor: '3101987654',
    numeroConsecutivoReceptor: '00100001050000000001',
  } as Parameters<typeof buildMensajeReceptorXml>[0]),
);

/** Replaces once; the change must happen. */
function sub(x: string, from: string | RegExp, to: string): string {
  const y = x.replace(from, to);
  if (y === x) throw new Error(`no change: ${String(from)}`);
  return y;
}
const pretty = (x: string, nl: string) => x.replace(/></g, `>${nl}  <`);

interface Case {
  name: string;
  /** The key Java's message starts with (what the case is meant to produce). */
  key: string;
  schema: SchemaName;
  xml: string;
}

const FE = '01-fe-servicios-13';
const DESC = '02-fe-bienes-servicios-descuentos';
function fe(name: string, key: string, f: (x: string) => string, base = FE): Case {
  const b = fixture(base);
  return { name, key, schema: b.schema, xml: f(b.xml) };
}

const CASES: Case[] = [
  // NOTES §6.3, Hacienda's own first example: a v4.3 CodigoActividad where v4.4 wants ProveedorSistemas.
  fe('unexpected element (v4.3 CodigoActividad)', 'cvc-complex-type.2.4.a', (x) => sub(x, /<ProveedorSistemas>.*?<\/CodigoActividadEmisor>/, '<CodigoActividad>620100</CodigoActividad>')),
  fe('wrong element order', 'cvc-complex-type.2.4.a', (x) => sub(x, /(<ProveedorSistemas>.*?<\/ProveedorSistemas>)(<CodigoActividadEmisor>.*?<\/CodigoActividadEmisor>)/, '$2$1')),
  fe('missing required element in the middle', 'cvc-complex-type.2.4.a', (x) => sub(x, /<NumeroConsecutivo>.*?<\/NumeroConsecutivo>/, '')),
  fe('missing last required child', 'cvc-complex-type.2.4.b', (x) => sub(x, /<Numero>3101123456<\/Numero>/, '')),
  fe('missing ds:Signature (content not complete)', 'cvc-complex-type.2.4.b', (x) => sub(x, /<ds:Signature[\s\S]*<\/ds:Signature>/, '')),
  fe('value not in the enumeration', 'cvc-enumeration-valid', (x) => sub(x, '<CondicionVenta>01<', '<CondicionVenta>09<')),
  fe('pattern', 'cvc-pattern-valid', (x) => sub(x, /<Clave>5/, '<Clave>-')),
  fe('too long (maxLength, anonymous type)', 'cvc-maxLength-valid', (x) => sub(x, '<Nombre>SOFTWARE TICO SOCIEDAD ANONIMA<', `<Nombre>${'A'.repeat(120)}<`)),
  fe('too short (minLength)', 'cvc-minLength-valid', (x) => sub(x, '<CodigoActividadEmisor>6201.0<', '<CodigoActividadEmisor>62010<')),
  fe('length', 'cvc-length-valid', (x) =>
    sub(x, /(<Detalle>[^<]*<\/Detalle>)/, '$1<DetalleSurtido><LineaDetalleSurtido><CodigoCABYSSurtido>7331200000000</CodigoCABYSSurtido><CodigoComercialSurtido><TipoSurtido>1</TipoSurtido></CodigoComercialSurtido></LineaDetalleSurtido></DetalleSurtido>'),
  ),
  fe('not a number', 'cvc-datatype-valid.1.2.1', (x) => sub(x, '<Cantidad>3<', '<Cantidad>tres<')),
  fe('not a dateTime', 'cvc-datatype-valid.1.2.1', (x) => sub(x, /<FechaEmision>[^<]*</, '<FechaEmision>2026-02-30T09:15:00-06:00<')),
  fe('empty number element', 'cvc-datatype-valid.1.2.1', (x) => sub(x, '<Cantidad>3</Cantidad>', '<Cantidad></Cantidad>')),
  fe('self-closed number element', 'cvc-datatype-valid.1.2.1', (x) => sub(x, '<Cantidad>3</Cantidad>', '<Cantidad/>')),
  fe('empty required string', 'cvc-minLength-valid', (x) => sub(x, /<Detalle>[^<]*<\/Detalle>/, '<Detalle></Detalle>')),
  fe('empty enumerated string', 'cvc-enumeration-valid', (x) => sub(x, '<UnidadMedida>Os</UnidadMedida>', '<UnidadMedida/>')),
  // NOTES §6.3, Hacienda's second example.
  fe('child inside a simple element', 'cvc-type.3.1.2', (x) => sub(x, /<ProveedorSistemas>([^<]*)<\/ProveedorSistemas>/, '<ProveedorSistemas><CodigoActividad>$1</CodigoActividad></ProveedorSistemas>')),
  fe('wrong root namespace', 'cvc-elt.1.a', (x) => sub(x, 'v4.4/facturaElectronica"', 'v4.3/facturaElectronica"')),
  fe('too many fraction digits', 'cvc-fractionDigits-valid', (x) => sub(x, '<Cantidad>3<', '<Cantidad>3.1234<')),
  fe('too many digits', 'cvc-totalDigits-valid', (x) => sub(x, '<Cantidad>3<', '<Cantidad>12345678901234567<')),
  fe('below minInclusive', 'cvc-minInclusive-valid', (x) => sub(x, '<NumeroLinea>1<', '<NumeroLinea>0<')),
  fe('above maxInclusive', 'cvc-maxInclusive-valid', (x) => sub(x, /<PrecioUnitario>[^<]*</, '<PrecioUnitario>99999999999999<')),
  fe('negative amount (minInclusive 0.0)', 'cvc-minInclusive-valid', (x) => sub(x, /<PrecioUnitario>[^<]*</, '<PrecioUnitario>-5<')),
  fe('over maxOccurs', 'cvc-complex-type.2.4.e', (x) => sub(x, /<Descuento>.*?<\/Descuento>/, (/<Descuento>.*?<\/Descuento>/.exec(x)?.[0] ?? '').repeat(6)), DESC),
  fe('attribute not allowed', 'cvc-complex-type.3.2.2', (x) => sub(x, '<Emisor>', '<Emisor tipo="1">')),
  fe('attribute on a simple element', 'cvc-type.3.1.1', (x) => sub(x, '<Clave>', '<Clave id="1">')),
  fe('text in element-only content', 'cvc-complex-type.2.3', (x) => sub(x, '<Emisor>', '<Emisor>hola')),
  fe('multi-line (LF): unexpected element', 'cvc-complex-type.2.4.a', (x) => pretty(x, '\n').replace(/<NumeroConsecutivo>.*?<\/NumeroConsecutivo>/, '')),
  fe('multi-line (CR LF): facet at the end tag', 'cvc-enumeration-valid', (x) => pretty(x, '\r\n').replace('<CondicionVenta>01<', '<CondicionVenta>09<')),
  fe('multi-line (tabs): incomplete root', 'cvc-complex-type.2.4.b', (x) => pretty(x, '\n\t').replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')),
  fe('non-ASCII text before the error', 'cvc-enumeration-valid', (x) => sub(x, /<Detalle>[^<]*</, '<Detalle>Café ñandú 😀 de Cartago<').replace('<UnidadMedida>Os<', '<UnidadMedida>Zz<')),
  fe('TE: unexpected element', 'cvc-complex-type.2.4.a', (x) => sub(x, '<CondicionVenta>', '<Receptores/><CondicionVenta>'), '10-te-sin-receptor'),
  fe('NC: missing InformacionReferencia child', 'cvc-complex-type.2.4.b', (x) => sub(x, /<FechaEmisionIR>[^<]*<\/FechaEmisionIR><Codigo>06<\/Codigo><Razon>[^<]*<\/Razon>/, ''), '09-nc-devolucion'),
  fe('FEC: enumeration', 'cvc-enumeration-valid', (x) => sub(x, /<TipoMedioPago>\d\d</, '<TipoMedioPago>77<'), '17-fec-agricultor'),
  fe('FEE: pattern', 'cvc-pattern-valid', (x) => sub(x, /<NumeroConsecutivo>\d/, '<NumeroConsecutivo>X'), '20-fee-cafe-usd'),
  fe('REP: not a number', 'cvc-datatype-valid.1.2.1', (x) => sub(x, /<TotalComprobante>[^<]*</, '<TotalComprobante>1,5<'), '23-rep-credito-90-dias'),
  fe('no child element expected at this point', 'cvc-complex-type.2.4.d', (x) => sub(x, '<Numero>3101123456</Numero>', '<Numero>3101123456</Numero><Extra/>')),
  { name: 'MR: an element after the ds:Signature', key: 'cvc-complex-type.2.4.a', schema: 'MR' as const, xml: sub(MR, /<\/MensajeReceptor>$/, '<Extra/></MensajeReceptor>') },
  { name: 'MR: value not in the enumeration', key: 'cvc-enumeration-valid', schema: 'MR' as const, xml: sub(MR, '<Mensaje>1<', '<Mensaje>4<') },
].sort((a, b) => a.schema.localeCompare(b.schema));

const BACKENDS: [string, XsdValidator | undefined][] = [
  ['binary', hasXmllintBinary() ? new XmllintBinaryValidator() : undefined],
  ['wasm', new XmllintWasmValidator()],
];

describe('the emulation of Xerces, without Java', () => {
  it('finds no error in any valid fixture (every kind) nor in a MensajeReceptor', () => {
    expect(FIXTURE_NAMES.length).toBeGreaterThanOrEqual(24);
    for (const name of FIXTURE_NAMES) {
      const f = fixture(name);
      expect(walkDocument(f.xml, schemaModel(f.schema)), name).toBeUndefined();
    }
    expect(walkDocument(MR, schemaModel('MR'))).toBeUndefined();
  });

  it('xercesFirstError: undefined for a valid document; Xerces\' words and position for an invalid one', async () => {
    const v = new XmllintWasmValidator();
    const f = fixture(FE);
    expect(await xercesFirstError(f.xml, 'FE', v)).toBeUndefined();
    const bad = sub(f.xml, '<CondicionVenta>01<', '<CondicionVenta>09<');
    const x = await xercesFirstError(bad, 'FE', v);
    expect(x).toEqual({
      message: "cvc-enumeration-valid: Value '09' is not facet-valid with respect to enumeration '[01, 02, 03, 04, 05, 06, 07, 08, 10, 12, 13, 14, 15, 99]'. It must be a value from the enumeration.",
      fila: 1,
      columna: bad.indexOf('</CondicionVenta>') + '</CondicionVenta>'.length + 1,
      xerces: true,
    });
  });

  it('falls back to the validator\'s own words inside the ds:Signature (the xmldsig schema is not modelled)', async () => {
    const v = new XmllintWasmValidator();
    const bad = sub(fixture(FE).xml, /<ds:SignatureValue[^>]*>[^<]*<\/ds:SignatureValue>/, '');
    const [r] = await v.validate(bad, 'FE');
    const first = r!.errors[0]!;
    expect(first.message).toContain('{http://www.w3.org/2000/09/xmldsig#}');
    expect(xercesError(bad, 'FE', first)).toEqual({ message: first.message, fila: first.line, columna: 0, xerces: false });
  });

  it('a message with quotes goes through the DetalleMensaje and back unchanged', () => {
    const mensaje = `cvc-complex-type.2.4.a: Invalid content was found starting with element '{"${NS_FE}":CodigoActividad}'. One of '{"${NS_FE}":ProveedorSistemas}' is expected.`;
    const detalle = formatDetalleMensaje('Este comprobante fue recibido.', false, [{ codigo: -1, mensaje, fila: 1, columna: 255 }]);
    expect(detalle).toContain(`-1, ""cvc-complex-type.2.4.a: Invalid content was found starting with element '{\\"${NS_FE}\\":CodigoActividad}'.`);
    expect(parseDetalleMensaje(detalle)).toEqual([{ codigo: -1, mensaje, fila: 1, columna: 255, aviso: false }]);
  });
});

describe.skipIf(!hasJava())('Java\'s validator (the JDK\'s Xerces) against the translation of xmllint\'s first error', () => {
  let java: JavaResult[];
  beforeAll(() => {
    java = javaFirstErrors(CASES);
  }, 120_000);

  it('each case breaks the document the way it says (Java\'s message starts with its key)', () => {
    CASES.forEach((c, i) => {
      expect(java[i]!.valid, c.name).toBe(false);
      expect(java[i]!.message!.startsWith(`${c.key}:`), `${c.name}: ${java[i]!.message}`).toBe(true);
    });
  });

  for (const [backend, v] of BACKENDS) {
    it.skipIf(!v)(`${backend}: the emulator's -1 is Java's message, line and column, word for word`, async () => {
      const schemas = [...new Set(CASES.map((c) => c.schema))];
      for (const schema of schemas) {
        const idx = CASES.flatMap((c, i) => (c.schema === schema ? [i] : []));
        const results = await v!.validate(idx.map((i) => CASES[i]!.xml), schema);
        idx.forEach((i, k) => {
          const c = CASES[i]!;
          const r = results[k]!;
          expect(r.valid, c.name).toBe(false);
          const x = xercesError(c.xml, schema, r.errors[0]!);
          expect({ name: c.name, message: x.message, fila: x.fila, columna: x.columna }).toEqual({ name: c.name, message: java[i]!.message, fila: java[i]!.line, columna: java[i]!.column });
        });
      }
    });
  }
});

describe.skipIf(hasJava())('Java\'s validator', () => {
  it('skipped: java (a JDK) is not installed on this machine; .ci/run installs default-jdk-headless', () => undefined);
});
