// Issue 26, item 5: Hacienda's DetalleMensaje as data (src/core/xml/detalle-mensaje.ts). The layouts of NOTES §6.3
// word for word (the sandbox's accepted-with-warnings and rejected answers, CR written `&#13;` in the XML, doubled
// quotes, `\"` inside), production's `.` layout, a Xerces -1 with its fila and columna, a signature failure without
// code; and any string at all gives an array, never a throw.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorLine, formatDetalleMensaje, parseDetalleMensaje, type ErrorHacienda } from '../src/core/xml/detalle-mensaje.js';
import { parseMensajeHaciendaSummary } from '../src/hacienda/client/mensaje.js';

const OPENING = 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.';
const T37 =
  "Estimado obligado tributario los datos suministrados en provincia, cantón y distrito del 'emisor' no concuerdan con la información registrada en la Dirección General de Tributación, favor proceder actualizar sus datos.";
const T407 =
  'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico no se encuentra Registrado ante el Ministerio de Hacienda para este contribuyente, favor verificar';
const T408 =
  'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico, no es un código valido conforme el Catalogo de Actividades Económicas del Registro Único Tributario.';
const NS = 'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica';
// As Hacienda writes a Xerces message: the quotes inside it as \" (NOTES §6.3, the -1 row).
const XERCES_WRITTEN = `cvc-complex-type.2.4.a: Invalid content was found starting with element '{\\"${NS}\\":CodigoActividad}'. One of '{\\"${NS}\\":ProveedorSistemas}' is expected.`;
const XERCES = XERCES_WRITTEN.replace(/\\"/g, '"');

const item = (codigo: number | null, mensaje: string, aviso = false, fila: number | null = null, columna: number | null = null): ErrorHacienda => ({ codigo, mensaje, fila, columna, aviso });

/** A MensajeHacienda as Hacienda sends it: DetalleMensaje's CRs written `&#13;` (NOTES §6.3). */
function mensajeHaciendaXml(mensaje: 1 | 3, detalleXml: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><MensajeHacienda xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/mensajeHacienda">` +
    `<Clave>50601012600310112345600100001010000000001100000001</Clave><NombreEmisor>X</NombreEmisor><TipoIdentificacionEmisor>02</TipoIdentificacionEmisor>` +
    `<NumeroCedulaEmisor>3101123456</NumeroCedulaEmisor><Mensaje>${mensaje}</Mensaje><EstadoMensaje>${mensaje === 1 ? 'Aceptado' : 'Rechazado'}</EstadoMensaje>` +
    `<DetalleMensaje>${detalleXml}</DetalleMensaje><TotalFactura>0</TotalFactura></MensajeHacienda>`
  );
}

