// What the local stack (stack.ts) hands between the steps of its start: the start's settings and what has started,
// the stores and the detector, the intake. Types only, so the steps in other files (sweeps.ts) read them too.
import type { S3Client } from '@aws-sdk/client-s3';
import type { LocalMessageVisibility } from '../../lib/aws/message-visibility';
import type { MetricTotals } from '../bridge/metric-totals';
import type { LocalReconciler } from '../bridge/reconcile';
import type { BridgeStatusServer } from '../bridge/status';
import type { LocalConfig, StackSettings } from '../config';
import type { StackPorts } from '../contract';
import type { DetectorServer } from '../detector/server';
import type { DiskFaults } from '../disk-space';
import type { LocalDynamoDB } from '../dynamodb/dynamodb';
import type { ApiFunctionHandlers } from '../gateway/api-functions';
import type { HttpGateway } from '../gateway/gateway';
import type { LocalIam } from '../iam/iam';
import type { BatchHandler } from '../queue/options';
import type { LocalQueue } from '../queue/queue';
import type { LocalS3 } from '../s3/s3';
import type { Closable } from './services';
import type { StackOptions } from './types';

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
  /** Everything else the stack reads of the operator's environment, read with them (local/config.ts loadLocalConfig). */
  config: LocalConfig;
  /** The functions' roles (local/iam/iam.ts): each stand-in checks a function's request against its role. */
  iam: LocalIam;
  /** Known only later in the start: handlers are loaded once process.env holds the stack's endpoints (they read it at import). */
  late: {
    ingest?: BatchHandler;
    apiFunctions?: ApiFunctionHandlers;
    reconciler?: LocalReconciler;
  };
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
