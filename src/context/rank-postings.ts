import { bm25Idf, bm25TermScore, bm25TermScoreBound, isCommonTerm } from './bm25.js';
import type { ScoreBoard } from './score-board.js';
import { topRanked } from './top-ranked.js';
import type { TranscriptEntryKind, TranscriptSearch } from './transcript-index.js';
import { summationOrder } from './transcript-index-options.js';
import { frequencyAt, type Postings, type TranscriptPostings } from './transcript-postings.js';

interface QueryTerm {
  postings: Postings;
  idf: number;
  common: boolean;
}

/** One search's state, shared by its stages. */
interface Ranking {
  index: TranscriptPostings;
  board: ScoreBoard;
  k: number;
  averageLength: number;
  /** The query's terms that occur, in the order scores are summed in ({@link summationOrder}). */
  terms: QueryTerm[];
  /** The same, rarest first (a stable sort: equal idfs stay in query order). */
  byRarity: QueryTerm[];
  /** `unreadBound[j]`: more than terms `byRarity[j…]` together can add to any entry. */
  unreadBound: Float64Array;
  eligible: (position: number) => boolean;
  /** Higher score first, then the later step, then the later append. */
  ranksBefore: (a: number, b: number) => boolean;
}

/**
 * The positions of the `search.k` best entries for the query's distinct `terms` (in query order),
 * best first, with each one's BM25 score left in `board.values`: exactly what scoring every
 * entry holding a term would give, order and scores to the bit, from fewer postings.
 *
 * Terms are read rarest first, and reading stops when the k-th best eligible entry so far scores
 * above what every unread term together could add to an entry (a term adds less than
 * idf × (k1 + 1)): no entry outside those read can reach the top k. A query's common words
 * ("the", "error", in half the entries or more) hold most of its postings and add least, so they
 * are the ones left unread. The unread terms then only settle the entries still in the running,
 * and those are scored exactly, every term in {@link summationOrder} as FTS5 sums them.
 */
export function rankPostings(
  index: TranscriptPostings,
  queryTerms: readonly string[],
  search: TranscriptSearch,
  board: ScoreBoard,
): number[] {
  const ranking = prepare(index, queryTerms, search, board);
  const { candidates, read, postingsRead } = readRarest(ranking);
  const contenders = settleUnread(ranking, candidates, read);
  if (read === ranking.byRarity.length && contenders.length * ranking.terms.length * 16 > postingsRead)
    // Every term was read and many entries stay close to the k-th: summing again in order costs
    // less than looking each one up.
    return rescoreAll(ranking);
  for (const position of contenders) board.values[position] = exactScore(ranking, position);
  return topRanked(contenders, ranking.k, ranking.ranksBefore);
}

function prepare(
  index: TranscriptPostings,
  queryTerms: readonly string[],
  search: TranscriptSearch,
  board: ScoreBoard,
): Ranking {
  const entries = index.entries.length;
  const found: QueryTerm[] = [];
  for (const term of queryTerms) {
    const postings = index.byTerm.get(term);
    if (!postings) continue;
    const hits = postings.count;
    found.push({ postings, idf: bm25Idf(entries, hits), common: isCommonTerm(entries, hits) });
  }
  const terms = summationOrder(found, (term) => term.common);
  const byRarity = [...terms].sort((a, b) => b.idf - a.idf);
  const unreadBound = new Float64Array(byRarity.length + 1);
  for (let j = byRarity.length - 1; j >= 0; j--)
    unreadBound[j] = unreadBound[j + 1]! + bm25TermScoreBound(byRarity[j]!.idf);
  const { steps, kinds } = index;
  const { kinds: only, beforeStep } = search;
  board.reset(entries);
  return {
    index,
    board,
    k: search.k,
    averageLength: index.totalLength / entries,
    terms,
    byRarity,
    unreadBound,
    eligible: (position) =>
      (only === undefined || only.includes(kinds[position] as TranscriptEntryKind)) &&
      (beforeStep === undefined || steps[position]! < beforeStep),
    ranksBefore: (a, b) => {
      const scoreA = board.values[a]!;
      const scoreB = board.values[b]!;
      if (scoreA !== scoreB) return scoreA > scoreB;
      const stepA = steps[a]!;
      const stepB = steps[b]!;
      return stepA !== stepB ? stepA > stepB : a > b;
    },
  };
}

