import { readFields, type FieldTable } from '../../../src/shared/domain/validation/fields';
import { validate } from '../../../src/agent/operations';
import { operationFields } from '../../../src/shared/domain/calls/operations';
import { uriUserPart } from '../../../src/shared/domain/numbers/uri';

const now = new Date('2026-11-23T00:00:00Z');

describe('the operations read their fields from their tables', () => {
  it('required, optional and defaulted fields', () => {
    const table = {
      a: { kind: 'tag', presence: 'required', description: '' },
      b: { kind: 'tag', presence: 'optional', description: '' },
      c: { kind: 'timestamp', presence: 'now', description: '' },
    } as const satisfies FieldTable;
    expect(readFields(table, { a: 'x', b: '', c: null, extra: 1 }, now)).toEqual({ a: 'x', b: null, c: now });
    expect(() => readFields(table, { a: '' }, now)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', details: { field: 'a' } }));
  });

  it('every field an operation reads is in its table, and nothing else', () => {
    const call = {
      transaction_tag: 't',
      account_tag: 'a',
      source: '1',
      destination: '39',
      timestamp_begin: '1763912345',
      timestamp_end: '1763912350',
    };
    for (const [op, table] of Object.entries(operationFields)) {
      const job = validate[op as keyof typeof validate](call, now, 0) as unknown as Record<string, unknown>;
      expect(
        Object.keys(job)
          .filter((k) => k !== 'op' && k !== 'deadline')
          .sort(),
      ).toEqual(Object.keys(table).sort());
    }
  });

  it('an account tag is taken as sent unless it is a URI, then it is its user part', () => {
    expect(validate.rollback({ transaction_tag: 't', account_tag: 'alice' }, now, 0).account_tag).toBe('alice');
    const uris = ['sip:alice@pbx.example.net', '<sip:1001@pbx>', 'tel:+3906123'];
    for (const uri of uris) {
      const user = uriUserPart(uri);
      expect({ uri, resolved: validate.end({ transaction_tag: 't', account_tag: uri }, now, 0).account_tag }).toEqual({
        uri,
        resolved: user || uri,
      });
      expect(
        validate.authorization({ account_tag: 'a', destination_account_tag: uri, destination: '39' }, now, 0).destination_account_tag,
      ).toBe(user || uri);
    }
  });
});
