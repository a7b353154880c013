// What the bundle gives a lazy `import('package')` (issue 38): esbuild, splitting a CommonJS package into a chunk of
// its own, exports only `default` from it (`export default require_x()`), where Node's import of the same package
// gives its named exports too. A verb that destructures a name from such an import works from the sources (tsx) and
// breaks from dist/ (`request is not a function`). This reads, for each lazy import of a package in the sources, the
// names its importer takes (TypeScript's parser) and the names the bundle's chunk exports (esbuild's metafile).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

interface Metafile {
  inputs: Record<string, { imports: Array<{ path: string; kind: string; original?: string }> }>;
  outputs: Record<string, { entryPoint?: string; exports: string[] }>;
}

/** The names taken from `import(spec)` in `file`: a destructuring's names, or null when the module is used whole. */
function namesTaken(source: string, file: string, spec: string): Array<string[] | null> {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: Array<string[] | null> = [];
  const bindingNames = (b: ts.BindingName | undefined): string[] | null =>
    b && ts.isObjectBindingPattern(b) ? b.elements.map((e) => (e.propertyName ?? e.name).getText(sf)) : null;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0]) && node.arguments[0].text === spec) {
      let at: ts.Node = node.parent;
      if (ts.isAwaitExpression(at)) at = at.parent;
      if (ts.isVariableDeclaration(at)) out.push(bindingNames(at.name));
      else if (ts.isArrayLiteralExpression(at) && ts.isCallExpression(at.parent) && ts.isAwaitExpression(at.parent.parent) && ts.isVariableDeclaration(at.parent.parent.parent)) {
        // const [{ a }, { b }] = await Promise.all([import('x'), import('y')])
        const pattern = at.parent.parent.parent.name;
        const i = at.elements.indexOf(node);
        const el = ts.isArrayBindingPattern(pattern) ? pattern.elements[i] : undefined;
        out.push(el && ts.isBindingElement(el) ? bindingNames(el.name) : null);
      } else out.push(null);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** One line per lazy import of a package whose importer takes a name the bundle's chunk does not export. */
export function lazyImportProblems(meta: Metafile, root: string): string[] {
  const chunkExports = new Map<string, string[]>();
  for (const o of Object.values(meta.outputs)) if (o.entryPoint) chunkExports.set(o.entryPoint, o.exports);
  const problems: string[] = [];
  for (const [file, input] of Object.entries(meta.inputs)) {
    if (file.includes('node_modules/')) continue;
    for (const imp of input.imports) {
      if (imp.kind !== 'dynamic-import' || !imp.path.includes('node_modules/') || !imp.original) continue;
      const exports = chunkExports.get(imp.path);
      if (!exports) continue; // external: Node's own import at run time
      for (const names of namesTaken(readFileSync(join(root, file), 'utf8'), file, imp.original)) {
        const missing = names === null ? (exports.length === 1 && exports[0] === 'default' ? ['(the module used whole)'] : []) : names.filter((n) => !exports.includes(n));
        if (missing.length > 0) problems.push(`${file}: import('${imp.original}') takes ${missing.join(', ')}, but the bundle's chunk exports only ${exports.join(', ')}`);
      }
    }
  }
  return problems;
}
