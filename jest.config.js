/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  // On two cores jest runs the files in its own process, so a connection a failed test left open kept
  // it alive after the run (a CI stop ran into its 90-minute limit that way): exit once the run is
  // done and reported. Tests still close what they open; this only keeps a failure from hanging.
  forceExit: true,
  // Each file gets its own database and queue prefix, so files may run in parallel.
  maxWorkers: process.env.JEST_MAX_WORKERS ?? '50%',
};
