/**
 * The scores of the entries one search touched, in arrays kept across searches (grown by doubling
 * as the index grows), so a search pays for the postings it reads and never for clearing or
 * allocating a slot per entry: a slot counts only while its stamp is the current search's.
 */
export class ScoreBoard {
  values = new Float64Array(0);
  stamps = new Uint32Array(0);
  /** The current search's stamp; slots with another are empty. */
  stamp = 0;
  /** The positions this search touched, in first-touch order: `touched[0 … count - 1]`. */
  touched = new Int32Array(0);
  count = 0;

  /** Empties the board for a search over `entries` entries. */
  reset(entries: number): void {
    this.count = 0;
    if (entries > this.values.length) {
      const capacity = Math.max(entries, 2 * this.values.length, 64);
      this.values = new Float64Array(capacity);
      this.stamps = new Uint32Array(capacity);
      this.touched = new Int32Array(capacity);
      this.stamp = 0;
    }
    if (this.stamp === 0xffff_ffff) {
      this.stamps.fill(0);
      this.stamp = 0;
    }
    this.stamp++;
  }

  /** The touched positions that pass `keep`. */
  touchedWhere(keep: (position: number) => boolean): number[] {
    const kept: number[] = [];
    for (let i = 0; i < this.count; i++) {
      const position = this.touched[i] as number;
      if (keep(position)) kept.push(position);
    }
    return kept;
  }
}
