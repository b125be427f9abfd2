import { DecisionMemory } from '../../../src/workers/transactions/decision-memory';

describe('DecisionMemory', () => {
  const done = { state: 'done' as const, made: [{ account_tag: 'a', entry_id: 'e1' }], result: { ok: true as const, reason: null } };

  it('keeps the first decision it is told for a job: a decision never changes', () => {
    const memory = new DecisionMemory();
    memory.remember('j1', done);
    memory.remember('j1', { state: 'abandoned', made: undefined, result: null });
    expect(memory.get('j1')).toEqual(done);
    expect(memory.get('j2')).toBeUndefined();
  });

  it('forgets the oldest first once full', () => {
    const memory = new DecisionMemory(3);
    for (const id of ['j1', 'j2', 'j3', 'j4']) memory.remember(id, done);
    expect(memory.get('j1')).toBeUndefined();
    expect(['j2', 'j3', 'j4'].map((id) => memory.get(id)?.state)).toEqual(['done', 'done', 'done']);
  });

  it('keeps only what the worker reads of a decision, not the whole document', () => {
    const memory = new DecisionMemory();
    memory.remember('j1', { ...done, _id: 'j1', op: 'begin', at: new Date() } as never);
    expect(Object.keys(memory.get('j1')!).sort()).toEqual(['made', 'result', 'state']);
  });
});
