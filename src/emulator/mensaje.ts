/**
 * The emulator's answer: a MensajeHacienda v4.4 (NOTES §6.1) built with the core builder and signed
 * XAdES-EPES with the emulator's own key (core signer), like Hacienda signs its answers.
 */
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { formatDetalleMensaje } from '../core/xml/detalle-mensaje.js';
import { buildMensajeHaciendaXml } from '../core/xml/mensaje.js';
import { credentials, type SigningCredentials } from '../core/sign/p12.js';
import { signCanonical } from '../core/sign/xades.js';
import type { EmulatorKeys } from './keys.js';
import type { EmulatorEnvironment, IdRef, ValidationErrorItem } from './store.js';

export interface MensajeHaciendaFacts {
  clave: string;
  environment: EmulatorEnvironment;
  accepted: boolean;
  errors: ValidationErrorItem[];
  nombreEmisor?: string;
  emisor: IdRef;
  nombreReceptor?: string;
  receptor?: IdRef;
  montoTotalImpuesto?: string;
  totalFactura?: string;
}

/**
 * Which Hacienda answers a document: the sandbox's for one received on the sandbox's path, and for one posted by a
 * sandbox user, whatever path it came by. Hacienda's sandbox users are `…@stag.comprobanteselectronicos.go.cr` (NOTES
 * §4.2: the stag JWT's `preferred_username`; production's are `…@comprobanteselectronicos.go.cr`): such a user exists
 * only in the sandbox (realm rut-stag), so its documents are the sandbox's. fecr's env local posts every issuer's
 * documents on production's path (hacienda/client/endpoints.ts), so this is how the emulator tells a test issuer
 * (`ambiente 2`, a stag user: what `fecr init` writes) from a production one. The issuer record's `ambiente` itself
 * never reaches Hacienda.
 */
export function answerEnvironment(received: EmulatorEnvironment, username: string): EmulatorEnvironment {
  return received === 'sandbox' || /@stag\./i.test(username) ? 'sandbox' : 'production';
}

/** The opening line of every sandbox answer, accepted or not (NOTES §6.3: "recibido", with its final period). */
const SANDBOX_OPENING = 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.';

/**
 * Production's opening: a lone period. Real production MensajeHacienda v4.4 of 2026 (public, in the repository
 * xavirubio27/tributario-ai-cr, backend/tests/fixtures/fiscal/real/v4_4/mh/) read `.` when accepted without warnings,
 * and `.`, an empty line and the sandbox's list (`codigo, mensaje, fila, columna&#13;`, one `-37, ""…"", 0, 0&#13;` line
 * per warning) when accepted with warnings: the sandbox's layout with `.` for its opening sentence.
 */
const PRODUCTION_OPENING = '.';

/**
 * DetalleMensaje in Hacienda's layout (NOTES §6.3): the sandbox's opening sentence, or production's `.`. A production
 * rejection was not seen in any real answer found: it is extrapolated, the sandbox's rejected layout (the "errores"
 * heading and the bracketed list) after production's `.`.
 */
export function detalleMensaje(f: Pick<MensajeHaciendaFacts, 'environment' | 'accepted' | 'errors'>): string {
  const opening = f.environment === 'sandbox' ? SANDBOX_OPENING : PRODUCTION_OPENING;
  return formatDetalleMensaje(opening, f.accepted, f.errors);
}

export class MensajeHaciendaSigner {
  private readonly creds: SigningCredentials;

  constructor(
    keys: EmulatorKeys,
    private readonly now: () => number,
  ) {
    const der = Buffer.from(new X509Certificate(keys.certificatePem).raw);
    this.creds = credentials(createPrivateKey(keys.privateKeyPem), der);
  }

  /** Builds and signs the MensajeHacienda; returns the signed XML bytes (UTF-8, with XML declaration). */
  build(f: MensajeHaciendaFacts): Buffer {
    const nombreEmisor = (f.nombreEmisor?.trim() || `CONTRIBUYENTE ${f.emisor.numeroIdentificacion}`).slice(0, 100);
    const unsigned = buildMensajeHaciendaXml({
      clave: f.clave,
      nombreEmisor,
      tipoIdentificacionEmisor: f.emisor.tipoIdentificacion,
      numeroCedulaEmisor: f.emisor.numeroIdentificacion,
      ...(f.receptor
        ? {
            nombreReceptor: (f.nombreReceptor?.trim() || `CONTRIBUYENTE ${f.receptor.numeroIdentificacion}`).slice(0, 100),
            tipoIdentificacionReceptor: f.receptor.tipoIdentificacion,
            numeroCedulaReceptor: f.receptor.numeroIdentificacion,
          }
        : {}),
      mensaje: f.accepted ? 1 : 3,
      detalleMensaje: detalleMensaje(f),
      ...(f.montoTotalImpuesto !== undefined ? { montoTotalImpuesto: f.montoTotalImpuesto } : {}),
      totalFactura: f.totalFactura ?? '0',
    });
    const signed = signCanonical(unsigned, this.creds, {
      signingTime: new Date(this.now()),
      newId: () => randomBytes(12).toString('hex'),
    });
    return Buffer.from(signed, 'utf8');
  }
}
