/**
 * `fecr archive verify` (issue 29): reads an archive of service/archive.ts as a stream and checks that the manifest
 * and the files agree (every file listed present, its sha256 and size equal, no file that the manifest does not
 * list), every XML file's signature (core/sign/verify.ts, at its own SigningTime when its certificate has since
 * expired) and its XSD (core/xsd through the adapters, in batches per schema). Each difference names the file.
 * Memory: one entry at a time and a batch of XSD_BATCH XML files per schema. The name → sha256 of every file seen goes
 * to a temporary on-disk index (store/scratch-index.ts), and the manifest, the archive's last entry, is checked line by
 * line as it streams, so memory does not grow with the archive.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { createXsdValidator, SCHEMAS, SCHEMA_NAMES, type SchemaName, type XsdValidator } from '../adapters/xsd/index.js';
import { verifyXades } from '../core/sign/verify.js';
import { ScratchFileIndex } from '../store/scratch-index.js';
import { MANIFEST_NAME, type ManifestLine } from './archive.js';

const XSD_BATCH = 100;

export interface ArchiveProblem {
  file: string;
  message: string;
}

export interface ArchiveVerifyResult {
  ok: boolean;
  files: number;
  signatures: number;
  xsd: number;
  problems: ArchiveProblem[];
}

/** The schema of an XML file from its root element and namespace; undefined when none of the v4.4 ones. */
function schemaOf(xml: string): SchemaName | undefined {
  const root = /<(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)\b[^>]*?\sxmlns="([^"]*)"/.exec(xml.replace(/^\uFEFF?<\?xml[^>]*\?>/, ''));
  if (!root) return undefined;
  return SCHEMA_NAMES.find((n) => SCHEMAS[n].rootName === root[1] && SCHEMAS[n].namespace === root[2]);
}

function signatureProblem(xml: string, now: Date): string | undefined {
  let r = verifyXades(xml, now, { crossCheck: false });
  // An archive outlives its certificates: a signature valid when it was made stays valid.
  if (!r.ok && r.signingTime && !Number.isNaN(Date.parse(r.signingTime))) r = verifyXades(xml, new Date(r.signingTime), { crossCheck: false });
  if (r.ok) return undefined;
  const failed = r.checks.filter((c) => !c.ok).map((c) => `${c.name}${c.detail ? `: ${c.detail}` : ''}`);
  return `signature does not verify (${failed.join('; ') || 'no signature'})`;
}

export async function verifyArchive(file: string, opts: { now?: Date; xsd?: XsdValidator } = {}): Promise<ArchiveVerifyResult> {
  const now = opts.now ?? new Date();
  const problems: ArchiveProblem[] = [];
  const seen = new ScratchFileIndex();
  let manifestSeen = false;
  let manifestLines = 0;
  let signatures = 0;
  let xsdChecked = 0;
  const pending = new Map<SchemaName, { file: string; xml: string }[]>();
  const xsd = opts.xsd ?? createXsdValidator({ persistentShell: true });
  const flush = async (schema: SchemaName): Promise<void> => {
    const group = pending.get(schema) ?? [];
    pending.delete(schema);
    if (group.length === 0) return;
    const results = await xsd.validate(
      group.map((g) => g.xml),
      schema,
    );
    group.forEach((g, i) => {
      xsdChecked++;
      const r = results[i];
      if (r && !r.valid) problems.push({ file: g.file, message: `not valid against ${schema} v4.4: ${r.errors[0]?.message ?? 'invalid'}` });
    });
  };
  const checkManifestLine = (text: string): void => {
    manifestLines++;
    if (text.trim() === '') return;
    let line: ManifestLine;
    try {
      line = JSON.parse(text) as ManifestLine;
    } catch {
      problems.push({ file: MANIFEST_NAME, message: `line ${manifestLines} is not JSON` });
      return;
    }
    const got = typeof line.file === 'string' ? seen.takeListed(line.file) : undefined;
    if (!got) problems.push({ file: String(line.file), message: 'listed in the manifest, missing from the archive' });
    else if (got.sha256 !== line.sha256 || got.size !== line.size) problems.push({ file: line.file, message: `sha256 ${got.sha256} (${got.size} bytes) differs from the manifest's ${line.sha256} (${line.size} bytes)` });
  };
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    const name = header.name;
    if (header.type === 'file' && name === MANIFEST_NAME) {
      // The manifest, last: checked line by line as it streams, against the files already indexed.
      if (manifestSeen) problems.push({ file: name, message: 'twice in the archive' });
      manifestSeen = true;
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => {
        const lines = (rest + c).split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) checkManifestLine(l);
      });
      stream.on('error', next);
      stream.on('end', () => {
        if (rest !== '') checkManifestLine(rest);
        next();
      });
      return;
    }
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', next);
    stream.on('end', () => {
      void (async () => {
        const data = Buffer.concat(chunks);
        if (header.type !== 'file') problems.push({ file: name, message: `not a regular file (${header.type ?? 'unknown'})` });
        else {
          if (manifestSeen) problems.push({ file: name, message: 'after the manifest (an archive of fecr ends with it)' });
          if (!seen.add(name, createHash('sha256').update(data).digest('hex'), data.length)) problems.push({ file: name, message: 'twice in the archive' });
          if (name.endsWith('.xml')) {
            const xml = data.toString('utf8');
            signatures++;
            const bad = signatureProblem(xml, now);
            if (bad) problems.push({ file: name, message: bad });
            const schema = schemaOf(xml);
            if (!schema) problems.push({ file: name, message: 'not a v4.4 document fecr knows the XSD of' });
            else {
              const list = pending.get(schema) ?? [];
              list.push({ file: name, xml });
              pending.set(schema, list);
              if (list.length >= XSD_BATCH) await flush(schema);
            }
          }
        }
      })().then(() => next(), next);
    });
  });
  let files = 0;
  try {
    try {
      await pipeline(createReadStream(file), createGunzip(), extract);
      for (const schema of [...pending.keys()]) await flush(schema);
    } catch (e) {
      problems.push({ file, message: `cannot be read as a .tar.gz: ${e instanceof Error ? e.message : String(e)}` });
    } finally {
      if (!opts.xsd) await xsd.close?.();
    }
    if (!manifestSeen) problems.push({ file: MANIFEST_NAME, message: 'missing' });
    else for (const name of seen.unlisted()) problems.push({ file: name, message: 'in the archive, not in the manifest' });
    files = seen.size;
  } finally {
    seen.close();
  }
  return { ok: problems.length === 0, files, signatures, xsd: xsdChecked, problems };
}
