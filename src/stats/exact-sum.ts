/**
 * An exactly rounded running sum (Shewchuk's algorithm with non-overlapping
 * partials, and the final half-way correction), as Python's math.fsum
 * computes it. Values must be finite.
 */
export class ExactSum {
  private partials: number[] = [];
  private count = 0;

  get length(): number {
    return this.count;
  }

  add(value: number): void {
    let x = value;
    let i = 0;
    const p = this.partials;
    for (let j = 0; j < p.length; j++) {
      let y = p[j]!;
      if (Math.abs(x) < Math.abs(y)) {
        const t = x;
        x = y;
        y = t;
      }
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) p[i++] = lo;
      x = hi;
    }
    p.length = i;
    p.push(x);
    this.count++;
  }

  /** The sum of everything added, correctly rounded. */
  value(): number {
    const p = this.partials;
    let n = p.length;
    if (n === 0) return 0.0;
    let hi = p[--n]!;
    let lo = 0;
    while (n > 0) {
      const x = hi;
      const y = p[--n]!;
      hi = x + y;
      const yr = hi - x;
      lo = y - yr;
      if (lo !== 0) break;
    }
    if (n > 0 && ((lo < 0 && p[n - 1]! < 0) || (lo > 0 && p[n - 1]! > 0))) {
      const y = lo * 2;
      const x = hi + y;
      const yr = x - hi;
      if (y === yr) hi = x;
    }
    return hi;
  }

  clone(): ExactSum {
    const c = new ExactSum();
    c.partials = [...this.partials];
    c.count = this.count;
    return c;
  }
}

/** math.fsum: the correctly rounded sum. */
export function fsum(values: Iterable<number>): number {
  const s = new ExactSum();
  for (const v of values) s.add(v);
  return s.value();
}

/** statistics.fmean: the correctly rounded sum divided by n. */
export function fmean(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('fmean requires at least one value');
  return fsum(values) / values.length;
}
