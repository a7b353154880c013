/**
 * The caps of `fecr archive verify` (issue 37.4): each entry is read as a stream, and only an XML file is held, whole,
 * to check its signature and XSD; nothing else grows with what the archive claims. Every figure here is why it is.
 */

/**
 * The largest XML file (comprobante, MensajeHacienda, MensajeReceptor) read: 2 MiB. A v4.4 comprobante has at most
 * 1 000 LineaDetalle (the XSD's maxOccurs); fecr's own 1 000-line invoice is 0.7–0.9 MB, other systems' pretty-printed
 * 1.2 MB, and the heaviest shape core/received/limits.ts knows (exoneraciones and several taxes a line) about 2 MB:
 * 2 MiB holds them all, over twice fecr's own. An XML file is held whole with its DOM (a few times its size), one at a
 * time: this is what keeps `archive verify` under 150 MB. An entry over it is refused by name, from its tar header,
 * before a byte is read. (Received comprobantes are admitted up to RECEIVED_MAX_BYTES, 4 MiB: one between 2 and 4 MiB
 * in an archive is refused here, naming it; none has been seen.)
 */
export const ARCHIVE_XML_MAX_BYTES = 2 * 1024 * 1024;

/**
 * The largest other file (a PDF): hashed as it streams, never held, so this bounds only the time one entry takes.
 * fecr's PDF of a 1 000-line comprobante is far below; 32 MiB is headroom for any PDF of one comprobante.
 */
export const ARCHIVE_OTHER_MAX_BYTES = 32 * 1024 * 1024;

/**
 * A line of manifest.jsonl: fecr writes about 400 bytes (a 60-character name, a sha256, a clave, a few short values);
 * 4 KiB is ten times that. A longer line stops the check (a line is parsed once, when its newline comes: linear time).
 */
export const MANIFEST_LINE_MAX_BYTES = 4 * 1024;

/**
 * A tar metadata entry (PAX header, GNU long name), which tar-stream buffers whole: fecr writes none (its names are
 * under 100 bytes); 1 MiB is node-tar's own default cap for them (`maxMetaEntrySize`).
 */
export const TAR_META_MAX_BYTES = 1024 * 1024;

/** XML files waiting for one xmllint run of their schema: at most 100 files (a batch of issue 29) and 8 MiB of them (four of the largest). */
export const XSD_BATCH_FILES = 100;
export const XSD_BATCH_BYTES = 8 * 1024 * 1024;

/** Problems kept (and printed); beyond, only counted. An archive fecr wrote has none; a forged one needs no more to be refused. */
export const ARCHIVE_MAX_PROBLEMS = 1000;

/** A value from the archive quoted in a message: at most 120 characters, then an ellipsis (a 30 MB name is not echoed). */
export const QUOTE_MAX_CHARS = 120;

export function clip(value: unknown, max = QUOTE_MAX_CHARS): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length} characters)`;
}
