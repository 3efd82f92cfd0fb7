import { fnv1a32 } from '../controls/text-hash.js';

/**
 * A trial's seed from the eval's seed, the case id and the trial number: the same inputs give the
 * same seed on every machine, whatever order trials run in, so a resumed or re-ordered eval draws
 * the same trials. FNV-1a over the case id, then two rounds of a 32-bit finalizer (murmur3's fmix).
 */
export function trialSeed(evalSeed: number, caseId: string, trial: number): number {
  const hash = fmix(
    fnv1a32(caseId, (0x811c9dc5 ^ (evalSeed >>> 0)) >>> 0) ^ Math.imul(trial + 1, 0x9e3779b1),
  );
  return fmix(hash ^ (evalSeed >>> 0)) >>> 0;
}

function fmix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}
