import { ContentId, rejectId, rejectsOfImport } from '../../../src/shared/domain/imports';

describe('upload bookkeeping', () => {
  it("an import's rejects are exactly the _id range of its own, in line order", () => {
    const range = rejectsOfImport('f0a1') as { _id: { $gt: string; $lt: string } };
    const inRange = (id: string) => id > range._id.$gt && id < range._id.$lt;
    expect([rejectId('f0a1', 2), rejectId('f0a1', 9_999_999_999)].every(inRange)).toBe(true);
    expect(
      [rejectId('f0a', 2), rejectId('f0a10', 2), rejectId('f0a1-x', 2), rejectId('f0a1_', 2), rejectId('f0a1z', 2)].some(inRange),
    ).toBe(false);
    const lines = [10, 2, 100, 9];
    expect(lines.map((l) => rejectId('f0a1', l)).sort()).toEqual([2, 9, 10, 100].map((l) => rejectId('f0a1', l)));
  });

  it('the import id hashes the format and the content, as the CLI always did', () => {
    const id = new ContentId('csv').update(Buffer.from('a,b\n')).update(Buffer.from('1,2\n')).id();
    expect(id).toMatch(/^f[0-9a-f]{24}$/);
    expect(new ContentId('csv').update(Buffer.from('a,b\n1,2\n')).id()).toBe(id);
    expect(new ContentId('jsonl').update(Buffer.from('a,b\n1,2\n')).id()).not.toBe(id);
  });
});
