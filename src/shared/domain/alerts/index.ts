/** What workers call to raise alerts; every function here resolves quickly and never rejects. */
export { enqueueAlert, rearmAlert, type AlertOptions } from './enqueue';
export { checkBalanceAlerts, lowBalanceThreshold, type BalanceAccount } from './balance-alerts';
export { checkSpendAlerts } from './spend-alerts';
export { refusalAlert, longCallAlert, endCallAlert, ALERTED_REFUSALS } from './call-alerts';
export type { AlertRecipient } from './recipients';
