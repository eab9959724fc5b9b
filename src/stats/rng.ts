import {log} from './special/log.js';

/**
 * A small, fast, seeded generator (sfc32, 32-bit words) with uniform doubles
 * of 53 random bits and normal deviates by Marsaglia's polar method (our own
 * log, IEEE sqrt), so a simulation gives the same numbers on every machine.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare: number | null = null;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = (seed >>> 0) ^ Math.floor(seed / 2 ** 32);
    for (let i = 0; i < 16; i++) this.next32();
  }

  next32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform on [0, 1) with 53 random bits. */
  random(): number {
    return ((this.next32() >>> 5) * 67108864 + (this.next32() >>> 6)) / 9007199254740992;
  }

  gauss(mean: number, sd: number): number {
    if (this.spare !== null) {
      const z = this.spare;
      this.spare = null;
      return mean + sd * z;
    }
    let u: number;
    let v: number;
    let s: number;
    do {
      u = 2 * this.random() - 1;
      v = 2 * this.random() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const f = Math.sqrt((-2 * log(s)) / s);
    this.spare = v * f;
    return mean + sd * u * f;
  }
}