describe("Hacienda's real layouts (NOTES §6.3)", () => {
  it('the sandbox, accepted with two warnings: the list without the "errores" heading, CR LF, doubled quotes', () => {
    const xml = mensajeHaciendaXml(1, `${OPENING}\n\ncodigo, mensaje, fila, columna&#13;\n-37, ""${T37.replace(/'/g, '&apos;')}"", 0, 0&#13;\n-407, ""${T407}"", 0, 0&#13;\n`);
    const m = parseMensajeHaciendaSummary(xml)!;
    expect(m.detalleMensaje).toContain('\r\n');
    expect(m.errores).toEqual([item(-37, T37, true), item(-407, T407, true)]);
  });

  it('the sandbox, rejected: the heading, the bracketed list, the warning -37 listed as aviso beside -408', () => {
    const detalle = `${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: &#13;\n[&#13;\ncodigo, mensaje, fila, columna&#13;\n-408, ""${T408}"", 0, 0&#13;\n-37, ""${T37}"", 0, 0&#13;\n&#13;\n]`;
    const m = parseMensajeHaciendaSummary(mensajeHaciendaXml(3, detalle))!;
    expect(m.errores).toEqual([item(-408, T408), item(-37, T37, true)]);
  });

  it('a Xerces -1 carries its fila and columna, its \\" read back as quotes', () => {
    const detalle = `${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n-1, ""${XERCES_WRITTEN}"", 1, 255\r\n\r\n]`;
    expect(parseDetalleMensaje(detalle)).toEqual([item(-1, XERCES, false, 1, 255)]);
  });

  it('a signature failure is a plain sentence: codigo null', () => {
    const detalle = `${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\nLa firma del documento no es XAdES, se obtuvo [ERROR]\r\n\r\n]`;
    expect(parseDetalleMensaje(detalle)).toEqual([item(null, 'La firma del documento no es XAdES, se obtuvo [ERROR]')]);
  });

  it("production: `.` alone is nothing; `.` with a warning; an unknown code under aceptado is an aviso, under a rejection is not", () => {
    expect(parseDetalleMensaje('.')).toEqual([]);
    const warned = '.\n\ncodigo, mensaje, fila, columna\r\n-16, ""El archivo XML fue enviado tarde"", 0, 0\r\n';
    expect(parseDetalleMensaje(warned, { aceptado: true })).toEqual([item(-16, 'El archivo XML fue enviado tarde', true)]);
    expect(parseDetalleMensaje(warned)).toEqual([item(-16, 'El archivo XML fue enviado tarde', false)]);
  });

  it('-53: the same-day text is an aviso, the later-day text a rejection', () => {
    const d = (t: string) => `.\n\ncodigo, mensaje, fila, columna\r\n-53, ""${t}"", 0, 0\r\n`;
    expect(parseDetalleMensaje(d('La hora indicada en la emisión del archivo XML no coincide con la hora oficial.'))[0]!.aviso).toBe(true);
    expect(parseDetalleMensaje(d('La fecha de emisión del comprobante electrónico no puede ser superior al día de hoy.'))[0]!.aviso).toBe(false);
  });

  it('the older single-quoted form, `""` for a quote inside, in brackets', () => {
    expect(parseDetalleMensaje('[-99, "La numeración ""001"" ya existe", 0, 0]')).toEqual([item(-99, 'La numeración "001" ya existe')]);
  });

  it('nothing else is an item: no verdict yet, a reason of fecr\'s own', () => {
    expect(parseDetalleMensaje(null)).toEqual([]);
    expect(parseDetalleMensaje(undefined)).toEqual([]);
    expect(parseDetalleMensaje('Hacienda indicó ind-estado error')).toEqual([]);
    expect(parseDetalleMensaje(OPENING)).toEqual([]);
  });

  it('one line of text per item', () => {
    expect(errorLine(item(-408, T408))).toBe(`-408 ${T408}`);
    expect(errorLine(item(-1, 'cvc', false, 3, 14))).toBe('-1 cvc (fila 3, columna 14)');
    expect(errorLine(item(null, 'La firma'))).toBe('La firma');
  });
});

describe('any string', () => {
  it('gives an array of well-formed items, never a throw', () => {
    const piece = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.constantFrom('codigo, mensaje, fila, columna', '\r\n', '\n', '\r', '""', '"', '\\"', ', ', '[', ']', '-1', '0', '-408, ""x"", 0, 0', '.', '&#13;'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }).map((a) => a.join('')), fc.boolean(), (s, aceptado) => {
        const out = parseDetalleMensaje(s, { aceptado });
        expect(Array.isArray(out)).toBe(true);
        for (const e of out) {
          expect(e.codigo === null || Number.isSafeInteger(e.codigo)).toBe(true);
          expect(typeof e.mensaje).toBe('string');
          expect(e.fila === null || e.fila > 0).toBe(true);
          expect(e.columna === null || e.columna > 0).toBe(true);
          expect(typeof e.aviso).toBe('boolean');
          if (aceptado) expect(e.aviso).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reads back what formatDetalleMensaje writes, for any text and code', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ codigo: fc.integer({ min: -99999, max: -1 }), mensaje: fc.string({ unit: 'grapheme', minLength: 1 }).map((t) => t.replace(/[\r\n]/g, ' ').trim()).filter((t) => t !== '') }), { maxLength: 5 }),
        (items) => {
          const out = parseDetalleMensaje(formatDetalleMensaje('.', false, items));
          expect(out.map((e) => [e.codigo, e.mensaje])).toEqual(items.map((i) => [i.codigo, i.mensaje]));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a long hostile line is read in linear time', () => {
    const line = `-1, ${'"'.repeat(200_000)}, ${', '.repeat(100_000)}0`;
    const t = Date.now();
    expect(Array.isArray(parseDetalleMensaje(`codigo, mensaje, fila, columna\r\n${line}`))).toBe(true);
    expect(Date.now() - t).toBeLessThan(1000);
  });
});
