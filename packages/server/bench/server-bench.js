#!/usr/bin/env node
// `npm run bench:server` (root package.json): the benchmark is written in TypeScript
// under src/bench/ and compiled by tsconfig.bench.json into dist-bench/ (never into dist).
import '../dist-bench/bench/server-bench.js';
