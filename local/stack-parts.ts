// What the local stack (stack.ts) hands between the steps of its start: the start's settings and what has started,
// the stores and the detector, the intake. Types only, so the steps in other files (stack-sweeps.ts) read them too.
import type { S3Client } from '@aws-sdk/client-s3';
import type { LocalMessageVisibility } from '../lib/aws/message-visibility';
import type { ApiFunctionHandlers } from './api-functions';
import type { LocalReconciler } from './bridge-reconcile';
import type { BridgeStatusServer } from './bridge-status';
import type { StackSettings } from './config';
import type { DiskFaults } from './disk-space';
import type { LocalDynamoDB } from './dynamodb';
import type { StackPorts } from './env';
import type { HttpGateway } from './http-gateway';
import type { LocalIam } from './iam';
import type { MetricTotals } from './metric-totals';
import type { LocalQueue } from './queue';
import type { BatchHandler } from './queue-options';
import type { LocalS3 } from './s3';
import type { Closable } from './stack-services';
import type { DetectorServer } from './detector/server';
import type { StackOptions } from './stack-types';

export interface Starting {
  opts: StackOptions;
  dataDir: string;
  ports: StackPorts;
  host: string;
  quiet: boolean;
  log: (line: string) => void;
  started: Closable[];
  previousEnv: Map<string, string | undefined>;
  /** The operator's settings, read once at the start (local/config.ts). */
  settings: StackSettings;
  /** The functions' roles (local/iam.ts): each stand-in checks a function's request against its role. */
  iam: LocalIam;
  /** Known only later in the start: handlers are loaded once process.env holds the stack's endpoints (they read it at import). */
  late: { ingest?: BatchHandler; apiFunctions?: ApiFunctionHandlers; reconciler?: LocalReconciler };
}

/** The stores and the detector. */
export interface Stores {
  disk: DiskFaults;
  s3: LocalS3;
  s3Client: S3Client;
  dynamodb: LocalDynamoDB;
  /** The queue whose invocations must be over before the stores close (set once the bridge exists). */
  inFlight: { queue?: LocalQueue };
  detector?: DetectorServer;
}

/** The intake: the queue standing in for SQS, its status server, the HTTP API. */
export interface Intake {
  metricTotals: MetricTotals;
  visibility: LocalMessageVisibility;
  bridge: LocalQueue;
  notifications: { disconnect?: () => void };
  status: BridgeStatusServer;
  gateway?: HttpGateway;
}
