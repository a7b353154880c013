/**
 * An element's children against its sequence, step by step, as Xerces' DFA content model (XSDFACM, built by
 * CMBuilder's compact syntax tree) takes them, and its messages (XMLSchemaValidator.handleStartElement and
 * elementLocallyValidComplexType): cvc-complex-type.2.4.a/b/d/e/f/g/h/i/j.
 *
 * For a sequence of element particles the DFA's state is the last particle matched; a particle whose occurrences
 * are neither 1, 0..1, 0..unbounded nor 1..unbounded (e.g. 0..5, 1..1000) is a "counting" state, whose repetitions
 * Xerces counts and checks against its minOccurs and maxOccurs (state[2] of the DFA).
 */
import { declName, type Particle } from './model.js';

export interface ContentState {
  /** Index of the last particle matched; -1 before the first child. */
  i: number;
  /** Repetitions of particle `i` when it counts. */
  count: number;
}

export const startContent = (): ContentState => ({ i: -1, count: 0 });

function counts(p: Particle): boolean {
  const { min, max } = p;
  return !((min === 1 && max === 1) || (min === 0 && max === 1) || (min === 0 && max === Infinity) || (min === 1 && max === Infinity));
}

/** The particles the DFA has a transition to from state `i`, in the order of the content model. */
function reachable(ps: readonly Particle[], i: number): number[] {
  const out: number[] = [];
  if (i >= 0 && ps[i]!.max > 1) out.push(i);
  for (let j = i + 1; j < ps.length; j++) {
    out.push(j);
    if (ps[j]!.min > 0) break;
  }
  return out;
}

/** XSDFACM.whatCanGoHere: the transitions, less the loop of a counting state at its maximum and the exits below its minimum. */
function whatCanGoHere(ps: readonly Particle[], s: ContentState): Particle[] {
  const cur = s.i >= 0 ? ps[s.i]! : undefined;
  return reachable(ps, s.i)
    .filter((j) => {
      if (!cur || !counts(cur)) return true;
      return j === s.i ? !(s.count >= cur.max) : s.count >= cur.min;
    })
    .map((j) => ps[j]!);
}

const expectedStr = (next: Particle[]) => `{${next.map((p) => declName(p.decl)).join(', ')}}`;

export interface Child {
  /** As written (prefix included): Xerces' element.rawname. */
  rawname: string;
  localName: string;
  ns: string | null;
}

/**
 * Takes one child. Returns the particle it matched, or Xerces' message when the child is not allowed here (the
 * state is then left as it was: validation stops at the first error).
 */
export function takeChild(ps: readonly Particle[], s: ContentState, child: Child): Particle | string {
  const j = reachable(ps, s.i).find((k) => ps[k]!.decl.name === child.localName && ps[k]!.decl.ns === child.ns);
  const cur = s.i >= 0 ? ps[s.i]! : undefined;
  if (j === undefined) return startError(ps, s, child);
  if (cur && counts(cur)) {
    if (j === s.i) {
      if (s.count + 1 > cur.max) return startError(ps, { i: s.i, count: s.count + 1 }, child);
      s.count++;
      return cur;
    }
    if (s.count < cur.min) return startError(ps, s, child);
  }
  if (counts(ps[j]!)) s.count = 1;
  s.i = j;
  return ps[j]!;
}

function startError(ps: readonly Particle[], s: ContentState, child: Child): string {
  const next = whatCanGoHere(ps, s);
  const cur = s.i >= 0 ? ps[s.i]! : undefined;
  const occ = cur && counts(cur) ? cur : undefined;
  if (next.length > 0) {
    const expected = expectedStr(next);
    if (occ && s.count < occ.min) {
      const required = occ.min - s.count;
      return required > 1
        ? `cvc-complex-type.2.4.h: Invalid content was found starting with element '${child.rawname}'. '${declName(occ.decl)}' is expected to occur a minimum of '${occ.min}' times in the current sequence. '${required}' more instances are required to satisfy this constraint.`
        : `cvc-complex-type.2.4.g: Invalid content was found starting with element '${child.rawname}'. '${declName(occ.decl)}' is expected to occur a minimum of '${occ.min}' times in the current sequence. One more instance is required to satisfy this constraint.`;
    }
    if (occ && s.count >= occ.max)
      return `cvc-complex-type.2.4.e: '${child.rawname}' can occur a maximum of '${occ.max}' times in the current sequence. This limit was exceeded. At this point one of '${expected}' is expected.`;
    const expanded = child.ns !== null ? `{"${child.ns}":${child.localName}}` : child.localName;
    return `cvc-complex-type.2.4.a: Invalid content was found starting with element '${expanded}'. One of '${expected}' is expected.`;
  }
  if (occ && s.count >= occ.max)
    return `cvc-complex-type.2.4.f: '${declName(occ.decl)}' can occur a maximum of '${occ.max}' times in the current sequence. This limit was exceeded. No child element is expected at this point.`;
  return `cvc-complex-type.2.4.d: Invalid content was found starting with element '${child.rawname}'. No child element is expected at this point.`;
}

/** At the end tag: Xerces' message when the content is not complete (XSDFACM.endContentModel false), else undefined. */
export function endContent(ps: readonly Particle[], s: ContentState, rawname: string): string | undefined {
  const cur = s.i >= 0 ? ps[s.i]! : undefined;
  const final = ps.slice(s.i + 1).every((p) => p.min === 0) && !(cur && counts(cur) && s.count < cur.min);
  if (final) return undefined;
  if (cur && counts(cur) && s.count < cur.min) {
    const required = cur.min - s.count;
    return required > 1
      ? `cvc-complex-type.2.4.j: The content of element '${rawname}' is not complete. '${declName(cur.decl)}' is expected to occur a minimum of '${cur.min}' times. '${required}' more instances are required to satisfy this constraint.`
      : `cvc-complex-type.2.4.i: The content of element '${rawname}' is not complete. '${declName(cur.decl)}' is expected to occur a minimum of '${cur.min}' times. One more instance is required to satisfy this constraint.`;
  }
  return `cvc-complex-type.2.4.b: The content of element '${rawname}' is not complete. One of '${expectedStr(whatCanGoHere(ps, s))}' is expected.`;
}
