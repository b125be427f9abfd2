import { defaultJobOptions, endCallJobOptions } from '../../../src/shared/domain/queues/queues';
import { QueueNames } from '../../../src/shared/domain/queues/names';

/** The BullMQ queues' job options: what Redis keeps of finished and failed jobs stays bounded. */
describe('BullMQ job options', () => {
  it.each(Object.keys(defaultJobOptions))('%s: finished and failed jobs are removed, and few stack traces are kept', (queue) => {
    const options = defaultJobOptions[queue];
    expect(options.removeOnComplete).toBeDefined();
    expect(options.removeOnFail).toBeDefined();
    expect(options.stackTraceLimit).toBeGreaterThan(0);
    expect(options.stackTraceLimit).toBeLessThanOrEqual(10);
  });

  it('END_CALL, retried for a day, keeps the alerts queue bound on stack traces', () => {
    const merged = { ...defaultJobOptions[QueueNames.alerts], ...endCallJobOptions };
    expect(merged.attempts).toBe(8640);
    expect(merged.stackTraceLimit).toBeLessThanOrEqual(10);
  });
});
