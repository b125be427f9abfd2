import { readDelivery, REDELIVERED_MARK } from '../../../src/shared/infra/call-queue';

describe('a call job as the queue holds it (src/shared/infra/call-queue.ts)', () => {
  const job = { id: 'j1', name: 'begin', data: { op: 'noop', deadline: 1_795_760_583_475 } };

  it('is a first delivery without a mark, one more per mark', () => {
    expect(readDelivery(JSON.stringify(job))).toEqual({ job, delivery: 1 });
    expect(readDelivery(REDELIVERED_MARK + JSON.stringify(job))).toEqual({ job, delivery: 2 });
    expect(readDelivery(REDELIVERED_MARK.repeat(4) + JSON.stringify(job))).toEqual({ job, delivery: 5 });
  });

  it('refuses what is not a job', () => {
    expect(() => readDelivery(`${REDELIVERED_MARK}not json`)).toThrow();
  });
});
