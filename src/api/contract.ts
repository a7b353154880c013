/**
 * Wire types shared by the service's HTTP apps (src/server/) and the clients (src/client/): the shapes that travel
 * in the client API's bodies. Types only: no code, no import.
 */

/**
 * An issuer's record as registered, without any secret: never claveHacienda, pinCertificado,
 * certificadoHacienda nor the signing key decoded from the .p12.
 */
export interface IssuerDetails {
  identificacion: string;
  tipoIdentificacion: string;
  nombre?: string;
  nombreComercial: string;
  codigoActividad: string;
  sucursal: number;
  telefono: string;
  correoElectronico: string;
  ubicacion: { provincia: string; canton: string; distrito: string; barrio?: string; direccion: string };
  /** 1 production, 2 testing (Hacienda's sandbox). */
  ambiente: number;
  usuarioHacienda: string;
  proveedorSistemas?: string;
  /** ISO 8601 instants. */
  registeredAt: string;
  updatedAt: string;
}
