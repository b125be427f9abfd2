export { metricsFor, recordRatedCall, recordCredit, recordAlertDelivery, ProcessMetrics } from './registry';
export { instrumentWorker } from './worker-metrics';
