/**
 * Local wall-clock times of an IANA time zone turned into instants, with Intl's own time zone data (no
 * dependency): what a switch that writes local times (Asterisk without `usegmtime`, FreeSWITCH's
 * `*_stamp`) meant. docs/IMPORTS.md, "Local times".
 *
 * A local time names one instant, or two when the clocks went back over it (the repeated hour of a
 * change to winter time), or none when the clocks skipped it (the hour lost to summer time). The caller
 * decides among two with the call's other times (src/shared/domain/imports/cdr/times.ts); none is an error.
 */

const DAY_MS = 86_400_000;

/** Thrown for a name Intl does not know as a time zone. */
export class UnknownZone extends Error {}

export class Zone {
  private readonly format: Intl.DateTimeFormat;
  /** Offsets (local - UTC, ms) that make a local minute true, by local minute; one file spans few minutes per hour. */
  private readonly byMinute = new Map<number, readonly number[]>();

  constructor(readonly name: string) {
    try {
      this.format = new Intl.DateTimeFormat('en-US', {
        timeZone: name,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new UnknownZone(`"${name}" is not a time zone name (an IANA name such as Europe/Berlin, America/New_York or UTC)`);
    }
  }

  /** The zone's offset from UTC (ms) at an instant: what its clocks read minus UTC. */
  offsetAt(instant: number): number {
    const second = Math.floor(instant / 1000) * 1000;
    let year = 0;
    let month = 0;
    let day = 0;
    let hour = 0;
    let minute = 0;
    let sec = 0;
    for (const part of this.format.formatToParts(second)) {
      switch (part.type) {
        case 'year':
          year = Number(part.value);
          break;
        case 'month':
          month = Number(part.value);
          break;
        case 'day':
          day = Number(part.value);
          break;
        case 'hour':
          hour = Number(part.value);
          break;
        case 'minute':
          minute = Number(part.value);
          break;
        case 'second':
          sec = Number(part.value);
          break;
      }
    }
    return Date.UTC(year, month - 1, day, hour, minute, sec) - second;
  }

  /**
   * The instants (ms, ascending) at which the zone's clocks read `local`, a wall time written as if it
   * were UTC (Date.UTC of its fields): one, two (the clocks went back over it) or none (they skipped it).
   */
  instants(local: number): number[] {
    const minute = Math.floor(local / 60_000);
    let offsets = this.byMinute.get(minute);
    if (offsets === undefined) {
      offsets = this.offsetsOf(minute * 60_000);
      // A file of CDRs spans few distinct minutes; this only bounds a pathological one.
      if (this.byMinute.size >= 100_000) this.byMinute.clear();
      this.byMinute.set(minute, offsets);
    }
    return offsets.length === 1 ? [local - offsets[0]] : offsets.map((o) => local - o);
  }

  /**
   * Offsets under which the local minute `local` is a true reading of the clocks. Any offset in force
   * near it is in force a day before or a day after it (no zone changes its clocks twice in two days),
   * so those two are the candidates; each is kept if the instant it gives really has that offset.
   * Whole minutes: zones change their clocks at a whole minute.
   */
  private offsetsOf(local: number): number[] {
    const candidates = new Set([this.offsetAt(local - DAY_MS), this.offsetAt(local + DAY_MS)]);
    const valid: number[] = [];
    for (const offset of candidates) if (this.offsetAt(local - offset) === offset) valid.push(offset);
    // Ascending instants: the larger offset first.
    return valid.sort((a, b) => b - a);
  }
}
