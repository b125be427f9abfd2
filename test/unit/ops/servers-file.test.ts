import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pidAlive, readServersFile, SERVERS_FILE, writeServersFile } from '../../../src/shared/infra/services/servers-file';

/** DATA_DIR/servers.json, which `npm start` writes for the `rating` commands (issue 38). */
describe('servers file', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'servers-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is written whole, readable by this user only, and removed by its writer', () => {
    const dataDir = path.join(dir, 'a', 'data'); // created when missing
    const remove = writeServersFile(dataDir, {
      mongoUrl: 'mongodb://127.0.0.1:1/rating',
      redisUrl: 'unix:///x/redis.sock',
      queuePrefix: 'q',
    });
    expect(readServersFile(dataDir)).toMatchObject({
      pid: process.pid,
      mongoUrl: 'mongodb://127.0.0.1:1/rating',
      redisUrl: 'unix:///x/redis.sock',
      queuePrefix: 'q',
    });
    expect(readdirSync(dataDir)).toEqual([SERVERS_FILE]); // no temporary file left
    expect(statSync(path.join(dataDir, SERVERS_FILE)).mode & 0o777).toBe(0o600);
    remove();
    expect(existsSync(path.join(dataDir, SERVERS_FILE))).toBe(false);
    remove(); // twice is harmless
  });

  it('is not removed by a writer whose file another process has replaced', () => {
    const dataDir = path.join(dir, 'b');
    const remove = writeServersFile(dataDir, { queuePrefix: 'rating' });
    const other = { pid: process.pid + 1, queuePrefix: 'rating', startedAt: new Date().toISOString() };
    writeFileSync(path.join(dataDir, SERVERS_FILE), JSON.stringify(other));
    remove();
    expect(readServersFile(dataDir)).toEqual(other);
  });

  it('reads as nothing when missing or not a record', () => {
    expect(readServersFile(path.join(dir, 'none'))).toBeNull();
    const dataDir = path.join(dir, 'c');
    for (const text of ['{not json', '{"pid":"12","queuePrefix":"rating"}', '{"pid":0,"queuePrefix":"rating"}', '{"pid":12}']) {
      const remove = writeServersFile(dataDir, { queuePrefix: 'rating' });
      writeFileSync(path.join(dataDir, SERVERS_FILE), text);
      expect(readServersFile(dataDir)).toBeNull();
      remove(); // not its file any more: left alone
    }
  });

  it('tells a live pid from a finished one', () => {
    expect(pidAlive(process.pid)).toBe(true);
    const finished = spawnSync(process.execPath, ['-e', 'process.pid']).pid;
    expect(pidAlive(finished)).toBe(false);
  });
});
