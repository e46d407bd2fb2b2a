// Web Push, for the effects pipeline: a `notify` effect becomes one PushJob per subscription that wants the
// notification (pushTargetsStatement, pushJobsOf); each job is sent from the JOBS consumer with deliverPush, which throws
// PushRetry (retry with err.delaySeconds; retryPushJob bounds the attempts) and removes dead subscriptions itself.
export { deliverPush, FAILING_SUBSCRIPTION_MS, MAX_PUSH_ATTEMPTS, pushBackoffSeconds, retryPushJob } from "./deliver";
export { pushJobsOf, pushTargetsStatement } from "./subscriptions";
export { vapidPublicKey } from "./keys";
export { PushRetry, type PushJob } from "./types";
