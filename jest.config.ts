import type {Config} from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    // generated at build time into dist/ (npm test builds first)
    '^\\./validators\\.generated\\.js$': '<rootDir>/dist/store/validators.generated.js',
    '^\\./result-validators\\.generated\\.js$': '<rootDir>/dist/store/result-validators.generated.js',
    '^\\./literal-scan\\.generated\\.js$': '<rootDir>/dist/canonical/literal-scan.generated.js',
    '^\\./key-order\\.generated\\.js$': '<rootDir>/dist/canonical/key-order.generated.js',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {'^.+\\.ts$': ['ts-jest', {useESM: true, tsconfig: 'tsconfig.test.json'}]},
  setupFilesAfterEnv: ['<rootDir>/test/helpers/setup.ts'],
  testTimeout: 60000,
  // Two test files at a time: the machines this runs on have two cores (jest's default would use one).
  maxWorkers: 2,
  // The longest suites start first (test/helpers/sequencer.cjs).
  testSequencer: '<rootDir>/test/helpers/sequencer.cjs',
  verbose: false,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.cjs'],
};

export default config;
