export { launch, DEFAULT_WEB_ROOT, SCUBA_BIN, type LaunchOptions, type Launched } from './launch.js';
export {
  ensureWorld,
  readLaunchState,
  updateLaunchState,
  HUMAN_ID,
  BOT_ID,
  WELCOME_KEY,
  type World,
  type LaunchState,
} from './first-run.js';
export {
  parseLaunchCli,
  parseLaunchEnv,
  modelModeOf,
  USAGE,
  type LaunchCli,
  type LaunchEnv,
  type ModelMode,
} from './launch-options.js';
export {
  superviseScuba,
  restartDelay,
  type ScubaSupervisor,
  type ScubaProcessOptions,
  type ScubaExit,
  type ScubaState,
} from './scuba-process.js';
export { acquireDataLock, DataFolderInUse, type DataLock } from './data-lock.js';
export { explainLaunchError } from './launch-errors.js';
export { createLauncherLogger } from './launcher-logger.js';
export { mintStoreToken, tokenWorks } from './store-token.js';
export { welcomeNote } from './welcome-note.js';
