// Prints the claves and CR date-times fecr computes for fixed inputs, as JSON; run under several TZ values.
import { buildClave, buildConsecutivo } from '../../src/core/clave.js';
import { parseIsoDateTime, formatCr } from '../../src/core/dates.js';

const inputs = JSON.parse(process.argv[2] ?? '[]') as string[];
const consecutivo = buildConsecutivo({ sucursal: 1, terminal: 1, tipoComprobante: '01', numero: 7 });
const out = inputs.map((text) => {
  const d = parseIsoDateTime(text)!;
  return {
    text,
    fecha: formatCr(d),
    clave: buildClave({ fechaEmision: d, identificacion: '3101123456', consecutivo, situacion: '1', codigoSeguridad: '12345678' }),
    localTz: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
});
process.stdout.write(JSON.stringify(out));
