/**
 * How many distinct values a set has seen, estimated in a fixed 16 KiB (HyperLogLog,
 * Flajolet et al. 2007): 2^14 registers, each the longest run of leading zeros seen among
 * the values whose hash falls in it. The relative standard error is 1.04 / √16384 ≈ 0.8 %,
 * so an estimate lies within 2 % of the truth about 99 times in 100. The values are given as
 * 53-bit hashes (series-book.ts's), 14 bits for the register and 39 for the run.
 */
const P = 14;
const M = 1 << P;
const REST_BITS = 53 - P;
const ALPHA = 0.7213 / (1 + 1.079 / M);

export class DistinctSketch {
  private constructor(private readonly registers: Uint8Array) {}

  static empty(): DistinctSketch {
    return new DistinctSketch(new Uint8Array(M));
  }

  /** A sketch from `bytes()`; null when they are not one (another size). */
  static from(bytes: Uint8Array): DistinctSketch | null {
    return bytes.length === M ? new DistinctSketch(Uint8Array.from(bytes)) : null;
  }

  /** Sees a value by its 53-bit hash; true when a register grew. */
  add(hash53: number): boolean {
    const index = hash53 % M;
    const rest = Math.floor(hash53 / M);
    // The position of the first 1 among the REST_BITS bits, from the top (REST_BITS + 1: none).
    const rank = rest === 0 ? REST_BITS + 1 : REST_BITS - Math.floor(Math.log2(rest));
    if (rank <= (this.registers[index] as number)) return false;
    this.registers[index] = rank;
    return true;
  }

  /** The distinct values seen, estimated (linear counting while registers are empty). */
  estimate(): number {
    let sum = 0;
    let zeros = 0;
    for (const r of this.registers) {
      sum += 2 ** -r;
      if (r === 0) zeros++;
    }
    const raw = (ALPHA * M * M) / sum;
    return raw <= 2.5 * M && zeros > 0 ? M * Math.log(M / zeros) : raw;
  }

  bytes(): Uint8Array {
    return this.registers;
  }
}
