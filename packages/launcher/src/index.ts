export { launch, DEFAULT_WEB_ROOT, SCUBA_BIN, type LaunchOptions, type Launched } from './launch.js';
export {
  ensureWorld,
  readLaunchState,
  HUMAN_ID,
  BOT_ID,
  WELCOME_KEY,
  type World,
  type LaunchState,
} from './first-run.js';
export { parseLaunchCli, modelModeOf, USAGE, type LaunchCli, type ModelMode } from './launch-options.js';
export { superviseScuba, type ScubaSupervisor, type ScubaProcessOptions } from './scuba-process.js';
export { welcomeNote } from './welcome-note.js';
