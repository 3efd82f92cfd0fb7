import {
  type CheckpointCommit,
  isRevisionedStore,
  type LegacyCheckpointStore,
} from '../../checkpoint/checkpoint-store.js';
import { errorInfo } from '../../errors/error-info.js';
import { type Guarded, guard } from '../boundary.js';
import { type LoopState, toRunState } from '../loop-state.js';
import { LoopStop } from '../loop-stop.js';
import type { Outcome } from '../outcome.js';
import type { RunState } from '../run-state.js';
import { writeOf } from './checkpoint-write.js';

/**
 * This process's memory of the last revision each run reached, for runs without a revisioned store:
 * a second resume of a state this process already continued is refused. Bounded; oldest first out.
 */
const resumedHere = new Map<string, { revision: number; running: boolean }>();
const resumedHereLimit = 10_000;

/** The run remembered last: its entry is the newest already. */
let rememberedLast: string | undefined;

function remember(runId: string, revision: number, running: boolean): void {
  // A run without a store is remembered at every step: its own entry, the newest, is updated in
  // place (no entry object and no map delete and insert a step).
  const seen = runId === rememberedLast ? resumedHere.get(runId) : undefined;
  if (seen !== undefined) {
    seen.revision = revision;
    seen.running = running;
    return;
  }
  rememberedLast = runId;
  resumedHere.delete(runId);
  resumedHere.set(runId, { revision, running });
  if (resumedHere.size > resumedHereLimit) resumedHere.delete(resumedHere.keys().next().value as string);
}

/**
 * Claim the run before this segment's first model call or tool execution: the next revision,
 * compare-and-set against the store (or this process's memory without one). A resume that only
 * re-pauses runs nothing and claims nothing, so the same paused state can be looked at again; a
 * second resume that would run something ends `stale_state`. Held trace events are written once
 * the claim holds.
 */
export function ensureClaimed(state: LoopState): void | Promise<void> {
  if (state.claimed) return;
  return claim(state);
}

async function claim(state: LoopState): Promise<void> {
  const refused = await claimRun(state);
  if (refused) throw new LoopStop(refused, 'before-call');
  state.claimed = true;
  await state.trace.release();
}

async function claimRun(state: LoopState): Promise<Outcome | undefined> {
  const { setup } = state;
  const store = setup.checkpoint;
  if (!store || !isRevisionedStore(store)) {
    const seen = resumedHere.get(setup.runId);
    // Refused: a state older than this process's latest for the run, or one a live segment holds.
    // A store that does not keep `revision` hands back states this process cannot tell apart: allowed.
    if (
      setup.resumed &&
      setup.state.revision !== undefined &&
      seen !== undefined &&
      (seen.revision !== state.revision || seen.running)
    )
      return { kind: 'stale_state', revision: state.revision, currentRevision: null };
  }
  if (!store || !isRevisionedStore(store)) {
    // No compare-and-set to claim with: this process's memory is the claim; the first write is the step's.
    remember(setup.runId, state.revision, true);
    return undefined;
  }
  const refused = await commit(state, 'running', null, true);
  if (refused)
    return { kind: 'stale_state', revision: state.revision, currentRevision: refused.currentRevision };
  return undefined;
}

/** The step's checkpoint: what changed since the last one. */
export function commitStep(state: LoopState): void | Promise<void> {
  const refused = commit(state, 'running', null, false);
  if (refused instanceof Promise) return refused.then((answer) => stepCommitted(state, answer));
  stepCommitted(state, refused);
}

function stepCommitted(state: LoopState, refused: Refusal | undefined): void {
  if (refused)
    throw new LoopStop(
      { kind: 'stale_state', revision: state.revision, currentRevision: refused.currentRevision },
      'after-results',
    );
}

/** The final checkpoint; a store failing now cannot change the outcome. Returns the full state. */
export async function commitEnd(state: LoopState, outcome: Outcome): Promise<RunState> {
  // A resume that ran nothing leaves the checkpoint where it was.
  if (!state.claimed) return toRunState(state, 'ended', outcome);
  try {
    await commit(state, 'ended', outcome, false);
  } catch {
    // An ended run whose final checkpoint fails resumes into the same final step.
  }
  return toRunState(state, 'ended', outcome);
}

type Refusal = { currentRevision: number };

/**
 * One checkpoint write at the next revision; a refusal comes back as a value. Synchronous when the
 * store is, so a step with an in-memory or SQLite store pays no promise for its checkpoint.
 */
function commit(
  state: LoopState,
  status: RunState['status'],
  outcome: Outcome | null,
  claim: boolean,
): Refusal | undefined | Promise<Refusal | undefined> {
  const { setup } = state;
  const store = setup.checkpoint;
  const revision = state.revision + 1;
  if (!store || !isRevisionedStore(store)) {
    if (store) return saveWhole(state, store, status, outcome, revision);
    state.revision = revision;
    if (setup.exactlyOnce) remember(setup.runId, revision, status === 'running');
    return undefined;
  }
  let write: CheckpointCommit;
  try {
    write = writeOf(state, status, outcome, revision, claim);
  } catch (thrown) {
    // What cannot be serialized cannot be checkpointed: the store's failure, as if it had thrown.
    state.committed = undefined;
    throw new LoopStop(
      { kind: 'hard_error', source: 'checkpoint', error: errorInfo(thrown) },
      'after-results',
    );
  }
  const result = guard('checkpoint', () => store.commit(write), state.run.signal);
  return result instanceof Promise
    ? result.then((answer) => settled(state, revision, answer))
    : settled(state, revision, result);
}

/** The older contract: the whole state on every save. */
async function saveWhole(
  state: LoopState,
  store: LegacyCheckpointStore,
  status: RunState['status'],
  outcome: Outcome | null,
  revision: number,
): Promise<undefined> {
  const full = toRunState(state, status, outcome);
  full.revision = revision;
  const saved = await guard('checkpoint', () => store.save(full), state.run.signal);
  if (!saved.ok) throw LoopStop.from(saved, 'after-results');
  state.revision = revision;
  if (state.setup.exactlyOnce) remember(state.setup.runId, revision, status === 'running');
  return undefined;
}

/** The store's answer to a write: the new revision, a refusal, or the run's end. */
function settled(state: LoopState, revision: number, result: Guarded<unknown>): Refusal | undefined {
  // Whatever the store did with a write it did not take, the next one is a whole snapshot.
  if (!result.ok) {
    state.committed = undefined;
    throw LoopStop.from(result, 'after-results');
  }
  let ok: unknown;
  let current: unknown;
  try {
    const answer = result.value as { ok?: unknown; currentRevision?: unknown } | undefined;
    ok = answer?.ok;
    current = answer?.currentRevision;
  } catch (thrown) {
    state.committed = undefined;
    throw new LoopStop(
      { kind: 'hard_error', source: 'checkpoint', error: errorInfo(thrown) },
      'after-results',
    );
  }
  if (ok === true) {
    state.revision = revision;
    return undefined;
  }
  state.committed = undefined;
  if (ok !== false)
    throw new LoopStop(
      {
        kind: 'hard_error',
        source: 'checkpoint',
        error: {
          name: 'InvalidCommit',
          message: 'checkpoint.commit() must return { ok: true } or { ok: false, currentRevision }',
        },
      },
      'after-results',
    );
  return { currentRevision: typeof current === 'number' ? current : -1 };
}
