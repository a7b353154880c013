/**
 * Streaming reader of a top-level JSON array (`[ {...}, {...} ]`): splits the text element by element by tracking
 * bracket depth outside strings, and JSON.parses each element on its own, so memory holds one element at a time
 * whatever the file size. Only the top-level framing is read by hand; each element goes through JSON.parse.
 */

/** An element's text, and where it starts in the file (1-based line and column, for its syntax errors). */
export type ArrayElement = { index: number; text: string; line: number; column: number } | { index: number; error: string };

/** Thrown when the text is not a JSON array at all (nothing to process). */
export class NotAnArrayError extends Error {}

const WS = new Set([' ', '\t', '\n', '\r', '\uFEFF']);

/**
 * Yields each top-level element's raw text (index from 1). A malformed element (e.g. a missing bracket that
 * swallows the end of the file) is yielded as an error; text after the closing bracket is an error too.
 */
export async function* splitJsonArray(chunks: AsyncIterable<string | Buffer>): AsyncGenerator<ArrayElement> {
  let state: 'start' | 'between' | 'element' | 'end' = 'start';
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: string[] = [];
  let index = 0;
  let trailing = false;
  const decoder = new TextDecoder('utf-8');
  // Where the element being read starts: the lines and the column counted up to `counted` of the current chunk.
  let line = 1;
  let column = 1;
  let counted = 0;
  let startLine = 1;
  let startColumn = 1;
  const countTo = (chunk: string, i: number) => {
    for (; counted < i; counted++) {
      if (chunk[counted] === '\n') {
        line++;
        column = 1;
      } else column++;
    }
  };

  for await (const raw of chunks) {
    const chunk = typeof raw === 'string' ? raw : decoder.decode(raw, { stream: true });
    let start = -1; // where the current element's text begins in this chunk
    counted = 0;
    if (state === 'element') start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (state === 'element') {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
          continue;
        }
        if (c === '"') inString = true;
        else if (c === '{' || c === '[') depth++;
        else if ((c === '}' || c === ']') && depth > 0) depth--;
        else if ((c === ',' || c === ']') && depth === 0) {
          parts.push(chunk.slice(start, i));
          yield { index, text: parts.join(''), line: startLine, column: startColumn };
          parts = [];
          start = -1;
          state = c === ',' ? 'between' : 'end';
        }
        continue;
      }
      if (WS.has(c)) continue;
      if (state === 'start') {
        if (c !== '[') throw new NotAnArrayError(`not a JSON array (expected "[", found "${c}")`);
        state = 'between';
      } else if (state === 'between') {
        if (c === ']' && index === 0) state = 'end';
        else if (c === ',' || c === ']') {
          index++;
          yield { index, error: `element ${index}: unexpected "${c}" (an empty element)` };
          if (c === ']') state = 'end';
        } else {
          index++;
          state = 'element';
          depth = 0;
          inString = false;
          escaped = false;
          start = i;
          countTo(chunk, i);
          startLine = line;
          startColumn = column;
          i--; // re-read this character as part of the element
        }
      } else if (state === 'end') {
        trailing = true;
      }
    }
    if (state === 'element' && start >= 0) parts.push(chunk.slice(start));
    countTo(chunk, chunk.length);
  }
  if (state === 'start') throw new NotAnArrayError('not a JSON array (the file is empty)');
  if (state === 'element') {
    yield { index, error: `element ${index}: unexpected end of file (missing "]" or a bracket inside the element)` };
  } else if (state === 'between') {
    yield { index: index + 1, error: 'unexpected end of file: the array is not closed with "]"' };
  }
  if (trailing) yield { index: index + 1, error: 'unexpected text after the closing "]" of the array' };
}
