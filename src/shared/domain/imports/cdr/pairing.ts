import type { Leg } from './rows';

/**
 * Per-transaction accounting rows (Kamailio's and OpenSIPS's `acc`: an INVITE row when the call is
 * answered, a BYE row when it ends) paired into calls across the whole file: by Call-ID, the BYE's
 * tags being the INVITE's (either way round: whoever hangs up sends the BYE). Rows of one call may be
 * far apart, and a BYE may come first (files of several processes or days concatenated), so both
 * wait here until their partner comes; what is left at the end is reported (docs/IMPORTS.md, "Pairs").
 * Holds one entry per call in progress at any point of the file.
 */

/** A row waiting for its partner: where it is in the file. */
export interface Waiting<T> {
  leg: Leg;
  /** The caller's data for the row (its line, raw text, position). */
  row: T;
  /** Order of arrival. */
  seq: number;
}

export type Paired<T> = { begin: Waiting<T>; end: Waiting<T> };

export class Pairing<T> {
  private readonly waiting = new Map<string, Waiting<T>[]>();
  private count = 0;
  private seq = 0;

  /** Rows waiting now. */
  get size(): number {
    return this.count;
  }

  /**
   * A begin or end row: its call when its partner was waiting, `repeat` for a second begin row of a
   * call whose begin row waits (a re-INVITE), else null (it waits).
   */
  add(leg: Leg, row: T): Paired<T> | 'repeat' | null {
    const list = this.waiting.get(leg.callid);
    if (list) {
      for (let i = 0; i < list.length; i++) {
        const other = list[i];
        if (!sameDialog(other.leg, leg)) continue;
        if (other.leg.role === leg.role) {
          if (leg.role === 'begin') return 'repeat';
          continue; // two BYE rows of one call: the second waits for a begin of its own, and is reported
        }
        list.splice(i, 1);
        if (list.length === 0) this.waiting.delete(leg.callid);
        this.count -= 1;
        const mine = { leg, row, seq: this.seq++ };
        return leg.role === 'begin' ? { begin: mine, end: other } : { begin: other, end: mine };
      }
      list.push({ leg, row, seq: this.seq++ });
    } else this.waiting.set(leg.callid, [{ leg, row, seq: this.seq++ }]);
    this.count += 1;
    return null;
  }

  /** The rows whose partner never came, in the order they were read. */
  *leftovers(): Generator<Waiting<T>> {
    const all = [...this.waiting.values()].flat().sort((a, b) => a.seq - b.seq);
    this.waiting.clear();
    this.count = 0;
    yield* all;
  }
}

/**
 * Rows of one dialog: the same From tag on the caller's side. A row from the callee (its BYE, or its
 * re-INVITE refreshing the session) has the tags swapped; an empty tag (a switch that wrote none)
 * matches any. A BYE must match both tags: a forked call has several dialogs under one Call-ID and
 * From tag (one per answering fork's To tag), and the BYE that hangs up a second fork is not the end of
 * the call that was answered first.
 */
function sameDialog(a: Leg, b: Leg): boolean {
  const begin = a.role === 'begin' ? a : b;
  const other = begin === a ? b : a;
  if (begin.fromTag === '' || (other.fromTag === '' && other.toTag === '')) return true;
  if (other.role === 'begin') return other.fromTag === begin.fromTag || (other.fromTag === begin.toTag && other.toTag === begin.fromTag);
  const matches = (a: string, b: string) => a === '' || b === '' || a === b;
  if (other.fromTag === begin.fromTag) return matches(other.toTag, begin.toTag);
  return other.toTag === begin.fromTag && matches(other.fromTag, begin.toTag);
}
