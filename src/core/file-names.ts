/**
 * The names of a document's files, as the ANEXOS v4.4 give them "para envío por correo y almacenamiento" (p.66-67):
 * `clave.xml` (the signed comprobante), `clave_respuesta.xml` (Hacienda's MensajeHacienda), `clave.pdf`. One
 * function for the mail's attachments and `fecr download`'s files on disk.
 */
export type DocumentFile = 'XML' | 'PDF' | 'RESPUESTA';

export function documentFileName(clave: string, type: DocumentFile): string {
  return type === 'PDF' ? `${clave}.pdf` : type === 'RESPUESTA' ? `${clave}_respuesta.xml` : `${clave}.xml`;
}
