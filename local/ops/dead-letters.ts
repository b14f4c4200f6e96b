// `npm run dead-letters` lists the running local stack's dead letters; `npm run dead-letters -- redrive` sends them
// back to the queue once their cause is fixed (as SQS's dead-letter redrive does), with the data dir's control token.
import { controlHeaders } from '../bridge/control-token';
import { bridgeUrl, dataDirFromEnv } from '../config';

async function main(): Promise<void> {
  const base = bridgeUrl();
  const redrive = process.argv.includes('redrive');
  const res = await fetch(`${base}/dead-letters${redrive ? '/redrive' : ''}`, {
    method: redrive ? 'POST' : 'GET',
    headers: redrive ? controlHeaders(dataDirFromEnv()) : {},
  }).catch((err: unknown) => {
    throw new Error(`cannot reach the local stack's bridge at ${base} (is \`npm start\` running?): ${String(err)}`);
  });
  if (!res.ok) throw new Error(`the bridge answered ${res.status}: ${await res.text()}`);
  console.log(JSON.stringify(await res.json(), null, 2));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
