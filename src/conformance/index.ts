/** The strategy conformance suite: check that a deferral strategy keeps the rules (docs/strategies.md). */
export { type ClaimedContext, type ClaimedCpu, claimsOf, DEFAULT_CLAIMS, type StrategyClaims } from './claims.js';
export { formatConformance } from './format.js';
export {
  CHECK,
  type CheckKey,
  CONFORMANCE_CPUS,
  CONFORMANCE_DURATION_MS,
  CONFORMANCE_IRQ_RATE,
  CONFORMANCE_TRIGGER,
  type ConformanceCheck,
  type ConformanceOptions,
  type ConformanceReport,
  checkStrategies,
  checkStrategy,
  DOUBLE_HANDOFF_RETRIES,
  DRAIN_TIMEOUT_MS,
  MIGHT_SLEEP_BUG,
  STOP_GRACE_MS,
  WATCHDOG_MS,
} from './suite.js';
