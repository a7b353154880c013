/**
 * The encodings a text input may be read in (`--encoding`): their names only, so that a command's options can be
 * checked without loading the decoders (client/text-input.ts decodes).
 */

export const TEXT_ENCODINGS = ['utf-8', 'windows-1252', 'latin1'] as const;
export type TextEncoding = (typeof TEXT_ENCODINGS)[number];

/** The value of `--encoding` (case-insensitive; `utf8` and `cp1252` too), or undefined when it names none. */
export function textEncodingOf(value: string): TextEncoding | undefined {
  const v = value.trim().toLowerCase();
  if (v === 'utf-8' || v === 'utf8') return 'utf-8';
  if (v === 'windows-1252' || v === 'cp1252') return 'windows-1252';
  if (v === 'latin1' || v === 'latin-1' || v === 'iso-8859-1') return 'latin1';
  return undefined;
}
