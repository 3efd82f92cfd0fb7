/**
 * The `k` best of `candidates`, best first, where `before(a, b)` says `a` ranks ahead of `b` (a
 * strict order). A heap of the k best so far: O(n log k) for n candidates, the k-th best is
 * compared first, and nothing is sorted but the k kept.
 */
export function topRanked(
  candidates: Iterable<number>,
  k: number,
  before: (a: number, b: number) => boolean,
): number[] {
  // A heap with the worst kept candidate at its root.
  const heap: number[] = [];
  if (k <= 0) return heap;
  const worse = (a: number, b: number) => before(b, a);
  for (const candidate of candidates) {
    if (heap.length < k) {
      heap.push(candidate);
      siftUp(heap, heap.length - 1, worse);
    } else if (before(candidate, heap[0] as number)) {
      heap[0] = candidate;
      siftDown(heap, 0, worse);
    }
  }
  return heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}

function siftUp(heap: number[], index: number, worse: (a: number, b: number) => boolean): void {
  const item = heap[index] as number;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!worse(item, heap[parent] as number)) break;
    heap[index] = heap[parent] as number;
    index = parent;
  }
  heap[index] = item;
}

function siftDown(heap: number[], index: number, worse: (a: number, b: number) => boolean): void {
  const item = heap[index] as number;
  const length = heap.length;
  for (;;) {
    let child = 2 * index + 1;
    if (child >= length) break;
    const right = child + 1;
    if (right < length && worse(heap[right] as number, heap[child] as number)) child = right;
    if (!worse(heap[child] as number, item)) break;
    heap[index] = heap[child] as number;
    index = child;
  }
  heap[index] = item;
}
