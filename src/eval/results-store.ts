import type { TrialRecord } from './eval-types.js';

/**
 * Where an eval keeps its finished trials, so an interrupted eval resumes without running them
 * again. `evalKey` names one eval (suite and seed); `save` is called once per finished trial, and a
 * trial saved twice keeps its first record.
 */
export interface EvalResultsStore {
  load(evalKey: string): readonly TrialRecord[] | Promise<readonly TrialRecord[]>;
  save(evalKey: string, record: TrialRecord): void | Promise<void>;
}

/** Keeps results in this process: resume within one process, and tests. */
export function memoryEvalResultsStore(): EvalResultsStore & {
  readonly records: Map<string, TrialRecord[]>;
} {
  const records = new Map<string, TrialRecord[]>();
  return {
    records,
    load: (evalKey) => records.get(evalKey) ?? [],
    save(evalKey, record) {
      let list = records.get(evalKey);
      if (!list) {
        list = [];
        records.set(evalKey, list);
      }
      if (list.some((kept) => kept.caseId === record.caseId && kept.trial === record.trial)) return;
      list.push(record);
    },
  };
}