/** The k-th best score in `board.values` among `candidates` (there are at least k). */
function kthScore(ranking: Ranking, candidates: number[]): number {
  return ranking.board.values[topRanked(candidates, ranking.k, ranking.ranksBefore).at(-1)!]!;
}

/**
 * Reads terms' postings rarest first until no unread entry can reach the top k: the eligible
 * entries touched (with partial scores), how many terms were read, and their postings.
 */
function readRarest(ranking: Ranking): { candidates: number[]; read: number; postingsRead: number } {
  const { board, byRarity, unreadBound, k } = ranking;
  const candidates: number[] = [];
  let collected = 0;
  const collect = () => {
    for (; collected < board.count; collected++) {
      const position = board.touched[collected]!;
      if (ranking.eligible(position)) candidates.push(position);
    }
  };
  let read = 0;
  let postingsRead = 0;
  for (; read < byRarity.length; read++) {
    if (read > 0) {
      collect();
      // Margins far above rounding: partial sums run in another order than the exact ones.
      if (candidates.length >= k && kthScore(ranking, candidates) > unreadBound[read]! * (1 + 1e-9)) break;
    }
    const term = byRarity[read]!;
    accumulate(ranking, term);
    postingsRead += term.postings.count;
  }
  collect();
  return { candidates, read, postingsRead };
}

/**
 * Adds the unread terms, rarest first, to the candidates still in the running, dropping after
 * each term those that can no longer reach the k-th score: the entries that may be in the top k.
 */
function settleUnread(ranking: Ranking, candidates: number[], read: number): number[] {
  const { board, byRarity, unreadBound, k, index } = ranking;
  const keep = (list: number[], unread: number) => {
    if (list.length <= k) return list;
    const threshold = kthScore(ranking, list) * (1 - 1e-12);
    return list.filter((position) => board.values[position]! + unread >= threshold);
  };
  let contenders = keep(candidates, unreadBound[read]!);
  for (let j = read; j < byRarity.length && contenders.length > k; j++) {
    const term = byRarity[j]!;
    const postingsCount = term.postings.count;
    if (contenders.length * Math.log2(postingsCount + 1) < postingsCount) {
      for (const position of contenders) {
        const frequency = frequencyAt(term.postings, position);
        if (frequency > 0)
          board.values[position]! += bm25TermScore(
            term.idf,
            frequency,
            index.lengths[position]!,
            ranking.averageLength,
          );
      }
    } else {
      accumulate(ranking, term);
    }
    contenders = keep(contenders, unreadBound[j + 1]!);
  }
  return contenders;
}

/** Every term in summation order over a fresh board, then the top k: what FTS5 computes. */
function rescoreAll(ranking: Ranking): number[] {
  const { board } = ranking;
  board.reset(ranking.index.entries.length);
  for (const term of ranking.terms) accumulate(ranking, term);
  return topRanked(board.touchedWhere(ranking.eligible), ranking.k, ranking.ranksBefore);
}

/** Adds one term's share to each entry holding it (FTS5's sum when called in summation order). */
function accumulate(ranking: Ranking, term: QueryTerm): void {
  const { board, averageLength } = ranking;
  const { values, stamps, stamp, touched } = board;
  const { lengths } = ranking.index;
  const { data, offset, count: postingsCount } = term.postings;
  const { idf } = term;
  let count = board.count;
  const end = offset + 2 * postingsCount;
  for (let i = offset; i < end; i += 2) {
    const position = data[i]!;
    const share = bm25TermScore(idf, data[i + 1]!, lengths[position]!, averageLength);
    if (stamps[position] === stamp) {
      values[position] = values[position]! + share;
    } else {
      stamps[position] = stamp;
      values[position] = share;
      touched[count++] = position;
    }
  }
  board.count = count;
}

/** One entry's score over every query term, in summation order: FTS5's sum, bit for bit. */
function exactScore(ranking: Ranking, position: number): number {
  const length = ranking.index.lengths[position]!;
  let score = 0;
  for (const { postings, idf } of ranking.terms) {
    const frequency = frequencyAt(postings, position);
    if (frequency > 0) score += bm25TermScore(idf, frequency, length, ranking.averageLength);
  }
  return score;
}
